"""Account > Developer: the person's API tokens (mint, revoke) and their security events."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from api.console.pages import Console, ConsoleUser, refused
from orchestrator import auth, outbox
from orchestrator.errors import AdminError

router = APIRouter(include_in_schema=False)


def _developer(user: Console, status: int = 200, **extra) -> HTMLResponse:
    s = user.session
    return user.page("developer.html", status=status, tokens=auth.list_tokens(user.core, s.email),
                     events=list(reversed(outbox.events(user.core, s.account_id))), scopes=auth.SCOPES,
                     default_scopes=auth.DEFAULT_SCOPES, plan=user.principal.plan, **extra)


def _days_ms(text: str) -> int:
    """The Expires field holds a number of days."""
    try:
        days = float(text)
    except ValueError:
        raise AdminError(f"Expires is a number of days (or empty for never); got {text!r}") from None
    if not 0 < days <= 3650:
        raise AdminError("Expires must be between 0 and 3650 days (or empty for never)")
    return int(days * 86_400_000)


@router.get("/console/developer")
async def developer(user: ConsoleUser):
    return _developer(user)


@router.post("/console/developer/tokens")
async def mint_token(user: ConsoleUser):
    form = await user.form()
    ticked = (await user.request.form()).getlist("scopes")  # the boxes share one name; the dict keeps the last
    scopes = tuple(sc for sc in auth.SCOPES if sc in ticked)
    expires = (form.get("expires") or "").strip()
    try:
        if not scopes:
            raise AdminError("pick at least one scope")
        expires_ms = _days_ms(expires) if expires else None
        name = (form.get("name") or "").strip() or "default"
        plaintext, _ = await asyncio.to_thread(auth.mint, user.core, user.session.email, name=name, scopes=scopes,
                                               expires_in_ms=expires_ms)
    except AdminError as e:
        return refused(e, _developer, user)
    return _developer(user, new_token=plaintext)


@router.post("/console/developer/tokens/{prefix}/revoke")
async def revoke_token(user: ConsoleUser, prefix: str):
    await user.form()
    try:
        await asyncio.to_thread(auth.revoke, user.core, user.session.email, prefix)
    except AdminError as e:
        return refused(e, _developer, user)
    return RedirectResponse("/console/developer", status_code=303)
