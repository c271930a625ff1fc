"""When a series stops launching trials, and what each of its trials may spend (CONTRACT.md
section 17). Every function runs inside the caller's write transaction:

- `record`, at launch: the series' target (`until`) and budget.
- `held` and `beyond` before the dispatcher's claim: series whose budget cannot cover another trial
  while some play, and the trials a target's wave does not reach yet (runs.series.waves).
- `capped` after the claim: each claimed trial's spend cap lowered to what the budget leaves.
- `after_ended`, as runs end: the confidence sequence of each roster seat for the target's metric
  (and of each changed seat's paired effect, for a fork with control), and the stop once every
  target's sequence is narrow enough.

A stop cancels the trials not begun (stop_reason series_stopped, nothing metered, their reservation
released with them); trials already playing finish and count, and so does a queued twin of one.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from analytics import sequence
from orchestrator import statuses
from orchestrator.runs import lifecycle
from orchestrator.runs.series import fork_effect, waves
from orchestrator.runs.series.until import REFERENCE_SD, SCALES, Stopping
from orchestrator.store import runs

SERIES_STOPPED = "series_stopped"  # a trial's stop_reason when its series stopped before it played
PRECISE, CEILING, BUDGET, CANCELLED = "precise", "ceiling", "budget", "cancelled"
MIN_TRIALS = 2  # a target holds from two scored trials on, as a series has at least two


@dataclass(frozen=True)
class Sample:
    """One quantity a target may apply to: a seat's scores of the metric in the order its trials
    ended, on its scale, or a fork's paired effect on a seat (differences, on -100..100).
    key: the seat index, or effect:<seat index>."""
    key: str
    values: np.ndarray
    lo: float
    hi: float
    anchor: bool = False
    target: float | None = None  # the target half-width the sequence's bets are tuned for

    def sequence(self) -> sequence.Sequence:
        return sequence.sequence(self.values, self.lo, self.hi, half_width=self.target)


def record(c: sqlite3.Connection, batch_id: str, stopping: Stopping, trial_spends: bool) -> None:
    """trial_spends: whether a trial can spend at all (some seat is priced); only then are the caps of
    playing trials held against the budget, so a free series never waits on its own caps."""
    if stopping is None or not stopping.any:
        return
    c.execute("UPDATE batches SET until = ?, budget_usd = ?, min_cap_usd = ?, trial_spends = ? WHERE id = ?",
              (None if stopping.until is None else json.dumps(stopping.until), stopping.budget_usd,
               stopping.min_cap_usd, int(trial_spends), batch_id))
    if stopping.budget_usd is not None:
        c.execute("UPDATE runs SET cap_usd = MIN(cap_usd, ?) WHERE batch_id = ?", (stopping.budget_usd, batch_id))


def samples(c: sqlite3.Connection, batch) -> list[Sample]:
    """Every seat of the field (roster seats, then anchors) with its scores of the target's metric,
    over the series' scored trials in the order they ended."""
    until = json.loads(batch["until"])
    metric = until["metric"]
    rows = c.execute("SELECT results FROM runs WHERE batch_id = ? AND results IS NOT NULL AND status IN "
                     f"{statuses.SCORED} ORDER BY finished_at_ms, seq", (batch["id"],)).fetchall()
    by_seat: dict[int, list[float]] = {}
    anchors: set[int] = set()
    for r in rows:
        results = json.loads(r["results"])
        for group in ("agents", "anchors"):
            for agent in results.get(group) or ():
                value = agent.get("fitness_index") if metric == "fitness_index" else \
                    (agent.get("dimensions") or {}).get(metric)
                if value is not None:
                    by_seat.setdefault(agent["seat"], []).append(float(value))
                    if group == "anchors":
                        anchors.add(agent["seat"])
    lo, hi = SCALES[metric]
    target = until["half_width"]
    out = [Sample(str(k), np.asarray(v, dtype=float), lo, hi, k in anchors, target)
           for k, v in sorted(by_seat.items())]
    if waves.paired(batch):
        for seat, d in fork_effect.differences(c, batch["id"], _effect_seats(batch), metric).items():
            if d:  # no complete pair yet: no sequence to show
                out.append(Sample(f"{EFFECT}{seat}", np.asarray(d, dtype=float), lo - hi, hi - lo, target=target))
    return out


