"""The web console's pages (CONTRACT.md section 10). Each handler calls the same service functions as
REST; a DomainError is shown on the page with SPEC.md's message instead of the JSON envelope."""
from __future__ import annotations

import asyncio
import json
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates

from api.errors import client_address
from orchestrator import auth, console_auth, keys, outbox
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError
from orchestrator.runs import service as runs_service
from orchestrator.runs.usage import usage as usage_of

COOKIE = "studio_console"
LOGIN_CSRF_COOKIE = "studio_login_csrf"
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.filters["when"] = lambda ms: "never" if ms is None else datetime.fromtimestamp(
    ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
router = APIRouter(include_in_schema=False)


class _SignIn(Exception):
    """No live session: send the browser to the sign-in page."""


def _core(request: Request) -> Core:
    return request.app.state.core


def _session(request: Request) -> console_auth.Session:
    s = console_auth.session(_core(request), request.cookies.get(COOKIE))
    if s is None:
        raise _SignIn()
    return s


def _page(request: Request, name: str, s: console_auth.Session | None, status: int = 200, **ctx: Any) -> HTMLResponse:
    return TEMPLATES.TemplateResponse(request, name, {"s": s, **ctx}, status_code=status)


async def _form(request: Request, s: console_auth.Session) -> dict:
    form = dict(await request.form())
    console_auth.check_csrf(s, form.get("csrf"))
    return form


def install(app) -> None:
    @app.exception_handler(_SignIn)
    async def _to_sign_in(request: Request, exc: _SignIn):
        return RedirectResponse("/console/login", status_code=303)
    from api.console import arena, transcript  # they borrow this module's helpers
    app.include_router(transcript.router)  # before /console/runs/{run_id}
    app.include_router(arena.router)
    app.include_router(router)


# --- sign-in -----------------------------------------------------------------------------------

@router.get("/")
async def root(request: Request):
    return RedirectResponse("/console", status_code=303)


@router.get("/console/login")
async def login_page(request: Request, error: str | None = None, status: int = 200):
    token = secrets.token_urlsafe(24)
    resp = _page(request, "login.html", None, status=status, csrf=token, error=error)
    resp.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, samesite="lax", secure=request.url.scheme == "https")
    return resp


def _signed_in(request: Request, sid: str) -> Response:
    resp = RedirectResponse("/console", status_code=303)
    resp.set_cookie(COOKIE, sid, httponly=True, samesite="lax", secure=request.url.scheme == "https",
                    path="/console")
    resp.delete_cookie(LOGIN_CSRF_COOKIE)
    return resp


@router.post("/console/login")
async def login_submit(request: Request):
    form = dict(await request.form())
    sent, expected = form.get("csrf") or "", request.cookies.get(LOGIN_CSRF_COOKIE) or ""
    if not expected or not secrets.compare_digest(sent, expected):
        return await login_page(request, error=DomainError("csrf_failed", "this form is stale or came from another "
                                "site; reload the page and try again").message, status=403)
    try:
        sid = await asyncio.to_thread(console_auth.sign_in_password, _core(request), form.get("email", ""),
                                      form.get("password", ""), client_address(request) or "?")
    except DomainError as e:
        return await login_page(request, error=e.message, status=e.status)
    return _signed_in(request, sid)


@router.get("/console/login/link/{secret}")
async def login_link(request: Request, secret: str):
    try:
        sid = console_auth.redeem_link(_core(request), secret, client_address(request) or "?")
    except DomainError as e:
        return await login_page(request, error=e.message, status=e.status)
    return _signed_in(request, sid)


@router.post("/console/logout")
async def logout(request: Request):
    s = _session(request)
    form = await _form(request, s)
    console_auth.sign_out(_core(request), s, everywhere=form.get("everywhere") == "1")
    resp = RedirectResponse("/console/login", status_code=303)
    resp.delete_cookie(COOKIE, path="/console")
    return resp


# --- pages -------------------------------------------------------------------------------------

def _runs(core: Core, p: auth.Principal, limit: int = 20) -> list[dict]:
    return runs_service.list_runs(core, p, limit=str(limit))["runs"]


