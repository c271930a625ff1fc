"""What every console page shares (CONTRACT.md section 10): the signed-in person as a dependency
(`ConsoleUser`), the templates, the one way a core refusal is shown, and the builder forms' estimate
and launch. The resource modules import this module and the layers below, never each other."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Callable

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from orchestrator import auth, console_auth
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError

COOKIE = "studio_console"
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.filters["when"] = lambda ms: "never" if ms is None else datetime.fromtimestamp(
    ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class SignIn(Exception):
    """No live session: send the browser to the sign-in page."""


async def to_sign_in(request: Request, exc: SignIn) -> Response:
    return RedirectResponse("/console/login", status_code=303)


def page(request: Request, name: str, s: console_auth.Session | None, status: int = 200, **ctx: Any) -> HTMLResponse:
    return TEMPLATES.TemplateResponse(request, name, {"s": s, **ctx}, status_code=status)


@dataclass(frozen=True)
class Console:
    """A request from a signed-in person: the session, and the principal it acts as on the core."""
    request: Request
    core: Core
    session: console_auth.Session
    principal: auth.Principal

    def page(self, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return page(self.request, name, self.session, status=status, **ctx)

    async def form(self) -> dict:
        """The posted fields, once the form's CSRF token matches the session's."""
        form = await self.request.form()
        console_auth.check_csrf(self.session, form.get("csrf"))
        return dict(form)


async def console_user(request: Request) -> Console:
    core: Core = request.app.state.core
    s = console_auth.session(core, request.cookies.get(COOKIE))
    if s is None:
        raise SignIn()
    return Console(request, core, s, console_auth.principal(core, s))


ConsoleUser = Annotated[Console, Depends(console_user)]


def refused(e: DomainError | AdminError, render: Callable[..., Response], *args: Any, **ctx: Any) -> Response:
    """A core refusal, shown: `render(*args, status=, error=, **ctx)` re-renders the page the person was on
    with the message. An operator's AdminError (tokens, keys) is a 400."""
    status, message = (e.status, e.message) if isinstance(e, DomainError) else (400, str(e))
    return render(*args, status=status, error=message, **ctx)


def error_page(user: Console, status: int, error: str) -> HTMLResponse:
    """For a refusal with no form to go back to: an unknown run, scenario or series."""
    return user.page("error.html", status=status, error=error)


async def estimate(user: Console, service: Callable, body_of: Callable[[dict], dict]) -> HTMLResponse:
    """The estimate fragment of a builder form: `service` is the service's estimate function, `body_of`
    turns the form into its body. A refusal is the fragment's answer, so it comes back as a 200."""
    form = await user.form()
    try:
        est = service(user.core, user.principal, body_of(form))
    except DomainError as e:
        return user.page("estimate.html", error_code=e.code, message=e.message)
    return user.page("estimate.html", est=est["batch"])


async def launch(user: Console, service: Callable, body_of: Callable[[dict], dict],
                 builder: Callable[..., Response]) -> Response:
    """Launch from a builder form and open the run's page; a refusal re-renders the form (`builder`) with
    the service's message and what the person typed."""
    form = await user.form()
    try:
        out = await asyncio.to_thread(service, user.core, user.principal, body_of(form))
    except DomainError as e:
        return refused(e, builder, user, form=form)
    return RedirectResponse(f"/console/runs/{out['run']['run_id']}", status_code=303)
