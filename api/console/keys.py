"""Provider keys: the person's own (set, replace, remove) beside the platform's sponsored models."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from api.console.pages import Console, ConsoleUser, refused
from orchestrator.seats import keys
from orchestrator.errors import AdminError, DomainError

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
    provider = form.get("provider", "")
    try:  # in a thread: the base URL's host is resolved (CONTRACT.md section 15), then the key is checked
        await asyncio.to_thread(keys.set_own_key, user.core, provider=provider, key=form.get("key", ""),
                                email=user.session.email, base_url=(form.get("base_url") or "").strip() or None)
    except AdminError as e:
        return refused(e, _keys, user)
    except DomainError as e:  # the code too: bad_base_url names the rule the person must follow
        return _keys(user, status=e.status, error=f"{e.code}: {e.message}")
    await asyncio.to_thread(keys.check_key, user.core, user.session.account_id, provider,
                            (form.get("check_model") or "").strip() or None)
    return RedirectResponse(f"/console/keys?saved={provider}", status_code=303)


@router.post("/console/keys/{provider}/remove")
async def keys_remove(user: ConsoleUser, provider: str):
    await user.form()
    await asyncio.to_thread(keys.remove_key, user.core, email=user.session.email, provider=provider)
    return RedirectResponse(f"/console/keys?removed={provider}", status_code=303)