@router.get("/console")
async def dashboard(request: Request):
    s = _session(request)
    core = _core(request)
    p = console_auth.principal(core, s)
    use = usage_of(core, p)
    return _page(request, "dashboard.html", s, runs=_runs(core, p, 10), allowances=use["allowances"],
                 plan=p.plan)


def _developer(request: Request, s, status: int = 200, **extra):
    core = _core(request)
    p = console_auth.principal(core, s)
    return _page(request, "developer.html", s, status=status, tokens=auth.list_tokens(core, s.email),
                 events=list(reversed(outbox.events(core, s.account_id))), scopes=auth.SCOPES,
                 default_scopes=auth.DEFAULT_SCOPES, plan=p.plan, **extra)


@router.get("/console/developer")
async def developer(request: Request):
    return _developer(request, _session(request))


@router.post("/console/developer/tokens")
async def mint_token(request: Request):
    s = _session(request)
    form = await request.form()
    console_auth.check_csrf(s, form.get("csrf"))
    scopes = tuple(sc for sc in auth.SCOPES if sc in form.getlist("scopes"))
    expires = (form.get("expires") or "").strip()
    try:
        if not scopes:
            raise AdminError("pick at least one scope")
        expires_ms = _days_ms(expires) if expires else None
        name = (form.get("name") or "").strip() or "default"
        plaintext, _ = await asyncio.to_thread(auth.mint, _core(request), s.email, name=name, scopes=scopes,
                                               expires_in_ms=expires_ms)
    except AdminError as e:
        return _developer(request, s, status=400, error=str(e))
    return _developer(request, s, new_token=plaintext)


def _days_ms(text: str) -> int:
    """The Expires field holds a number of days."""
    try:
        days = float(text)
    except ValueError:
        raise AdminError(f"Expires is a number of days (or empty for never); got {text!r}") from None
    if not 0 < days <= 3650:
        raise AdminError("Expires must be between 0 and 3650 days (or empty for never)")
    return int(days * 86_400_000)


@router.post("/console/developer/tokens/{prefix}/revoke")
async def revoke_token(request: Request, prefix: str):
    s = _session(request)
    await _form(request, s)
    try:
        await asyncio.to_thread(auth.revoke, _core(request), s.email, prefix)
    except AdminError as e:
        return _developer(request, s, status=400, error=str(e))
    return RedirectResponse("/console/developer", status_code=303)


@router.get("/console/keys")
async def keys_page(request: Request, status: int = 200, error: str | None = None):
    s = _session(request)
    core = _core(request)
    return _page(request, "keys.html", s, status=status, error=error, providers=keys.PROVIDERS,
                 held=keys.list_keys(core, email=s.email), platform=keys.list_keys(core, platform=True))


@router.post("/console/keys")
async def keys_set(request: Request):
    s = _session(request)
    form = await _form(request, s)
    core, provider = _core(request), form.get("provider", "")
    try:  # in a thread: the base URL's host is resolved (CONTRACT.md section 15), then the key is checked
        await asyncio.to_thread(keys.set_own_key, core, provider=provider, key=form.get("key", ""), email=s.email,
                                base_url=(form.get("base_url") or "").strip() or None)
    except AdminError as e:
        return await keys_page(request, status=400, error=str(e))
    except DomainError as e:
        return await keys_page(request, status=e.status, error=f"{e.code}: {e.message}")
    await asyncio.to_thread(keys.check_key, core, s.account_id, provider)
    return RedirectResponse("/console/keys", status_code=303)


@router.post("/console/keys/{provider}/remove")
async def keys_remove(request: Request, provider: str):
    s = _session(request)
    await _form(request, s)
    keys.remove_key(_core(request), email=s.email, provider=provider)
    return RedirectResponse("/console/keys", status_code=303)


@router.get("/console/runs")
async def runs_page(request: Request):
    s = _session(request)
    core = _core(request)
    runs = _runs(core, console_auth.principal(core, s), 100)
    if request.headers.get("hx-request"):
        return _page(request, "runs_rows.html", s, runs=runs)
    return _page(request, "runs.html", s, runs=runs)


# before /console/runs/{run_id}: the first matching route wins
@router.get("/console/runs/new")
async def run_builder(request: Request):
    s = _session(request)
    core = _core(request)
    return _builder(request, s, core)


def _run(request: Request, s, run_id: str) -> dict:
    core = _core(request)
    return runs_service.get_run(core, console_auth.principal(core, s), run_id)


