"""A series' page: status, runs per state, each seat's mean with its 95% interval (the analytics
package's forest plot, inline SVG), a target's confidence sequences and stopping state (CONTRACT.md
section 17), and for a forked series what it is (CONTRACT.md section 16): which run it forks at which
tick, each trial's arm and continuation seed, and with a control arm the effect fork - control at the
top, plotted. Every figure is the batch view's (`follow_series`, the REST read); the page follows the
series live."""
from __future__ import annotations

import asyncio
import functools
import io
import json
import threading

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from api.console.pages import (STOP_POLLING, TEMPLATES, Console, ConsoleUser, dead_end, scenario_names,
                               series_title, then_end)
from api.console.words import metric_name
from engine.arena.games import GAMES
from orchestrator.errors import DomainError
from orchestrator.runs import service as runs_service
from orchestrator.runs.series import read as series
from orchestrator.runs.series import stopping, summary_text
from orchestrator.statuses import QUEUED, RUNNING

router = APIRouter(include_in_schema=False)
FOLLOWED = (QUEUED, RUNNING)  # a series' statuses while a run of it is left to play
SSE_WAIT_MS = 5_000  # a stream looks whether its page went away at least this often
MAX_TRIAL_ROWS = 100  # runs listed on a series' page; a bigger series is read through the API


@router.get("/console/batches/{batch_id}")
async def series_page(user: ConsoleUser, batch_id: str):
    try:
        got = await series.follow_series(user.core, user.principal, batch_id)
    except DomainError as e:
        return dead_end(user, e)
    got = got["batch"]
    ctx = await _series_context(user, got)
    if user.request.headers.get("hx-request"):  # the live block, polled
        return user.page("series_live.html", status=200 if got["status"] in FOLLOWED else STOP_POLLING, **ctx)
    return user.page("series.html", **ctx)


