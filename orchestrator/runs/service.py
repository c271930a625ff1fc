"""Run service functions: estimate, launch, read, list, cancel. REST, MCP and Python call these."""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from analytics.precision import precision_half_width
from orchestrator import statuses
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.grading import cost as grading_cost
from orchestrator.grading.plan import launch_state
from orchestrator.ids import new_id
from orchestrator.records.run import Run
from orchestrator.runs import lifecycle
from orchestrator.runs.head import archiving
from orchestrator.runs.admission import holdings
from orchestrator.runs.series import stopping, until as until_body
from orchestrator.runs.admission.admit import REFERENCE_SD, Admission, admit, wall_clock_ms
from orchestrator.runs.views import results_of, run_view
from orchestrator.seats.prices import stale_warning
from orchestrator.store import runs
from orchestrator.validation import integer_param

READ, WRITE = "runs:read", "runs:write"


def _workers(core: Core, scripted: bool) -> int:
    d = core.dispatcher
    return d.capacity(scripted) if d is not None else 1


def _warming(core: Core) -> bool:
    d = core.dispatcher
    return d is not None and d.warming


def _grading_slots(core: Core) -> int:
    d = core.dispatcher
    return d.grader.per_account() if d is not None else 1


def _precision(trials: int) -> dict:
    # the expected half-width of the fitness_index interval the series summary will compute at this many
    # trials, at the reference spread; one run has none
    p = precision_half_width(trials, REFERENCE_SD, metric="fitness_index")
    return {"reference_sd": REFERENCE_SD,
            "half_width_95": None if p.half_width is None else round(p.half_width, 4),
            "single_run_half_width_95": round(p.single_run, 4),
            "method": p.method}


def _check_room(c, principal: Principal, adm: Admission, history_limit: int, now_ms: int) -> dict:
    """The checks that depend on the account's other runs; raises the launch's code."""
    plan = principal.plan
    if holdings.history(c, principal.account_id) + len(adm.trial_envs) > history_limit:
        raise DomainError("run_history_full", f"the account holds {history_limit} runs, the platform's ceiling; "
                          "no further runs can be recorded")
    queued = holdings.active_launches(c, principal.account_id)
    if queued >= plan["queued_runs"]:
        raise DomainError("too_many_runs", f"{queued} launches are queued or running; the {plan['name']} plan allows "
                          f"{plan['queued_runs']} at once. Wait for one to finish or cancel one")
    t = holdings.turns(c, principal.account_id, now_ms)
    left = holdings.remaining(plan, t)
    if left is not None and adm.agent_turns > left:
        raise DomainError("plan_quota", f"this launch needs {adm.agent_turns} agent turns (seats x ticks x trials); "
                          f"{left} of the month's {plan['agent_turns_per_month']} remain")
    return {"queued": queued, "turns_left": left}


def _history_limit(core: Core) -> int:
    return int((core.config.get("limits") or {}).get("run_history", holdings.RUN_HISTORY_DEFAULT))


def _warnings(core: Core, adm: Admission) -> list[str]:
    """What the estimate's figures rest on that the caller should know: a price table past its age,
    when any seat is priced from it."""
    today = dt.datetime.fromtimestamp(core.clock.now_ms() / 1000, dt.UTC).date()
    stale = stale_warning(adm.prices_as_of, today)
    return [stale] if stale and any(p in ("table", "fallback") for p in adm.priced or ()) else []


def estimate(core: Core, principal: Principal, raw: Any, *, console: bool = False) -> dict:
    """console: the web console's caller (the arena game picker); REST and MCP leave it False."""
    adm = admit(core, principal, raw, launching=False, console=console)
    room = _check_room(core.store.conn(), principal, adm, _history_limit(core), core.clock.now_ms())
    left = room["turns_left"]
    out = {"ok": True, "batch": {
        "trials": adm.trials, "agent_turns": adm.agent_turns, "usd": adm.usd,
        "wall_clock_ms": wall_clock_ms(adm, _workers(core, adm.scripted), _warming(core)),
        "seats": [{"seat": s.seat, "name": s.name, "model": s.model, "provider": s.provider, "funding": s.funding,
                   "priced": priced}
                  for s, priced in zip(adm.seats, adm.priced)],
        "prices_as_of": adm.prices_as_of,
        "warnings": _warnings(core, adm),
        "spend_cap_usd": adm.spend_cap_usd,
        "quota": {"agent_turns_remaining": left, "after_launch": None if left is None else left - adm.agent_turns},
        "queue": {"queued": room["queued"], "limit": principal.plan["queued_runs"],
                  "headroom": principal.plan["queued_runs"] - room["queued"]},
        "precision": _precision(adm.trials),
        "grading": grading_cost.estimate(adm.graded_decisions, _grading_slots(core)),
    }}
    if adm.stopping.any:
        until_body.estimate(out["batch"], adm.stopping, adm.trials)
    return out