@router.get("/console/runs/{run_id}")
async def run_page(request: Request, run_id: str):
    s = _session(request)
    try:
        got = _run(request, s, run_id)
    except DomainError as e:
        return _page(request, "error.html", s, status=e.status, error=e.message)
    tpl = "run_live.html" if request.headers.get("hx-request") else "run.html"
    return _page(request, tpl, s, run=got["run"], results=got["results"])


@router.get("/console/runs/{run_id}/events")
async def run_events(request: Request, run_id: str):
    """Server-sent events: the run's live block each time its tick or status changes; the page polls
    the same fragment when EventSource is not available."""
    s = _session(request)
    _run(request, s, run_id)  # 404 before the stream opens

    async def stream():
        last = None
        while not await request.is_disconnected():
            got = _run(request, s, run_id)
            run = got["run"]
            key = json.dumps(run, sort_keys=True, default=str)
            if key != last:
                last = key
                html = TEMPLATES.get_template("run_live.html").render(run=run, results=got["results"], s=s)
                tick = (run["live"] or {}).get("tick", 0)
                data = "".join(f"data: {line}\n" for line in html.splitlines())
                yield f"id: {tick}\nevent: run\n{data}\n"
            if run["status"] in ("finished", "failed", "cancelled"):
                return
            await asyncio.sleep(0.5)
    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/console/runs/{run_id}/cancel")
async def run_cancel(request: Request, run_id: str):
    s = _session(request)
    await _form(request, s)
    core = _core(request)
    try:
        await asyncio.to_thread(runs_service.cancel, core, console_auth.principal(core, s), run_id)
    except DomainError as e:
        return _page(request, "error.html", s, status=e.status, error=e.message)
    return RedirectResponse(f"/console/runs/{run_id}", status_code=303)


@router.get("/console/usage")
async def usage_page(request: Request):
    s = _session(request)
    core = _core(request)
    return _page(request, "usage.html", s, usage=usage_of(core, console_auth.principal(core, s)))



# --- run builder and scenarios -------------------------------------------------------------------

SEAT_ROWS = 2  # rows shown on a new builder; the person adds more up to the plan's seats
_SEAT_FIELD = re.compile(r"seat(\d{1,3})_model")


def _seat_indexes(form) -> list[int]:
    return sorted(int(m.group(1)) for m in map(_SEAT_FIELD.fullmatch, form.keys()) if m)


def _builder(request: Request, s, core: Core, status: int = 200, form=None, **ctx):
    p = console_auth.principal(core, s)
    rows = range(max(len(_seat_indexes(form)), 1)) if form else range(SEAT_ROWS)
    return _page(request, "run_new.html", s, status=status, scenarios=_scenario_choices(core, p), seat_rows=rows,
                 max_seats=p.plan["seats_per_run"], form=form, **ctx)


def _run_body(form) -> dict:
    """The builder's fields -> the REST body; empty fields are left out so the service's defaults apply.
    Numbers are passed on as typed when they parse, else as text so the service names the field."""
    def num(text: str):
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return text
    body: dict = {"scenario_id": form.get("scenario_id", "")}
    for field in ("name", "season_ticks", "trials", "seed_mode", "max_spend_usd"):
        value = (form.get(field) or "").strip()
        if value:
            body[field] = value if field in ("name", "seed_mode") else num(value)
    roster = []
    for k in _seat_indexes(form):
        model = (form.get(f"seat{k}_model") or "").strip()
        if not model:
            continue
        seat: dict = {"model": model}
        for field in ("provider", "instructions", "format", "reasoning"):
            value = (form.get(f"seat{k}_{field}") or "").strip()
            if value:
                seat[field] = value
        temperature = (form.get(f"seat{k}_temperature") or "").strip()
        if temperature:
            seat["temperature"] = num(temperature)
        skills = [x.strip() for x in (form.get(f"seat{k}_skills") or "").split(",") if x.strip()]
        if skills:
            seat["skills"] = skills
        roster.append(seat)
    body["roster"] = roster
    return body


