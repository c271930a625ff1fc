"""Admission: one function decides whether a run body may launch, and what it would cost.

`admit` runs every check of a launch in the API's order (body, scenario, account, roster, plan
ceilings, seeds, funding); estimate reports what it found, launch (runs/service.py) takes the same
admission into a write transaction for the checks that depend on other runs (queue, quota, history).
"""
from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass
from typing import Any

from engine.rules import SEED_MAX
from engine.scenario import draw_seed, seat_names
from orchestrator import skills as skill_service
from orchestrator.agents import roster as agent_roster
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.grading import cost as grading_cost
from orchestrator.runs import kinds
from orchestrator.runs.admission import forks, seats as seat_layer
from orchestrator.runs.admission.body import MAX_DIRECTIONS, check_run_body
from orchestrator.runs.kinds.world import Scenario
from orchestrator.runs.series import until as until_body
from orchestrator.seats.chat import DEFAULT_MAX_TOKENS
from orchestrator.seats.families import reasoning_on, request_problem
from orchestrator.seats.seat import seat_label
from orchestrator.records.roster import Seat, SeatTurns
from orchestrator.store import runs
from orchestrator.provider_kinds import LOCAL, UNPAID

REFERENCE_SD = until_body.REFERENCE_SD
# Spend caps are clamped into the plan's range (USD); an omitted cap gets the top of the range.
SPEND_CAP_RANGE = {"free": (0.05, 5.0), "starter": (0.05, 50.0), "pro": (0.05, 250.0), "lab": (0.05, 2500.0)}
# A scripted worker's start (its process, imports and compiled kernels) on a loaded machine, well above
# an idle one's: an estimate's high end allows for it while the service's workers warm up.
WORKER_START_MS = 12_000


@dataclass
class Admission:
    body: dict
    scenario: Scenario
    seats: list[Seat]               # the resolved roster, funded, usage zeroed
    season_ticks: int
    trials: int
    seed_mode: str | None
    trial_envs: list[dict]          # per trial: effective object (docs/RUNS.md)
    series_seed: int | None
    agent_turns: int                # for the whole launch
    usd: dict
    spend_cap_usd: float | None
    name: str
    scripted: bool
    priced: list[str] | None = None  # per seat: how its USD was priced (table, fallback, free, key)
    prices_as_of: str | None = None  # the date of the price table the USD figures used
    stopping: until_body.Stopping | None = None  # a series' until and budget_usd (docs/RUNS.md)
    graded_decisions: int = 0        # decisions the launch may grade at most (the grading's cost)
    fork: Any = None                # a fork's admission (a Fork), else None


def resolve_scenario(core: Core, principal: Principal, scenario_id: str, *, console: bool = False) -> Scenario:
    """The scenario an id names, carrying its kind (the world, or an arena game) for the checks after."""
    return kinds.of(scenario_id).scenario(core, principal, scenario_id, console)


def merge_env(base: dict, over: dict | None) -> dict:
    """Run overrides on the scenario's env: given fields replace, resources merge per resource."""
    out = {k: v for k, v in base.items()}
    for k, v in (over or {}).items():
        if k == "resources":
            res = {r: dict(m) for r, m in (out.get("resources") or {}).items()}
            for r, m in v.items():
                res[r] = {**res.get(r, {}), **m}
            out["resources"] = res
        else:
            out[k] = v
    return out


LOCAL_DIRECTIONS_NOTE = ("skills and instructions are ignored: a local seat plays a scripted policy, which reads "
                         "no text; the scaffold tag records that they were sent")


def resolve_seats(core: Core, principal: Principal, roster: list[dict], kind=kinds.WORLD) -> list[Seat]:
    """Roster as sent -> resolved entries (skills snapshotted, provider defaulted, name derived).
    kind: the scenario's, which resolves each seat's provider (an arena game's scripted seats and
    skill rule differ from the world's)."""
    out = []
    tool_calls = seat_layer.ToolCalls(core, principal)
    names = seat_names([s["model"] for s in roster], [s.get("name") for s in roster])  # as the engine names them
    for k, seat in enumerate(roster):
        provider = kind.provider(k, seat)
        agent = provider == agent_roster.AGENT
        if agent:
            agent_roster.check(seat_label(k, seat), seat)
        skills = []
        for sid in seat.get("skills") or []:
            try:
                skills.append(skill_service.resolve(core, principal, sid))
            except DomainError as e:
                if e.code != "unknown_skill":
                    raise
                raise DomainError("unknown_skill", f"{seat_label(k, seat)}: skill '{sid}' is not a built-in "
                                  "and not one of your skills (GET /api/v1/skills)") from None
        instructions = seat.get("instructions")
        directions = seat_layer.compose_directions(skills, instructions)
        total = sum(len(s["text"]) for s in skills) + len(instructions or "")  # the texts, not the separators
        if total > MAX_DIRECTIONS:
            raise DomainError("bad_roster", f"{seat_label(k, seat)}: skills plus instructions make "
                              f"{total} characters; at most {MAX_DIRECTIONS} are allowed")
        name = names[k]
        fmt = agent_roster.FORMAT if agent else seat_format(k, seat, provider,
                                                                      tool_calls.missing(provider, seat["model"]))
        max_tokens = seat.get("max_tokens") or (None if provider in UNPAID else
                                                DEFAULT_MAX_TOKENS["on" if reasoning_on(seat.get("reasoning")) else "off"])
        problem = max_tokens and request_problem(provider, seat, max_tokens)  # what the provider would refuse
        if problem:
            raise DomainError("bad_roster", f"{seat_label(k, seat)}: {problem}")
        out.append(Seat(
            seat=k, name=name, model=seat["model"], provider=provider,
            # unset stays unset (null): nothing is sent and the model plays at its provider's default
            reasoning=seat.get("reasoning"), temperature=seat.get("temperature"), max_tokens=max_tokens,
            format=fmt, skills=skills, instructions=instructions,
            scaffold=seat_layer.scaffold(provider, fmt, directions),
            turns=None if provider == LOCAL else SeatTurns.zero(),
            # recorded and tagged in the scaffold so the run says what was sent, but a policy reads no text
            note=LOCAL_DIRECTIONS_NOTE if provider == LOCAL and directions else None))
    return out


