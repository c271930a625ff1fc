"""When a series stops launching trials, and what each of its trials may spend (CONTRACT.md
section 17). Every function runs inside the caller's write transaction:

- `record`, at launch: the series' target (`until`) and budget.
- `held` before the dispatcher's claim: series whose budget cannot cover another trial while some
  play (they wait for those to end), and stopping those whose budget is spent with none playing.
- `capped` after the claim: each claimed trial's spend cap lowered to what the budget leaves after
  the series' spend so far and the caps of its playing trials; a trial that would get less than the
  plan's smallest cap goes back to the queue.
- `after_ended`, as runs end: the confidence sequence of each roster seat for the target's metric
  (analytics.sequence, over the scored trials in the order they ended), and the stop once every
  target seat's sequence is narrow enough.

A stop cancels the trials still queued (stop_reason series_stopped, nothing metered, their agent
turns and queue slot released with them); trials already playing finish and count.
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
from orchestrator.runs.series.until import SCALES, Stopping

SERIES_STOPPED = "series_stopped"  # a trial's stop_reason when its series stopped before it played
PRECISE, CEILING, BUDGET, CANCELLED = "precise", "ceiling", "budget", "cancelled"
MIN_TRIALS = 2  # a target holds from two scored trials on, as a series has at least two


@dataclass(frozen=True)
class Sample:
    """One quantity a target may apply to: a seat's scores of the metric in the order its trials
    ended, on its scale (a fork's effect would be a difference, on -100..100). key: the seat index."""
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
    return [Sample(str(k), np.asarray(v, dtype=float), lo, hi, k in anchors, until["half_width"])
            for k, v in sorted(by_seat.items())]


def targets(c: sqlite3.Connection, batch) -> list[str]:
    """The keys of the samples the target applies to: the seat named, else every roster seat."""
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
    """Cancel the series' queued trials (series_stopped) and record why; returns the runs it ended.
    A series with nothing left in the queue is not stopped: it played its ceiling."""
    queued = [r["id"] for r in c.execute(f"SELECT id FROM runs WHERE batch_id = ? AND status = '{statuses.QUEUED}'",
                                         (batch_id,)).fetchall()]
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
    series = _budgeted(c, {r["batch_id"] for r in rows if r["batch_id"]})
    if not series:
        return rows
    claimed = [r["id"] for r in rows]
    left = {b: _budget(c, batch, claimed)[0] for b, batch in series.items()}
    kept = []
    for r in rows:
        batch = series.get(r["batch_id"])
        if batch is None:
            kept.append(r)
            continue
        cap = min(r["cap_usd"], r["spend_usd"] + max(left[batch["id"]], 0.0))
        if cap < batch["min_cap_usd"] or cap <= r["spend_usd"]:
            lifecycle.requeue(c, r["id"])
            continue
        c.execute("UPDATE runs SET cap_usd = ? WHERE id = ?", (cap, r["id"]))
        if batch["trial_spends"]:
            left[batch["id"]] -= cap - r["spend_usd"]
        kept.append(_with_cap(r, cap))
    return kept


def _with_cap(row, cap: float) -> dict:
    """The claimed row as the dispatcher reads it, with the cap its job must carry."""
    out = {k: row[k] for k in row.keys()}
    out["cap_usd"] = cap
    return out


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


def paths(core, principal, batch_id: str) -> dict[int, tuple[list[float], list[float]]] | None:
    """Each roster seat's confidence sequence after each of its scored trials, for the series page's
    plot; None for a series without a target."""
    batch = core.store.one("SELECT * FROM batches WHERE id = ? AND account_id = ?", (batch_id, principal.account_id))
    if batch is None or batch["until"] is None:
        return None
    out = {}
    for s in samples(core.store.conn(), batch):
        if not s.anchor and s.values.size:
            low, high = sequence.bounds(s.values, s.lo, s.hi, half_width=s.target)
            out[int(s.key)] = (low.tolist(), high.tolist())
    return out
