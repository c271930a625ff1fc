"""The series aggregate: a series' row (table batches), its kept summary (batch_summaries), and the
queries the stopping rule, the wave rule and the batch read make over its trials in the runs table.

Every function takes the caller's connection: the stopping rule runs inside the dispatcher's write
transaction, a read passes the store's connection.
"""
from __future__ import annotations

import json
from typing import Iterable

from orchestrator.finite import finite as is_finite, loads as finite_loads
from orchestrator.statuses import IN_WORLD, QUEUED, SCORED
from orchestrator.records.series import (
    KeptSummary, Series, SeriesRuns, Spending, TrialRun, Until,
)
from orchestrator.store import dialect
from orchestrator.store.database import Connection, Row

_IN_WORLD = "(" + ", ".join(f"'{s}'" for s in IN_WORLD) + ")"
_SCORED = "(" + ", ".join(f"'{s}'" for s in SCORED) + ")"


def _marks(n: int) -> str:
    return dialect.marks(n)


def _number(x) -> float | None:
    # a budget or cap an earlier version stored as infinite reads as none (studio doctor repairs it)
    return None if x is None or not is_finite(x) else float(x)


def _series(row: Row) -> Series:
    until = json.loads(row["until"]) if row["until"] else None
    cs, _ = finite_loads(row["cs"]) if row["cs"] else ({}, [])
    return Series(id=row["id"], account_id=row["account_id"], trials=row["trials"], seed_mode=row["seed_mode"],
                  batch_seed=row["batch_seed"], created_at_ms=row["created_at_ms"],
                  until=None if until is None else Until(**until), budget_usd=_number(row["budget_usd"]),
                  min_cap_usd=_number(row["min_cap_usd"]), trial_spends=bool(row["trial_spends"]),
                  stopped=row["stopped"], cs=cs or {}, fork=json.loads(row["fork"]) if row["fork"] else None)


# -- the series' row ---------------------------------------------------------------------------------

def get(c: Connection, batch_id: str, account_id: str | None = None) -> Series | None:
    """The series, or None (also when account_id is given and the series is another account's)."""
    if account_id is None:
        row = c.execute("SELECT * FROM batches WHERE id = ?", (batch_id,)).fetchone()
    else:
        row = c.execute("SELECT * FROM batches WHERE id = ? AND account_id = ?", (batch_id, account_id)).fetchone()
    return None if row is None else _series(row)


def record_stopping(c: Connection, batch_id: str, until: Until | None, budget_usd: float | None,
                    min_cap_usd: float, trial_spends: bool) -> None:
    """The target and budget a series launched with; its trials' caps no higher than the budget."""
    c.execute("UPDATE batches SET until = ?, budget_usd = ?, min_cap_usd = ?, trial_spends = ? WHERE id = ?",
              (None if until is None else json.dumps(until.model_dump()), budget_usd, min_cap_usd,
               int(trial_spends), batch_id))
    if budget_usd is not None:
        # a trial without a cap keeps none (as SQLite's scalar MIN of a NULL gives)
        c.execute("UPDATE runs SET cap_usd = CASE WHEN cap_usd > ? THEN ? ELSE cap_usd END WHERE batch_id = ?",
                  (budget_usd, budget_usd, batch_id))


def budgeted(c: Connection, batch_ids: Iterable[str]) -> dict[str, Series]:
    """Those of these series with a budget that have not stopped, by id."""
    ids = tuple(batch_ids)
    if not ids:
        return {}
    rows = c.execute(f"SELECT * FROM batches WHERE id IN ({_marks(len(ids))}) AND budget_usd IS NOT NULL "
                     "AND stopped IS NULL", ids).fetchall()
    return {s.id: s for s in map(_series, rows) if s.budget_usd is not None}


def waiting(c: Connection, scripted: bool) -> list[str]:
    """The series with a queued run of this kind (scripted or not)."""
    return [r[0] for r in c.execute(
        f"SELECT DISTINCT batch_id FROM runs WHERE status = '{QUEUED}' AND scripted = ? "
        "AND batch_id IS NOT NULL", (int(scripted),)).fetchall()]


def targeted_waiting(c: Connection, scripted: bool) -> list[Series]:
    """The series with a target, not stopped, that have a queued run of this kind."""
    return [_series(r) for r in c.execute(
        "SELECT * FROM batches WHERE until IS NOT NULL AND stopped IS NULL AND id IN (SELECT DISTINCT batch_id "
        f"FROM runs WHERE status = '{QUEUED}' AND scripted = ? AND batch_id IS NOT NULL)",
        (int(scripted),)).fetchall()]


