"""Provider keys: the person's own (set, replace, remove) beside the platform's sponsored models."""
from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from api.console.pages import Console, ConsoleUser, refused
from orchestrator import keys
from orchestrator.errors import AdminError

router = APIRouter(include_in_schema=False)


def _keys(user: Console, status: int = 200, error: str | None = None, done: str | None = None) -> HTMLResponse:
    return user.page("keys.html", status=status, error=error, done=done, providers=keys.PROVIDERS,
                     held=keys.list_keys(user.core, email=user.session.email),
                     platform=keys.list_keys(user.core, platform=True))


# What the page confirms after a change, by the query the change redirects to (a reload shows it again,
# harmlessly; the provider is one of PROVIDERS or nothing is said).
_DONE = {"saved": "Saved the {} key. It is stored encrypted and never shown back.", "removed": "Removed the {} key."}


@router.get("/console/keys")
async def keys_page(user: ConsoleUser, saved: str | None = None, removed: str | None = None):
    done = next((_DONE[k].format(p) for k, p in (("saved", saved), ("removed", removed)) if p in keys.PROVIDERS),
                None)
    return _keys(user, done=done)


@router.post("/console/keys")
async def keys_set(user: ConsoleUser):
    form = await user.form()
    try:
        keys.set_key(user.core, provider=form.get("provider", ""), key=form.get("key", ""), email=user.session.email,
                     base_url=(form.get("base_url") or "").strip() or None)
    except AdminError as e:
        return refused(e, _keys, user)
    return RedirectResponse(f"/console/keys?saved={form.get('provider')}", status_code=303)


@router.post("/console/keys/{provider}/remove")
async def keys_remove(user: ConsoleUser, provider: str):
    await user.form()
    keys.remove_key(user.core, email=user.session.email, provider=provider)
    return RedirectResponse(f"/console/keys?removed={provider}", status_code=303)