EFFECT = "effect:"  # a paired effect's key among the samples, before its seat index


def _effect_seats(batch) -> list[int]:
    """The seats whose paired effect a fork's target applies to: the seat named, else every changed seat."""
    seat = json.loads(batch["until"])["seat"]
    return [seat] if seat is not None else list(json.loads(batch["fork"])["seats"])


def targets(c: sqlite3.Connection, batch) -> list[str]:
    """The keys of the samples the target applies to: with a control arm the paired effects
    (_effect_seats), else the seat named, else every roster seat."""
    if waves.paired(batch):
        return [f"{EFFECT}{s}" for s in _effect_seats(batch)]
    seat = json.loads(batch["until"])["seat"]
    if seat is not None:
        return [str(seat)]
    one = c.execute("SELECT roster FROM runs WHERE batch_id = ? LIMIT 1", (batch["id"],)).fetchone()
    return [str(k) for k in range(len(json.loads(one["roster"])))]


def precise(every: list[Sample], keys: list[str], half_width: float) -> bool:
    """Each keyed sample has MIN_TRIALS values or more and a sequence at most half_width wide on each
    side. A key with no sample (no scored trial yet) is not precise."""
    by_key = {s.key: s for s in every}
    return bool(keys) and all(k in by_key and by_key[k].values.size >= MIN_TRIALS
                              and by_key[k].sequence().half_width <= half_width for k in keys)


def _budget(c: sqlite3.Connection, batch, leaving: Iterable[str] = ()) -> tuple[float, int, int]:
    """(USD the budget leaves, trials playing, trials queued). Spent: every trial's metered spend;
    held: what each playing trial may still spend under its cap (runs in `leaving` not counted)."""
    leaving = tuple(leaving)
    holding = f"status IN {statuses.IN_WORLD}" + (f" AND id NOT IN ({','.join('?' * len(leaving))})" if leaving else "")
    row = c.execute(
        "SELECT COALESCE(SUM(spend_usd), 0) AS spent, "
        f"COALESCE(SUM(CASE WHEN {holding} THEN MAX(COALESCE(cap_usd, 0) - spend_usd, 0) ELSE 0 END), 0) AS held, "
        f"COALESCE(SUM(status IN {statuses.IN_WORLD}), 0) AS playing, "
        f"COALESCE(SUM(status = '{statuses.QUEUED}'), 0) AS queued "
        "FROM runs WHERE batch_id = ?", (*leaving, batch["id"])).fetchone()
    held = row["held"] if batch["trial_spends"] else 0.0
    return batch["budget_usd"] - row["spent"] - held, row["playing"], row["queued"]


def stop(c: sqlite3.Connection, batch_id: str, reason: str, now_ms: int) -> list[str]:
    """Cancel the series' trials not begun (series_stopped) and record why; returns the runs it ended.
    A target's stop takes pairs whole: a queued twin of a trial that began plays, so every played
    fork trial has its control. A budget's stop cancels every queued run, as nothing pays for them.
    A series with nothing left to cancel is not stopped: it played its ceiling."""
    batch = c.execute("SELECT * FROM batches WHERE id = ?", (batch_id,)).fetchone()
    queued = [r["id"] for t in waves.trials(c, batch) for r in t
              if r["status"] == statuses.QUEUED and (reason == BUDGET or waves.untouched(t))]
    if not queued:
        return []
    c.execute("UPDATE batches SET stopped = ? WHERE id = ? AND stopped IS NULL", (reason, batch_id))
    return [r for r in queued if lifecycle.series_stopped(c, r, now_ms)]