def controlled(c: Connection, batch_ids: Iterable[str]) -> bool:
    """Whether any of these series has a target or a budget."""
    ids = tuple(b for b in batch_ids if b)
    if not ids:
        return False
    return c.execute(f"SELECT 1 FROM batches WHERE id IN ({_marks(len(ids))}) AND "
                     "(until IS NOT NULL OR budget_usd IS NOT NULL) LIMIT 1", ids).fetchone() is not None


def of_runs(c: Connection, run_ids: Iterable[str]) -> list[Series]:
    """The series with a target or a budget that these runs belong to."""
    ids = tuple(run_ids)
    if not ids:
        return []
    return [_series(r) for r in c.execute(
        "SELECT * FROM batches WHERE id IN (SELECT DISTINCT batch_id FROM runs WHERE id IN "
        f"({_marks(len(ids))}) AND batch_id IS NOT NULL) AND (until IS NOT NULL OR budget_usd IS NOT NULL)",
        ids).fetchall()]


def set_cs(c: Connection, batch_id: str, cs: dict[str, dict]) -> None:
    """The confidence sequences as the stopping rule computed them at the last end."""
    c.execute("UPDATE batches SET cs = ? WHERE id = ?", (json.dumps(cs), batch_id))


def set_stopped(c: Connection, batch_id: str, reason: str) -> None:
    """Why the service stopped launching the series' trials; the first reason stays."""
    c.execute("UPDATE batches SET stopped = ? WHERE id = ? AND stopped IS NULL", (reason, batch_id))


# -- its trials in the runs table --------------------------------------------------------------------

def spending(c: Connection, batch_id: str, leaving: Iterable[str] = ()) -> Spending:
    """Spent: every trial's metered spend; held: what each playing trial may still spend under its cap
    (runs in `leaving` not counted)."""
    leaving = tuple(leaving)
    holding = f"status IN {_IN_WORLD}" + (f" AND id NOT IN ({_marks(len(leaving))})" if leaving else "")
    row = c.execute(
        "SELECT COALESCE(SUM(spend_usd), 0), "
        f"COALESCE(SUM(CASE WHEN {holding} AND COALESCE(cap_usd, 0) > spend_usd "
        "THEN COALESCE(cap_usd, 0) - spend_usd ELSE 0 END), 0), "
        f"COALESCE(SUM(CASE WHEN status IN {_IN_WORLD} THEN 1 ELSE 0 END), 0), "
        f"COALESCE(SUM(CASE WHEN status = '{QUEUED}' THEN 1 ELSE 0 END), 0) "
        "FROM runs WHERE batch_id = ?", (*leaving, batch_id)).fetchone()
    return Spending(row[0], row[1], row[2], row[3])




def _score(agent: dict, metric: str) -> float | None:
    value = agent.get(metric) if metric == "fitness_index" else (agent.get("dimensions") or {}).get(metric)
    # a score an earlier version stored as a number JSON cannot carry is no evidence
    return None if value is None or not is_finite(value) else float(value)


def scores(c: Connection, batch_id: str, metric: str) -> tuple[dict[int, list[float]], set[int]]:
    """(each seat's scores of the metric over the series' scored trials in the order they ended, the
    seats that are anchors)."""
    by_seat: dict[int, list[float]] = {}
    anchors: set[int] = set()
    for (text,) in c.execute(f"SELECT results FROM runs WHERE batch_id = ? AND results IS NOT NULL AND status IN "
                             f"{_SCORED} ORDER BY finished_at_ms, seq", (batch_id,)).fetchall():
        results = json.loads(text)
        for group in ("agents", "anchors"):
            for agent in results.get(group) or ():
                value = _score(agent, metric)
                if value is not None:
                    by_seat.setdefault(agent["seat"], []).append(value)
                    if group == "anchors":
                        anchors.add(agent["seat"])
    return by_seat, anchors


def roster_size(c: Connection, batch_id: str) -> int:
    """How many roster seats the series' trials have."""
    one = c.execute("SELECT roster FROM runs WHERE batch_id = ? LIMIT 1", (batch_id,)).fetchone()
    return 0 if one is None else len(json.loads(one[0]))


def trial_runs(c: Connection, batch_id: str) -> list[TrialRun]:
    """The series' runs in launch order, with each one's arm (fork or control) where it has one."""
    return [TrialRun(r[0], r[1], bool(r[2]), None if r[3] is None else json.loads(r[3]).get("arm"))
            for r in c.execute("SELECT id, status, results IS NOT NULL, fork FROM runs WHERE batch_id = ? "
                               "ORDER BY seq", (batch_id,)).fetchall()]