def seat_format(index: int, seat: dict, provider: str, no_tools: str | None) -> str:
    """The seat's reply format: as sent, else tools, or json where the key's server has no tool calls
    (no_tools: what its check saw); format tools on such a key is bad_roster naming the fix."""
    if seat.get("format"):
        if seat["format"] == "tools" and no_tools:
            raise DomainError("bad_roster", f"{seat_label(index, seat)}: format tools needs tool calls, and the "
                              f"{provider} key's server has none ({no_tools}); send format: json for "
                              "this seat, or serve the model with tool calls (docs/SEATS.md) and store the key again")
        return seat["format"]
    return "json" if no_tools else "tools"


def _seeds(scen: Scenario, body: dict, trials: int, seed_mode: str | None,
           series_seed: int | None = None) -> tuple[list[dict], int | None]:
    """Per trial: (seed, source, spawn_seed, source) under docs/api.md rules."""
    run_env = body.get("env") or {}
    if "seed" in run_env and scen.seed_policy == "fixed":
        raise DomainError("seed_not_allowed", f"{scen.id} plays a fixed map; drop env.seed from the run")
    seed, seed_src = (run_env["seed"], "run") if "seed" in run_env else (
        (scen.env["seed"], "scenario") if "seed" in scen.env else (None, None))
    spawn, spawn_src = (run_env["spawn_seed"], "run") if "spawn_seed" in run_env else (
        (scen.env["spawn_seed"], "scenario") if "spawn_seed" in scen.env else (None, None))
    if trials == 1:
        if seed is None:
            seed, seed_src = draw_seed(), "drawn"
        if spawn is None:
            spawn, spawn_src = draw_seed(), "drawn"
        return [{"seed": seed, "seed_source": seed_src, "spawn_seed": spawn, "spawn_seed_source": spawn_src}], None
    if spawn is not None:
        raise DomainError("seed_not_allowed", f"env.spawn_seed is pinned ({spawn_src}); a series of {trials} trials "
                          "would replay one layout. Drop spawn_seed or launch a single run")
    if seed_mode == "pinned" and seed is not None:
        raise DomainError("seed_not_allowed", f"seed_mode pinned draws one map seed for the series, but env.seed is "
                          f"already pinned ({seed_src}); drop one of them")
    series_seed = draw_seed() if series_seed is None else series_seed
    out = []
    for k in range(trials):
        s, ss = (seed, seed_src) if seed is not None else (
            (trial_seed(series_seed, "map", 0 if seed_mode == "pinned" else k), "series"))
        out.append({"seed": s, "seed_source": ss, "spawn_seed": trial_seed(series_seed, "spawn", k),
                    "spawn_seed_source": "series"})
    return out, series_seed