def _budgeted(c: sqlite3.Connection, batch_ids: Iterable[str]) -> dict[str, sqlite3.Row]:
    ids = tuple(batch_ids)
    if not ids:
        return {}
    rows = c.execute(f"SELECT * FROM batches WHERE id IN ({','.join('?' * len(ids))}) AND budget_usd IS NOT NULL "
                     "AND stopped IS NULL", ids).fetchall()
    return {r["id"]: r for r in rows}


def held(c: sqlite3.Connection, scripted: bool, now_ms: int) -> tuple[tuple[str, ...], list[str]]:
    """(series not to claim from now, runs ended by stopping series whose budget is spent)."""
    waiting = [r["batch_id"] for r in c.execute(
        f"SELECT DISTINCT batch_id FROM runs WHERE status = '{statuses.QUEUED}' AND scripted = ? "
        "AND batch_id IS NOT NULL",
        (int(scripted),)).fetchall()]
    out, ended = [], []
    for batch_id, batch in _budgeted(c, waiting).items():
        left, playing, _ = _budget(c, batch)
        if left >= batch["min_cap_usd"]:
            continue
        if playing:
            out.append(batch_id)
        else:
            ended += stop(c, batch_id, BUDGET, now_ms)
    return tuple(out), ended


def capped(c: sqlite3.Connection, rows: list) -> list:
    """Claimed rows, each budgeted trial's cap lowered to what its series' budget leaves; a trial whose
    cap would fall below the plan's smallest is queued again and left out."""
    series = _budgeted(c, {r.batch_id for r in rows if r.batch_id})
    if not series:
        return rows
    claimed = [r.id for r in rows]
    left = {b: _budget(c, batch, claimed)[0] for b, batch in series.items()}
    kept = []
    for r in rows:
        batch = series.get(r.batch_id)
        if batch is None:
            kept.append(r)
            continue
        cap = min(r.cap_usd, r.spend_usd + max(left[batch["id"]], 0.0))
        if cap < batch["min_cap_usd"] or cap <= r.spend_usd:
            lifecycle.requeue(c, r.id)
            continue
        runs.set_cap(c, r.id, cap)
        if batch["trial_spends"]:
            left[batch["id"]] -= cap - r.spend_usd
        kept.append(r.model_copy(update={"cap_usd": cap}))  # the cap its job must carry
    return kept


def beyond(c: sqlite3.Connection, scripted: bool) -> tuple[str, ...]:
    """Queued runs of this kind (scripted or not) that their series' wave does not reach yet: the
    claim leaves them in the queue. A trial that ended without a score takes no room of a wave."""
    out: list[str] = []
    for batch in c.execute(
            "SELECT * FROM batches WHERE until IS NOT NULL AND stopped IS NULL AND id IN (SELECT DISTINCT batch_id "
            f"FROM runs WHERE status = '{statuses.QUEUED}' AND scripted = ? AND batch_id IS NOT NULL)",
            (int(scripted),)).fetchall():
        every = waves.trials(c, batch)
        until = json.loads(batch["until"])
        first = waves.first_wave(until["half_width"], batch["trials"], REFERENCE_SD, *SCALES[until["metric"]],
                                 paired=waves.paired(batch))
        scored = sum(waves.complete(t) for t in every)
        room = sum(waves.lost(t) for t in every) + waves.allowance(scored, _ratio(c, batch), first, batch["trials"]) \
            - sum(not waves.untouched(t) for t in every)
        for t in every:
            if waves.untouched(t):
                if room > 0:
                    room -= 1
                else:
                    out += [r["id"] for r in t]
    return tuple(out)


def _ratio(c: sqlite3.Connection, batch) -> float | None:
    """The widest target's sequence half-width over the target's, from the sequences kept at the last
    end (None before every target has one)."""
    cs = json.loads(batch["cs"]) if batch["cs"] else {}
    widths = [(cs.get(k) or {}).get("half_width") for k in targets(c, batch)]
    if not widths or any(w is None for w in widths):
        return None
    return max(widths) / json.loads(batch["until"])["half_width"]