def _scenario_choices(core: Core, p: auth.Principal) -> list[dict]:
    from orchestrator import listing, scenarios
    own = scenarios.list_scenarios(core, p)
    return [{"id": s["id"], "name": s.get("title", s["id"])} for s in listing.library_scenarios(p)["scenarios"]] + \
        [{"id": s["id"], "name": s["name"]} for s in own.get("scenarios", [])]


async def _estimate(request: Request, estimate, body_of) -> HTMLResponse:
    """The estimate fragment of a builder form: `estimate` is the service's function, `body_of` turns
    the form into its body."""
    s = _session(request)
    form = await _form(request, s)
    core = _core(request)
    try:
        est = estimate(core, console_auth.principal(core, s), body_of(form))
    except DomainError as e:
        return _page(request, "estimate.html", s, error_code=e.code, message=e.message)
    return _page(request, "estimate.html", s, est=est["batch"])


async def _launch(request: Request, launch, body_of, refused):
    """Launch from a builder form and open the run's page; a refusal re-renders the form with the
    service's message (`refused(request, s, core, status, message, form)`)."""
    s = _session(request)
    form = await _form(request, s)
    core = _core(request)
    try:
        out = await asyncio.to_thread(launch, core, console_auth.principal(core, s), body_of(form))
    except DomainError as e:
        return refused(request, s, core, e.status, e.message, form)
    return RedirectResponse(f"/console/runs/{out['run']['run_id']}", status_code=303)


@router.post("/console/runs/estimate")
async def run_estimate(request: Request):
    return await _estimate(request, runs_service.estimate, _run_body)


@router.post("/console/runs/new")
async def run_launch(request: Request):
    return await _launch(request, runs_service.launch, _run_body,
                         lambda rq, s, core, status, message, form: _builder(rq, s, core, status=status,
                                                                             error=message, form=form))


@router.get("/console/scenarios")
async def scenarios_page(request: Request):
    from orchestrator import scenarios
    s = _session(request)
    core = _core(request)
    return _page(request, "scenarios.html", s, own=scenarios.list_scenarios(core, console_auth.principal(core, s)))


def _scenario_body(form) -> dict:
    """Name, description, season_ticks and the env as JSON text, exactly as the API takes them."""
    body: dict = {"name": form.get("name", ""), "description": form.get("description", "")}
    ticks = (form.get("season_ticks") or "").strip()
    if ticks:
        try:
            body["season_ticks"] = int(ticks)
        except ValueError:
            body["season_ticks"] = ticks
    env = (form.get("env") or "").strip()
    if env:
        try:
            body["env"] = json.loads(env)
        except ValueError as e:
            raise DomainError("bad_env", f"env is not JSON ({e}); write a JSON object such as "
                              '{"map_size": 48}') from None
    return body


def _field_of(e: DomainError) -> str:
    """Which builder field a refusal is about, so its message shows beside that field."""
    field = {"bad_season_ticks": "season_ticks", "bad_env": "env"}.get(e.code)
    if field is None:
        field = "description" if "description" in e.message.split(":")[0] else "name"
    return field


def _scenarios(request: Request, s, core: Core, status: int = 200, **ctx):
    from orchestrator import scenarios
    return _page(request, "scenarios.html", s, status=status,
                 own=scenarios.list_scenarios(core, console_auth.principal(core, s)), **ctx)


@router.post("/console/scenarios/validate")
async def scenario_validate(request: Request):
    """The builder's live check: the API's validate function, answered as a fragment per keystroke pause."""
    from orchestrator import scenarios
    s = _session(request)
    form = await _form(request, s)
    core = _core(request)
    try:
        got = scenarios.validate(core, console_auth.principal(core, s), _scenario_body(form))
    except DomainError as e:
        return _page(request, "scenario_check.html", s, field=_field_of(e), message=e.message)
    return _page(request, "scenario_check.html", s, got=got)


@router.post("/console/scenarios")
async def scenario_save(request: Request):
    from orchestrator import scenarios
    s = _session(request)
    form = await _form(request, s)
    core = _core(request)
    p = console_auth.principal(core, s)
    try:
        scenarios.create(core, p, _scenario_body(form))
    except DomainError as e:
        return _scenarios(request, s, core, status=e.status, error=e.message, form=form, field=_field_of(e),
                          field_error=e.message)
    return RedirectResponse("/console/scenarios", status_code=303)