def launch(core: Core, principal: Principal, raw: Any, *, console: bool = False) -> dict:
    """Queue a run or a whole series, reserving its agent turns and one queue slot atomically."""
    adm = admit(core, principal, raw, launching=True, console=console)
    batch_id = new_id("bat_") if adm.trials > 1 else None
    run_ids = [new_id("run_") for _ in adm.trial_envs]  # a fork with control: two runs per trial
    now = core.clock.now_ms()
    per_run_turns = len(adm.seats) * adm.season_ticks
    grading = launch_state(adm.scenario.kind, adm.seats, adm.body.get("grading"))
    with core.store.write() as c:
        _check_room(c, principal, adm, _history_limit(core), now)
        if batch_id:
            runs.add_series(c, batch_id, principal.account_id, adm.trials, adm.seed_mode, adm.series_seed, now)
        for k, (run_id, eff) in enumerate(zip(run_ids, adm.trial_envs)):
            name = adm.name if not batch_id else f"{adm.name} (trial {k + 1}/{adm.trials})"
            fields = {"name": name, "roster": adm.seats, "scripted": adm.scripted, "grading": grading[0],
                      "grading_status": grading[1]}
            if adm.fork:  # its record; a control arm's seats are the original's
                fields.update(adm.fork.run_fields(adm, k))
            runs.add(c, id=run_id, account_id=principal.account_id, launch_id=batch_id or run_id, batch_id=batch_id,
                     trial=k, scenario_id=adm.scenario.id, scenario_hash=adm.scenario.hash, effective=eff,
                     cap_usd=adm.spend_cap_usd, turns_reserved=per_run_turns, created_at_ms=now, **fields)
        if batch_id:
            stopping.record(c, batch_id, adm.stopping, trial_spends=adm.usd["high"] > 0)
            if adm.fork:
                runs.set_series_fork(c, batch_id, adm.fork.series())
    d = core.dispatcher
    if d is not None:
        d.wake()
    first = run_row(core, principal, run_ids[0])
    series = {"batch_id": batch_id, "trials": adm.trials, "seed_mode": adm.seed_mode, "run_ids": run_ids} \
        if batch_id else None
    return {"ok": True, "run": run_view(first), "batch": series}


def arena_estimate(core: Core, principal: Principal, raw: Any) -> dict:
    """The console game picker's estimate: the same admission, arena ids allowed."""
    return estimate(core, principal, raw, console=True)


def arena_launch(core: Core, principal: Principal, raw: Any) -> dict:
    """The console game picker's launch: the same admission and queue, arena ids allowed."""
    return launch(core, principal, raw, console=True)


def run_row(core: Core, principal: Principal, run_id: str) -> Run:
    """The run, for its owner only (unknown_run for anyone else): what every read of one run starts
    from, here and in the transcript, the exports and the agent seats' turns."""
    row = runs.owned(core.store.conn(), run_id, principal.account_id)
    if row is None:
        raise DomainError("unknown_run", f"no run '{run_id}' on this account; list yours with GET /api/v1/runs")
    return row


def run_of_match(core: Core, principal: Principal, match_id: str) -> str | None:
    """The id of the owner's run that played this match, else None."""
    return runs.id_of_match(core.store.conn(), match_id, principal.account_id)


def get_run(core: Core, principal: Principal, run_id: str) -> dict:
    require(principal, READ)
    row = run_row(core, principal, run_id)
    return {"run": run_view(row), "results": results_of(row)}


_DIGITS = re.compile(r"[0-9]+")  # a cursor: ASCII only, as str.isdigit() also takes '²', which int() refuses
STATUSES = statuses.STATUSES


def list_runs(core: Core, principal: Principal, *, status: str | None = None, scenario_id: str | None = None,
              batch_id: str | None = None, limit: int | str | None = None, cursor: str | None = None) -> dict:
    """Newest first; `next_cursor` resumes after the last run of this page."""
    require(principal, READ)
    limit = integer_param(limit, "limit", 1, 100, default=20)
    if status is not None and status not in STATUSES:
        raise DomainError("bad_request", f"status: send one of {', '.join(STATUSES)}")
    before = None
    if cursor is not None:
        if not (isinstance(cursor, str) and _DIGITS.fullmatch(cursor) and len(cursor) <= 18):
            raise DomainError("bad_request", "cursor: send the next_cursor of a previous page")
        before = int(cursor)
    rows, last = runs.page(core.store.conn(), principal.account_id, limit, status=status, scenario_id=scenario_id,
                           batch_id=batch_id, before_seq=before)
    nxt = None if last is None else str(last)  # resume strictly below the last run shown
    return {"runs": [run_view(r) for r in rows], "next_cursor": nxt}


def cancel(core: Core, principal: Principal, run_id: str, *, wait_s: float = 5.0) -> dict:
    """lifecycle.cancel's rule; a run with a worker in this process is awaited up to wait_s, until the
    worker has stopped and its outcome (what played, archived and scored) is in the store."""
    require(principal, WRITE, write=True)
    row = run_row(core, principal, run_id)
    if row.status in statuses.TERMINAL:
        return {"ok": True, "cancelled": False, "run": run_view(row)}
    with core.store.write() as c:
        status = lifecycle.cancel(c, run_id, core.clock.now_ms())
    if status == statuses.QUEUED:
        archiving.cancelled_in_queue(core, run_id)
    elif status in statuses.IN_WORLD:
        d = core.dispatcher
        if d is not None:
            with d.ends.watch(run_id) as ended:
                d.request_cancel(run_id)
                if run_row(core, principal, run_id).status in statuses.IN_WORLD:
                    ended.wait(wait_s)
    final = run_row(core, principal, run_id)
    return {"ok": True, "cancelled": lifecycle.stopped_by_cancel(final), "run": run_view(final)}