def controlled(c: sqlite3.Connection, batch_ids: Iterable[str]) -> bool:
    """Whether any of these series has a target or a budget: their trials go to workers one per call,
    so that a stop leaves the rest in the queue."""
    ids = tuple(b for b in batch_ids if b)
    if not ids:
        return False
    return c.execute(f"SELECT 1 FROM batches WHERE id IN ({','.join('?' * len(ids))}) AND "
                     "(until IS NOT NULL OR budget_usd IS NOT NULL) LIMIT 1", ids).fetchone() is not None


def after_ended(c: sqlite3.Connection, run_ids: Iterable[str], now_ms: int) -> list[str]:
    """The sequences and stops of the series these ended runs belong to; returns the runs it ended."""
    ids = tuple(run_ids)
    if not ids:
        return []
    batches = c.execute(
        "SELECT * FROM batches WHERE id IN (SELECT DISTINCT batch_id FROM runs WHERE id IN "
        f"({','.join('?' * len(ids))}) AND batch_id IS NOT NULL) AND (until IS NOT NULL OR budget_usd IS NOT NULL)",
        ids).fetchall()
    ended = []
    for batch in batches:
        if batch["until"] is not None:
            every = samples(c, batch)
            c.execute("UPDATE batches SET cs = ? WHERE id = ?",
                      (json.dumps({s.key: s.sequence().to_dict() for s in every}), batch["id"]))
            if batch["stopped"] is None and precise(every, targets(c, batch), json.loads(batch["until"])["half_width"]):
                ended += stop(c, batch["id"], PRECISE, now_ms)
                continue
        if batch["budget_usd"] is not None and batch["stopped"] is None:
            left, playing, queued = _budget(c, batch)
            if left < batch["min_cap_usd"] and not playing and queued:
                ended += stop(c, batch["id"], BUDGET, now_ms)
    return ended


def head(batch, ended: bool, spent_usd: float, cancelled: int) -> dict:
    """The batch view's fields: until (normalised) and budget_usd as launched, why the series stopped
    (null while trials are left to play), and what it spent. cancelled: its trials the caller cancelled."""
    if not ended:
        stopped = None
    elif batch["stopped"] is not None:
        stopped = batch["stopped"]
    else:
        stopped = CANCELLED if cancelled else CEILING
    return {"until": None if batch["until"] is None else json.loads(batch["until"]), "budget_usd": batch["budget_usd"],
            "stopped": stopped, "spent_usd": round(spent_usd, 6)}


def with_cs(summary: dict, batch) -> dict:
    """A series with a target: each seat's summary entry with its confidence sequence beside the
    fixed-n interval (a copy: the kept summary is shared by every read)."""
    if batch["until"] is None or not batch["cs"]:
        return summary
    cs = json.loads(batch["cs"])
    return {**summary, "seats": [{**s, "cs": cs[str(s["seat"])]} if str(s["seat"]) in cs else s
                                 for s in summary.get("seats", ())]}


def with_effect_cs(effect: list | None, batch) -> list | None:
    """A fork with control and a target: the target metric's effect entries with the confidence
    sequence of the paired difference (copies)."""
    if effect is None or batch["until"] is None or not batch["cs"]:
        return effect
    metric, cs = json.loads(batch["until"])["metric"], json.loads(batch["cs"])
    return [{**e, "cs": cs[f"{EFFECT}{e['seat']}"]} if e["metric"] == metric and f"{EFFECT}{e['seat']}" in cs else e
            for e in effect]


def paths(core, principal, batch_id: str) -> dict[int, tuple[list[float], list[float]]] | None:
    """Each roster seat's confidence sequence after each of its scored trials, for the series page's
    plot; None for a series without a target."""
    batch = core.store.one("SELECT * FROM batches WHERE id = ? AND account_id = ?", (batch_id, principal.account_id))
    if batch is None or batch["until"] is None:
        return None
    out = {}
    for s in samples(core.store.conn(), batch):
        if not s.anchor and s.values.size and not s.key.startswith(EFFECT):
            low, high = sequence.bounds(s.values, s.lo, s.hi, half_width=s.target)
            out[int(s.key)] = (low.tolist(), high.tolist())
    return out