def paired_scores(c: Connection, batch_id: str, seats, metrics) -> dict[str, dict[int, tuple[tuple, dict]]]:
    """A fork's scored trials by arm and continuation seed: (the order it ended in, each (seat, metric)'s
    score, None where the results hold none)."""
    arms: dict[str, dict] = {"fork": {}, "control": {}}
    for r in c.execute(f"SELECT fork, results, finished_at_ms, seq FROM runs WHERE batch_id = ? AND results IS NOT NULL "
                       f"AND fork IS NOT NULL AND status IN {_SCORED}", (batch_id,)).fetchall():
        record, results = json.loads(r[0]), json.loads(r[1])
        by_seat = {a.get("seat"): a for a in results.get("agents") or ()}
        values = {(s, m): (None if s not in by_seat else _score(by_seat[s], m)) for s in seats for m in metrics}
        arms[record["arm"]][record["continuation_seed"]] = ((r[2] or 0, r[3]), values)
    return arms


# -- what a batch read sees --------------------------------------------------------------------------

def runs_of(c: Connection, batch_id: str) -> SeriesRuns:
    """The series' runs from one index (runs_batch_state), its kept summary's version, its spend: one
    statement (a waiting read asks this several times a second)."""
    # a spend an earlier version stored as infinite is left out of the sum (studio doctor repairs it)
    rows = c.execute("SELECT id, status, match_id, grading_status, "
                     "(SELECT version FROM batch_summaries WHERE batch_id = ?), "
                     "COALESCE(SUM(CASE WHEN ABS(spend_usd) <= 1e300 THEN spend_usd END) OVER (), 0), "
                     "COALESCE(SUM(CASE WHEN stop_reason = 'cancelled' THEN 1 ELSE 0 END) OVER (), 0) "
                     "FROM runs WHERE batch_id = ? ORDER BY trial", (batch_id, batch_id)).fetchall()
    if not rows:
        return SeriesRuns((), (), (), (), summary_version(c, batch_id), 0, 0)
    first = rows[0]
    return SeriesRuns(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows),
                      tuple(r[3] for r in rows), first[4], first[5], first[6])


# -- its kept summary --------------------------------------------------------------------------------

def summary_version(c: Connection, batch_id: str) -> str | None:
    row = c.execute("SELECT version FROM batch_summaries WHERE batch_id = ?", (batch_id,)).fetchone()
    return None if row is None else row[0]


def kept_summary(c: Connection, batch_id: str) -> KeptSummary | None:
    row = c.execute("SELECT version, summary FROM batch_summaries WHERE batch_id = ?", (batch_id,)).fetchone()
    return None if row is None else KeptSummary(row[0], json.loads(row[1]), row[1])


def keep_summary(c: Connection, batch_id: str, version: str, matches: int, text: str, now_ms: int) -> None:
    """Kept under its version; a process holding an older set of scored runs never replaces a newer one."""
    c.execute("INSERT INTO batch_summaries (batch_id, version, matches, summary, computed_at_ms) "
              "VALUES (?, ?, ?, ?, ?) ON CONFLICT (batch_id) DO UPDATE SET version = excluded.version, "
              "matches = excluded.matches, summary = excluded.summary, "
              "computed_at_ms = excluded.computed_at_ms WHERE excluded.matches >= batch_summaries.matches",
              (batch_id, version, matches, text, now_ms))


def listed(c: Connection, account_id: str, batch_ids: list[str] | None, limit: int) -> list[tuple[Series, list[dict]]]:
    """The account's series, newest first (or those of `batch_ids`), each with its runs' batch id,
    status, name and scenario in trial order."""
    sql, params = "SELECT * FROM batches WHERE account_id = ?", [account_id]
    if batch_ids is not None:
        sql += f" AND id IN ({_marks(len(batch_ids))})"
        params += list(batch_ids)
    batches = [_series(r) for r in c.execute(sql + " ORDER BY created_at_ms DESC, id LIMIT ?", (*params, limit)).fetchall()]
    if not batches:
        return []
    ids = [b.id for b in batches]
    of: dict[str, list[dict]] = {}
    for r in c.execute(f"SELECT batch_id, status, name, scenario_id FROM runs WHERE account_id = ? AND batch_id IN "
                       f"({_marks(len(ids))}) ORDER BY trial", (account_id, *ids)).fetchall():
        of.setdefault(r["batch_id"], []).append({"status": r["status"], "name": r["name"], "scenario_id": r["scenario_id"]})
    return [(b, of.get(b.id, [])) for b in batches]