@router.get("/console/batches/{batch_id}/events")
async def series_events(user: ConsoleUser, batch_id: str):
    """Server-sent events: the series' live block each time one of its runs changes status, through the
    batch read's long-poll (one wait for the whole series); the page polls the block when EventSource
    is not available."""
    request, s = user.request, user.session
    state = series.read_state(user.core, user.principal, batch_id)  # 404 before the stream opens

    async def stream():
        nonlocal state
        while True:
            got = series.view(state, await series.summary_of(user.core, state))["batch"]
            html = TEMPLATES.get_template("series_live.html").render(**await _series_context(user, got), s=s)
            yield "event: series\n" + "".join(f"data: {line}\n" for line in html.splitlines()) + "\n"
            while True:
                if state.ended or await request.is_disconnected():
                    return
                before = state.key
                state = await series.changed(user.core, state, SSE_WAIT_MS)
                if state.key != before:
                    break
    return StreamingResponse(then_end(stream()), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _listed(got: dict) -> list[tuple[int, str]]:
    """(trial number, run id) of the runs the page lists. A series with a control arm holds the fork
    arm's N runs, then the control arm's N: listed as pairs, trial j's fork run beside its control."""
    ids, n = got["run_ids"], got["trials"]
    if "effect" in got and len(ids) == 2 * n:
        pairs = min(n, MAX_TRIAL_ROWS // 2)
        return [(j + 1, ids[j + arm * n]) for j in range(pairs) for arm in (0, 1)]
    return [(k + 1, r) for k, r in enumerate(ids[:MAX_TRIAL_ROWS])]


async def _series_context(user: Console, got: dict) -> dict:
    """What the series' page shows: its name (the name sent at launch, which each trial's carries with
    its number), each trial's run and results (seeds, status, every seat's scores), the plots, and what
    a fork series forks."""
    listed = _listed(got)

    def read() -> list[dict]:
        return [{**runs_service.get_run(user.core, user.principal, r), "number": k} for k, r in listed]
    trials = await asyncio.to_thread(read)
    scenario_id = trials[0]["run"]["scenario_id"] if trials else ""
    names = await asyncio.to_thread(scenario_names, user)
    name = series_title(trials[0]["run"]["name"], scenario_id, names) if trials else got["batch_id"]
    fork = await asyncio.to_thread(_fork_of, user, got, trials)
    return {"series": got, "svg": await _plot(got["summary"]), "seq_svg": await _sequence_plot(user, got),
            "effect_svg": await _effect_plot(got.get("effect"), fork), "fork": fork,
            "trials": trials, "series_name": name, "game": scenario_id in GAMES, "scenario_id": scenario_id,
            "scenario_name": names.get(scenario_id),
            "more_trials": max(0, len(got["run_ids"]) - len(listed))}


def _fork_of(user: Console, got: dict, trials: list[dict]) -> dict | None:
    """A fork series' header: the run it forks (its id and name), the tick, whether it has a control
    arm, and each changed seat as the original played it and as the fork arm plays it. None for a
    series that forks nothing."""
    first = trials[0]["run"] if trials else None
    at = first and first["effective"].get("fork")
    if not at:
        return None
    try:
        original = runs_service.get_run(user.core, user.principal, at["run_id"])["run"]
    except DomainError:  # the series outlives nothing of its original today; a page shows what it has
        original = {"run_id": at["run_id"], "name": None, "roster": []}
    spec = series.read_state(user.core, user.principal, got["batch_id"]).batch.fork
    before = original["roster"]
    changed = [{"seat": k, "was": before[k] if k < len(before) else None, "now": first["roster"][k]}
               for k in (spec.seats if spec else ()) if k < len(first["roster"])]
    return {**at, "name": original["name"], "control": bool(spec and spec.control), "changed": changed,
            "seed": first["effective"].get("seed"), "spawn_seed": first["effective"].get("spawn_seed")}


async def _plot(summary: dict) -> str | None:
    if not (summary and summary.get("seats")):
        return None
    return await asyncio.to_thread(_forest_svg, summary_text.encode(summary))


async def _sequence_plot(user: Console, got: dict) -> str | None:
    """A series with a target: each seat's confidence sequence narrowing trial by trial (SVG, inline)."""
    if got.get("until") is None:
        return None
    found = await asyncio.to_thread(stopping.paths, user.core, user.principal, got["batch_id"])
    if not found:
        return None
    names: dict[int, set] = {}
    for seat in got["summary"].get("seats", ()):
        if not seat["anchor"]:
            names.setdefault(seat["seat"], set()).add(seat["name"])
    # a fork's changed seat has a player in each arm, and its sequence holds both arms' scores
    who = {k: next(iter(v)) if len(v) == 1 else "both arms" for k, v in names.items()}
    labelled = {f"seat {k} · {who.get(k, '')}".rstrip(" ·"): v for k, v in sorted(found.items())}
    return await asyncio.to_thread(_sequence_svg, json.dumps(labelled), json.dumps(got["until"]))


async def _effect_plot(effect: list[dict] | None, fork: dict | None) -> str | None:
    """The effect fork - control of each changed seat on each metric, with its 95% interval, against 0."""
    if not effect or not any(e["n"] for e in effect):
        return None
    names = {c["seat"]: c["now"].get("name") or c["now"].get("model") for c in (fork or {}).get("changed", ())}

    def label(e: dict) -> str:
        who = names.get(e["seat"])
        return " · ".join([f"seat {e['seat']}", *([who] if who else []), metric_name(e["metric"])])
    rows = [{"label": label(e), "estimate": e["mean"], "low": e["low"], "high": e["high"]} for e in effect]
    return await asyncio.to_thread(_effect_svg, json.dumps(rows), max(e["n"] for e in effect))


@functools.lru_cache(maxsize=32)
def _effect_svg(rows_text: str, pairs: int) -> str:
    from analytics.plots import forest_plot  # matplotlib: loaded on the first page that plots
    return _svg(forest_plot(json.loads(rows_text), title=f"Effect of the fork: fork - control, {pairs} pairs",
                            xlabel="mean paired difference (points), 95% interval", reference=0.0))


@functools.lru_cache(maxsize=32)
def _sequence_svg(paths_text: str, until_text: str) -> str:
    from analytics.plots import sequence_plot  # matplotlib: loaded on the first page that plots
    until = json.loads(until_text)
    fig = sequence_plot(json.loads(paths_text), metric=until["metric"], half_width=until["half_width"])
    return _svg(fig)


# matplotlib's settings are one global: a page and its live stream drawing at once in two threads would
# restore each other's font setting mid-drawing, and an SVG would come out with its words as outlines
_DRAWING = threading.Lock()


def _svg(fig) -> str:
    """The figure as inline SVG whose words are text (read by the browser, its find and screen readers),
    not glyph outlines."""
    from matplotlib import rc_context
    buf = io.StringIO()
    with _DRAWING, rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


@functools.lru_cache(maxsize=32)
def _forest_svg(summary_text: str) -> str:
    """The plot of one summary (by its JSON text): drawn once, however many pages and polls show it."""
    from analytics.figures import seat_forest  # matplotlib: loaded on the first series page, not at start
    return _svg(seat_forest(json.loads(summary_text)))