@router.get("/console/scenarios/{scenario_id}/edit")
async def scenario_edit(request: Request, scenario_id: str):
    from orchestrator import scenarios
    s = _session(request)
    core = _core(request)
    try:
        sc = scenarios.get(core, console_auth.principal(core, s), scenario_id)["scenario"]
    except DomainError as e:
        return _page(request, "error.html", s, status=e.status, error=e.message)
    form = {"name": sc["name"], "description": sc["description"], "season_ticks": str(sc["season_ticks"]),
            "env": json.dumps(sc["env"], indent=2) if sc["env"] else ""}
    return _scenarios(request, s, core, form=form, editing=sc)


@router.post("/console/scenarios/{scenario_id}")
async def scenario_update(request: Request, scenario_id: str):
    """The API's PUT with every field of the form: an emptied env clears it rather than keeping it."""
    from orchestrator import scenarios
    s = _session(request)
    form = await _form(request, s)
    core = _core(request)
    p = console_auth.principal(core, s)
    try:
        current = scenarios.get(core, p, scenario_id)["scenario"]
        body = _scenario_body(form)
        body.setdefault("env", {})
        scenarios.update(core, p, scenario_id, body)
    except DomainError as e:
        if e.code == "unknown_scenario":
            return _page(request, "error.html", s, status=e.status, error=e.message)
        return _scenarios(request, s, core, status=e.status, error=e.message, form=form, editing=current,
                          field=_field_of(e), field_error=e.message)
    return RedirectResponse("/console/scenarios", status_code=303)


@router.post("/console/scenarios/{scenario_id}/delete")
async def scenario_delete(request: Request, scenario_id: str):
    from orchestrator import scenarios
    s = _session(request)
    await _form(request, s)
    core = _core(request)
    try:
        scenarios.delete(core, console_auth.principal(core, s), scenario_id)
    except DomainError as e:
        return _page(request, "error.html", s, status=e.status, error=e.message)
    return RedirectResponse("/console/scenarios", status_code=303)


@router.get("/console/batches/{batch_id}")
async def batch_page(request: Request, batch_id: str):
    """A series: status, its runs, and each seat's mean fitness with its 95% interval, plotted by the
    analytics package's own forest plot (SVG, inline)."""
    from orchestrator.runs.batches import get_batch
    s = _session(request)
    core = _core(request)
    try:
        batch = get_batch(core, console_auth.principal(core, s), batch_id)["batch"]
    except DomainError as e:
        return _page(request, "error.html", s, status=e.status, error=e.message)
    svg = None
    summary = batch["summary"]
    if summary and summary.get("seats"):
        svg = await asyncio.to_thread(_forest_svg, summary)
    return _page(request, "batch.html", s, batch=batch, svg=svg)


def _forest_svg(summary: dict) -> str:
    import io

    from analytics.figures import seat_forest
    fig = seat_forest(summary)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


@router.get("/console/skills")
async def skills_page(request: Request, status: int = 200, error: str | None = None, form: dict | None = None):
    from orchestrator import skills
    s = _session(request)
    core = _core(request)
    return _page(request, "skills.html", s, status=status, error=error, form=form,
                 listing=skills.list_skills(core, console_auth.principal(core, s)))


@router.post("/console/skills")
async def skill_save(request: Request):
    """Create, or replace the text of one of yours when `skill_id` is sent: the API's create/update."""
    from orchestrator import skills
    s = _session(request)
    form = await _form(request, s)
    core = _core(request)
    p = console_auth.principal(core, s)
    try:
        if form.get("skill_id"):
            skills.update(core, p, form["skill_id"], {"name": form.get("name", ""), "text": form.get("text", "")})
        else:
            skills.create(core, p, {"name": form.get("name", ""), "text": form.get("text", "")})
    except DomainError as e:
        return await skills_page(request, status=e.status, error=e.message, form=form)
    return RedirectResponse("/console/skills", status_code=303)


@router.post("/console/skills/{skill_id}/delete")
async def skill_delete(request: Request, skill_id: str):
    from orchestrator import skills
    s = _session(request)
    await _form(request, s)
    core = _core(request)
    try:
        skills.delete(core, console_auth.principal(core, s), skill_id)
    except DomainError as e:
        return await skills_page(request, status=e.status, error=e.message)
    return RedirectResponse("/console/skills", status_code=303)
