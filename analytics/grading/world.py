"""world-rollouts-1: every decision of a graded seat in a world match, graded by rollouts from the exact
state before it (docs/RUBRIC.md gives the numbers and their reasons). A decision is a tick at which the
seat was alive at the tick's start. Its candidates are the turn the seat took (a missed turn is a wait),
a wait, and the turn each of honest-trader, greedy-harvester and aggressive-raider would have taken
there, duplicates merged. Each is played on for HORIZON ticks, ROLLOUTS times; the graded seat plays its
own logged turns for OWN_TURNS ticks, then the reference policy; its value is the seat's fitness_index
where the rollouts stop, averaged. regret = best value - chosen value; blind_regret = best value - the
candidates' mean, what a pick at random would lose. The service splits a match's decisions
(`decisions_of`) across tasks, grades each part with `grade_match(..., decisions=part)` and joins the
parts with `merge`.
"""
from __future__ import annotations

import numpy as np

from analytics.grading.scale import GRADER, accuracy, label, summarize
from engine.actions import decode
from engine.kernels.codes import INVALID, N_ACTIONS, NO_ACTION, POLICIES, STARVE, WAIT
from engine.replay import messages_from_columns
from engine.rollouts import Rollouts, config_of, rebuild, rollout_base, stop_of

HORIZON = 20          # ticks played from the decision on (fewer at the season's end)
ROLLOUTS = 96          # seeded rollouts per candidate
REFERENCE = "greedy-harvester"  # the policy every roster seat plays after the decision's tick
OWN_TURNS = 4          # ticks after the decision's on which the graded seat replays its own logged turns first
CANDIDATE_POLICIES = POLICIES[:3]  # honest-trader, greedy-harvester, aggressive-raider


# A graded turn as docs/RUBRIC.md publishes it; a row also carries its `blind_regret`, which
# the seat summary reads and the published turns leave out.
TURN_FIELDS = ("tick", "seat", "chosen", "value", "best", "best_value", "regret", "accuracy", "label")


def published(turn: dict) -> dict:
    """A graded row as GET /runs/:id/decisions and get_decisions show it."""
    return {k: turn[k] for k in TURN_FIELDS}


def _columns(events) -> dict:
    if isinstance(events, dict):
        return events
    from analytics.archive.format import event_columns

    return event_columns(events)


def _meta(events, meta: dict | None) -> dict:
    if meta is not None:
        return meta
    from analytics.archive.format import table_meta

    return table_meta(events)


def decisions_of(events, seats, start: int = 0) -> list[tuple[int, int]]:
    """(tick, seat) of every decision of `seats`: each tick before the stop at whose start the seat lived,
    from tick `start` on (a fork's own ticks: the ones before it were the original's)."""
    cols = _columns(events)
    stop, _ = stop_of(cols)
    starved = cols["kind"] == STARVE
    out = []
    for seat in seats:
        died = cols["tick"][starved & (cols["agent"] == seat)]
        last = int(died[0]) if len(died) else stop - 1
        out += [(t, int(seat)) for t in range(start, min(last, stop - 1) + 1)]
    return sorted(out)


def _key(turn: np.ndarray) -> tuple:
    """What a turn does, slot by slot: an empty slot is a wait, a wait's arguments do nothing."""
    out = []
    for row in turn:
        kind = WAIT if row[0] in (NO_ACTION, WAIT) else int(row[0])
        out.append((kind,) if kind == WAIT else (kind, *map(int, row[1:])))
    return tuple(out)


def _actions(turn: np.ndarray, messages: list[str]) -> list[dict]:
    """A turn as the action dicts a seat sends; a turn of nothing is a wait."""
    out = []
    for row in turn:
        kind = int(row[0])
        if kind == NO_ACTION:
            continue
        if kind == INVALID or not 0 <= kind < N_ACTIONS:
            out.append({"action": "invalid"})
        else:
            out.append(decode(kind, *map(int, row[1:]), messages))
    return out or [{"action": "wait"}]


def _grade(ro: Rollouts, tick: int, seat: int, base, messages: list[str], rollouts: int) -> dict:
    apt = ro.apt
    chosen = ro.snap.actions[tick, seat]
    wait = np.zeros((apt, 6), dtype=np.int64)
    wait[:, 0] = NO_ACTION
    wait[0, 0] = WAIT
    cands, keys = [], set()
    for turn in (chosen, wait, *ro.policy_turns(tick, seat, CANDIDATE_POLICIES)):
        k = _key(turn)
        if k not in keys:
            keys.add(k)
            cands.append(turn)
    values = ro.values(tick, seat, np.stack(cands), rollouts, base, REFERENCE, OWN_TURNS).mean(axis=1)
    best = int(np.argmax(values))
    if values[best] <= values[0]:
        best = 0  # ties go to the turn taken
    regret = round(float(values[best] - values[0]), 3)  # accuracy and label follow the published regret
    return {"tick": tick, "seat": seat, "chosen": _actions(chosen, messages), "value": round(float(values[0]), 3),
            "best": _actions(cands[best], messages), "best_value": round(float(values[best]), 3),
            "regret": regret, "accuracy": round(accuracy(regret), 2), "label": label(regret),
            "blind_regret": round(float(values[best] - values.mean()), 3)}


def grade_match(events, meta: dict | None, seats, *, rollout_seed: int | None = None, decisions=None,
                horizon: int = HORIZON, rollouts: int = ROLLOUTS) -> dict:
    """Grade `seats` of one finished world match from its event log (an archive events table or its
    columns) and meta (field, seed, spawn_seed, season_ticks, and resources when the scenario
    changed them; read from the table's metadata when None). decisions: a list of (tick, seat)
    to grade instead of all of them. Returns {grader, horizon_ticks, rollouts, seats: {seat:
    summary | None}, turns: [row]}; raises RebuildError for a log that cannot be
    rebuilt. horizon and rollouts other than the grader's are for measuring it (benchmarks/)."""
    cols = _columns(events)
    meta = _meta(events, meta)
    seats = [int(s) for s in seats]
    todo = sorted(decisions) if decisions is not None else decisions_of(cols, seats)
    config = config_of(meta, cols)
    snap = rebuild(config, cols, sorted({t for t, _ in todo}), sorted({s for _, s in todo}))
    ro = Rollouts(snap, horizon)
    base = rollout_base(config.seed, config.spawn_seed, rollout_seed or 0)
    messages = messages_from_columns(cols)
    turns = [_grade(ro, t, s, base, messages, rollouts) for t, s in todo]
    return {"grader": GRADER, "horizon_ticks": horizon, "rollouts": rollouts,
            "seats": summarize(turns, seats), "turns": turns}


def merge(parts: list[dict], seats) -> dict:
    """One match's grading from parts graded separately (each over some of its decisions)."""
    turns = sorted((t for p in parts for t in p["turns"]), key=lambda t: (t["tick"], t["seat"]))
    first = parts[0] if parts else {"horizon_ticks": HORIZON, "rollouts": ROLLOUTS}
    return {"grader": GRADER, "horizon_ticks": first["horizon_ticks"], "rollouts": first["rollouts"],
            "seats": summarize(turns, [int(s) for s in seats]), "turns": turns}