def trial_seed(series_seed: int, salt: str, k: int) -> int:
    """Trial k's seed, derived from the series' recorded seed: anyone can recompute it."""
    digest = hashlib.sha256(f"{series_seed}:{salt}:{k}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (SEED_MAX + 1)


def _paired_seed(core: Core, principal: Principal, body: dict, trials: int) -> int | None:
    """The recorded seed of the series named by paired_with: trial k then plays trial k's seeds."""
    other = body.get("paired_with")
    if other is None:
        return None
    if trials < 2:
        raise DomainError("bad_request", "paired_with: only a series (trials above 1) can pair with another series")
    seed = runs.series_seed(core.store.conn(), other, principal.account_id)
    if seed is None:
        raise DomainError("bad_request", f"paired_with: no series '{other}' on this account; send the batch_id "
                          "of an earlier series of yours")
    return seed


def spend_cap_range(principal: Principal) -> tuple[float, float]:
    return SPEND_CAP_RANGE.get(principal.plan["id"], (0.05, 50.0))


def spend_cap(principal: Principal, requested: float | None) -> float:
    lo, hi = spend_cap_range(principal)
    return hi if requested is None else min(hi, max(lo, float(requested)))


def admit(core: Core, principal: Principal, raw: Any, *, launching: bool, console: bool = False) -> Admission:
    """console: the web console's caller, the only one allowed to launch arena games."""
    if launching:
        require(principal, "runs:write", write=True)
    else:
        require(principal, "runs:read")
    forked = forks.read(core, principal, raw)  # None: the body forks no run
    body = check_run_body(forked.body if forked else raw)
    stopping = until_body.check(body, body.get("trials", 1), spend_cap_range(principal),
                                paired=bool(forked and forked.control))
    scen = forked.scenario if forked else resolve_scenario(core, principal, body["scenario_id"], console=console)
    scen.kind.check_body(body)
    if principal.frozen:
        raise DomainError("billing_frozen", "the account is frozen after a payment dispute; runs cannot launch "
                          "until billing is resolved")
    seats = forked.resolve(core, principal, resolve_seats) if forked else \
        resolve_seats(core, principal, body["roster"], scen.kind)
    plan = principal.plan
    n_seats = len(seats)
    # over the plan is the plan's refusal, whatever the scenario takes; bad_roster is for rosters
    # that the plan allows but the scenario does not
    if n_seats > plan["seats_per_run"]:
        raise DomainError("plan_seats", f"the roster has {n_seats} seats; the {plan['name']} plan allows at most "
                          f"{plan['seats_per_run']} per run")
    if scen.roster and not scen.roster["min_agents"] <= n_seats <= scen.roster["max_agents"]:
        raise DomainError("bad_roster", f"{scen.id} takes {scen.roster['min_agents']} to {scen.roster['max_agents']} "
                          f"seats; the roster has {n_seats}")
    ticks = body.get("season_ticks", scen.season_ticks)
    if ticks > plan["ticks_per_run"]:
        raise DomainError("plan_ticks", f"season_ticks {ticks} is over the {plan['name']} plan's ceiling of "
                          f"{plan['ticks_per_run']}; send season_ticks of at most {plan['ticks_per_run']}")
    trials = body.get("trials", 1)
    if trials > plan["series_max_trials"]:
        raise DomainError("plan_series", f"trials {trials} is over the {plan['name']} plan's "
                          f"{plan['series_max_trials']} trials per series")
    seed_mode = body.get("seed_mode", "vary") if trials > 1 else body.get("seed_mode")
    env = merge_env(scen.env, body.get("env"))
    if forked:  # the original's seeds; continuation seeds from the series' seed
        trial_envs, series_seed = forked.trial_envs(trials, _paired_seed(core, principal, body, trials), trial_seed)
        ticks = forked.remaining  # what each run plays, meters and costs
    else:
        seeds, series_seed = _seeds(scen, body, trials, seed_mode, _paired_seed(core, principal, body, trials))
        trial_envs = [scen.kind.effective(scen, ticks, env, s, k) for k, s in enumerate(seeds)]
    agent_turns = n_seats * ticks * len(trial_envs)
    # a fork grades its own ticks, in each of its runs (the control arm's too)
    graded = grading_cost.launch_decisions(scen.kind, seats, body.get("grading"), ticks, len(trial_envs))
    grading_cost.check(plan, graded, body.get("grading"))
    table = seat_layer.prices(core)
    est = forked.estimate(core, principal, seats, trials, table) if forked else \
        seat_layer.estimate(seats, ticks, trials, key_prices=seat_layer.key_prices(core, principal), table=table)
    usd = {"low": round(est["low"], 4), "high": round(est["high"], 4)}
    seats = seat_layer.fund(core, principal, seats, scen.kind.funded(seats), est)
    scripted = all(s.local for s in seats)
    name = body.get("name") or f"{scen.id} x{n_seats} {secrets.token_hex(2)}"
    return Admission(body=body, scenario=scen, seats=seats, season_ticks=ticks, trials=trials, seed_mode=seed_mode,
                     trial_envs=trial_envs, series_seed=series_seed, agent_turns=agent_turns, usd=usd,
                     spend_cap_usd=spend_cap(principal, body.get("max_spend_usd")), name=name, scripted=scripted,
                     priced=[e["priced"] for e in est["seats"]], prices_as_of=table.as_of, stopping=stopping,
                     graded_decisions=graded, fork=forked)


def wall_clock_ms(adm: Admission, workers: int, warming: bool = False) -> dict:
    """A range for the whole launch: scripted seasons at engine speed, model seats at a turn latency
    between 0.5 s and the turn timeout per tick; trials run workers at a time. While the service's
    workers are still starting (`warming`), the high end allows for their start as well."""
    span = _span_ms(adm, workers)
    return {"low": span["low"], "high": span["high"] + (WORKER_START_MS if warming else 0)}


def _span_ms(adm: Admission, workers: int) -> dict:
    return adm.scenario.kind.span_ms(adm, math.ceil(len(adm.trial_envs) / max(1, workers)))
