"""What every console page shares (CONTRACT.md section 10): the signed-in person as a dependency
(`ConsoleUser`), the templates, the one way a core refusal is shown, and the builder forms' estimate
and launch. The resource modules import this module and the layers below, never each other."""
from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Callable

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from api.console import words
from orchestrator import auth, console_auth, listing, scenarios
from orchestrator.seats import keys
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError
from orchestrator import statuses
from orchestrator.runs.series import until as until_body

COOKIE = "studio_console"
STOP_POLLING = 286  # htmx stops polling on this status: the block will not change again
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.filters["when"] = lambda ms: "never" if ms is None else datetime.fromtimestamp(
    ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
TEMPLATES.env.globals["ENDED"] = statuses.TERMINAL
TEMPLATES.env.filters["count_of"] = lambda n: f"{n:,}"
TEMPLATES.env.globals["PROVIDERS"] = keys.ROUTED  # the roster pickers' choices, agent among them
words.install(TEMPLATES.env)


def usd(amount: float | None) -> str:
    """Cents where they matter; a sub-cent amount as spent (one model turn can cost a fraction of a cent)."""
    if amount is None:
        return "-"
    return f"{amount:,.2f} USD" if amount == 0 or amount >= 0.01 else f"{amount:.6f} USD"


TEMPLATES.env.filters["usd"] = usd


def seat_name(index: int, seat: dict | None = None) -> str:
    """How every console page names a seat: by the API's own 0-based index (`seat`, `?seat=N`, `roster[N]`
    in a refusal, "seat N" on the public report), then who sits there."""
    seat = seat or {}
    who = seat.get("name") or seat.get("model")
    return f"seat {index} · {who}" if who else f"seat {index}"


TEMPLATES.env.filters["seat"] = lambda seat, index=None: seat_name(seat["seat"] if index is None else index, seat)


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
    s = optional_session(request)
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
    """For a refusal with no form to go back to."""
    return user.page("error.html", status=status, error=error)


# An id that is not on the account, by the path parameter that named it: what it is and where the person's
# own are listed. (The core's message points an API client at a listing endpoint; a person gets a link.)
_LISTED = {"run_id": ("run", "/console/runs", "Your runs"), "batch_id": ("series", "/console/runs", "Your runs"),
           "scenario_id": ("saved scenario", "/console/scenarios", "Your scenarios")}


def not_found(request: Request, s: console_auth.Session | None, what: str, back: str = "/console",
              back_label: str = "Back to the dashboard") -> HTMLResponse:
    """The console's 404: a console page that says what is missing and links back."""
    return page(request, "not_found.html", s, status=404, what=what, back=back, back_label=back_label)


def dead_end(user: Console, e: DomainError) -> HTMLResponse:
    """A refusal with no form to go back to: an unknown run, series or scenario is the console's 404 page;
    any other refusal shows the service's message."""
    if e.status != 404:
        return refused(e, error_page, user)
    for param, ident in user.request.path_params.items():
        if param in _LISTED:
            noun, back, label = _LISTED[param]
            return not_found(user.request, user.session, f"There is no {noun} {ident} on this account.", back, label)
    return not_found(user.request, user.session, "This page does not exist.")


def optional_session(request: Request) -> console_auth.Session | None:
    return console_auth.session(request.app.state.core, request.cookies.get(COOKIE))


ENV_FIELDS = ("turn_timeout_ms", "seed", "spawn_seed", "actions_per_turn")  # the builders' env fields


def number(text: str) -> int | float | str:
    """A form field as the run body's number: a whole number as an integer, a decimal (a spend cap of
    0.5 USD) as a float. Text that is neither (nan and inf among it) goes on as typed, so the service
    names the field."""
    for parse in (int, float):
        try:
            value = parse(text)
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return text


def turn_timeout(form, body: dict) -> dict:
    """A builder's env fields (the turn timeout in ms, the seeds, actions per turn) as the run body's
    env: a person playing an agent seat needs a longer turn than a model. Passed on as typed when not
    a number, so the service names the field."""
    env = {}
    for field in ENV_FIELDS:
        value = (form.get(field) or "").strip()
        if value:
            env[field] = int(value) if value.isdigit() else value
    if env:
        body["env"] = env
    return body


def until(form) -> dict:
    """A builder's target for a series (CONTRACT.md section 17) as the run body's `until`; none when its
    half-width is left empty."""
    half_width = (form.get("until_half_width") or "").strip()
    if not half_width:
        return {}
    return {"until": {"half_width": number(half_width),
                      "metric": form.get("until_metric") or until_body.DEFAULT_METRIC}}


async def estimate(user: Console, service: Callable, body_of: Callable[[dict], dict],
                   score: str = "fitness index") -> HTMLResponse:
    """The estimate fragment of a builder form: `service` is the service's estimate function, `body_of`
    turns the form into its body, `score` names the score whose precision it states (an arena game's
    is its moves' accuracy). A refusal is the fragment's answer, so it comes back as a 200."""
    form = await user.form()
    try:  # in a thread, as REST's estimate: admission may ask the router for the key's balance
        est = await asyncio.to_thread(service, user.core, user.principal, body_of(form))
    except DomainError as e:
        return user.page("estimate.html", error_code=e.code, message=words.form_error(e.message))
    return user.page("estimate.html", est=est["batch"], score=score)


async def launch(user: Console, service: Callable, body_of: Callable[[dict], dict],
                 builder: Callable[..., Response]) -> Response:
    """Launch from a builder form and open the run's page (a series': the series' page); a refusal re-renders the form (`builder`) with
    the service's message and what the person typed."""
    form = await user.form()
    try:
        out = await asyncio.to_thread(service, user.core, user.principal, body_of(form))
    except DomainError as e:
        return builder(user, status=e.status, error=words.form_error(e.message), form=form)
    if out.get("batch"):  # a series: its page, where every trial and the intervals are
        return RedirectResponse(f"/console/batches/{out['batch']['batch_id']}", status_code=303)
    return RedirectResponse(f"/console/runs/{out['run']['run_id']}", status_code=303)


async def then_end(events):
    """A live block's stream, then an `end` event: the page (sse-close="end") closes its EventSource on
    it, where a stream that just stopped would read as a dropped connection (an error, and a reconnect)."""
    async for event in events:
        yield event
    yield "event: end\ndata: \n\n"


def scenario_choices(user: Console) -> list[dict]:
    """The scenarios a run of this account can play (the library's and its own): id, name, season."""
    p = user.principal
    own = scenarios.list_scenarios(user.core, p)
    return [{"id": s["id"], "name": s.get("title", s["id"]), "season_ticks": s["season_ticks"]}
            for s in listing.library_scenarios(p)["scenarios"]] + \
        [{"id": s["id"], "name": s["name"], "season_ticks": s["season_ticks"]} for s in own.get("scenarios", [])]


def scenario_names(user: Console) -> dict[str, str]:
    return {c["id"]: c["name"] for c in scenario_choices(user)}


_TRIAL = re.compile(r" \((?:control, )?trial \d+/\d+\)$")


def series_title(run_name: str | None, scenario_id: str | None, names: dict[str, str]) -> str:
    """A series as a person names it: the name sent at launch (each trial carries it with its number), or,
    where none was sent, its scenario's name (the generated name starts with the scenario's id)."""
    name = _TRIAL.sub("", run_name or "")
    scenario = names.get(scenario_id or "", scenario_id or "")
    if not name or (scenario_id and re.fullmatch(re.escape(scenario_id) + r" x\d+ [0-9a-f]+", name)):
        return scenario or "unnamed"
    return name
