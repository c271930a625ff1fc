"""Decision grading's tables: decision_turns (one row per graded decision), decision_seats (one summary
per graded seat) and the runs table's grading columns (grading, grading_status, graded,
grading_total, grading_starts). The rules of a grading's status live in grading/states.py."""
from __future__ import annotations

import json

from orchestrator.finite import loads
from orchestrator.records.grading import (
    OPEN,
    Decision,
    GradingPlan,
    OpenGrading,
    SeatGrading,
)
from orchestrator.store import dialect
from orchestrator.store import roster as stored_roster
from orchestrator.store.database import Connection

_COUNT = "(SELECT COUNT(*) FROM decision_turns WHERE run_id = runs.id)"


def _in(states: tuple[str, ...]) -> str:
    return dialect.constants(states)  # our constants, never a caller's text


def _decisions(rows) -> list[Decision]:
    return [Decision(**loads(r["turn"])[0]) for r in rows]


# -- the runs table's grading columns -------------------------------------------------------------
def move(c: Connection, run_id: str, leaves: tuple[str, ...], to: str | None, *, started: bool = False,
         total: int | None = None, graded: int | None = None, recount: bool = False) -> bool:
    """The run's grading from one of `leaves` to `to` (started: one more start; total and graded: the
    counts; recount: graded counted from the stored decisions); False when it was in none of them."""
    sets, params = ["grading_status = ?"], [to]
    if started:
        sets.append("grading_starts = grading_starts + 1")
    if total is not None:
        sets.append("grading_total = ?")
        params.append(total)
    if graded is not None:
        sets.append("graded = ?")
        params.append(graded)
    if recount:
        sets.append(f"graded = {_COUNT}")
    return bool(c.execute(f"UPDATE runs SET {', '.join(sets)} WHERE id = ? AND grading_status IN {_in(leaves)} "
                          "RETURNING id", (*params, run_id)).fetchall())


def restart(c: Connection, leaves: tuple[str, ...], to: str) -> int:
    """Every grading in `leaves` moved to `to`, its last start not counted; how many."""
    return len(c.execute(f"UPDATE runs SET grading_status = ?, grading_starts = CASE WHEN grading_starts > 0 "
                         "THEN grading_starts - 1 ELSE 0 END "
                         f"WHERE grading_status IN {_in(leaves)} RETURNING id", (to,)).fetchall())


def open_of_ended(c: Connection, ended: tuple[str, ...]) -> list[OpenGrading]:
    """The open gradings of runs in an `ended` status; a pending one with a scored match carries its
    plan (what starting it needs)."""
    startable = "grading_status = 'pending' AND results IS NOT NULL AND match_id IS NOT NULL"
    rows = c.execute("SELECT id, account_id, status, match_id, batch_id, results IS NOT NULL AS scored, grading_status, "
                     f"grading_starts, CASE WHEN {startable} THEN roster END AS roster, "
                     f"CASE WHEN {startable} THEN effective END AS effective, grading "
                     f"FROM runs WHERE grading_status IN {_in(OPEN)} "
                     f"AND status IN ({','.join('?' * len(ended))})", ended).fetchall()
    return [OpenGrading(run_id=r["id"], account_id=r["account_id"], status=r["grading_status"], match_id=r["match_id"],
                        batch_id=r["batch_id"], scored=bool(r["scored"]), starts=r["grading_starts"],
                        plan=None if r["roster"] is None else _plan(r)) for r in rows]


def _plan(r) -> GradingPlan:
    eff = loads(r["effective"])[0]
    return GradingPlan(roster=stored_roster.seats(loads(r["roster"])[0]), mode=r["grading"], env=eff["env"],
                       fork_tick=(eff.get("fork") or {}).get("tick", 0))


def starts(c: Connection, run_id: str) -> int:
    row = c.execute("SELECT grading_starts FROM runs WHERE id = ?", (run_id,)).fetchone()
    return 0 if row is None else row[0]


def results_gain(c: Connection, run_id: str, summaries: dict[int, dict | None]) -> None:
    """The run's results carry each seat's summary as its `decisions` (null for a seat not graded)."""
    row = c.execute("SELECT results FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None or not row[0]:
        return
    results = json.loads(row[0])
    for entry in results["agents"]:
        entry["decisions"] = summaries.get(entry["seat"])
    c.execute("UPDATE runs SET results = ? WHERE id = ?", (json.dumps(results), run_id))


# -- decision_turns -------------------------------------------------------------------------------
def add(c: Connection, run_id: str, rows: list[dict]) -> None:
    """Graded decisions as a task returned them; one graded again replaces it."""
    c.executemany("INSERT INTO decision_turns (run_id, tick, seat, turn) VALUES (?, ?, ?, ?) "
                  "ON CONFLICT (run_id, tick, seat) DO UPDATE SET turn = excluded.turn",
                  [(run_id, r["tick"], r["seat"], json.dumps(r)) for r in rows if Decision(**r)])


def graded_keys(c: Connection, run_id: str) -> set[tuple[int, int]]:
    """(tick, seat) of every decision of the run graded so far."""
    return {(r[0], r[1]) for r in c.execute("SELECT tick, seat FROM decision_turns WHERE run_id = ?", (run_id,))}


def page(c: Connection, run_id: str, *, seat: int | None, limit: int, offset: int) -> list[Decision]:
    """Decisions in tick then seat order, optionally one seat's."""
    sql, params = "SELECT turn FROM decision_turns WHERE run_id = ?", [run_id]
    if seat is not None:
        sql += " AND seat = ?"
        params.append(seat)
    return _decisions(c.execute(sql + " ORDER BY tick, seat LIMIT ? OFFSET ?", (*params, limit, offset)))


def between(c: Connection, run_id: str, lo: int, hi: int) -> list[Decision]:
    """Decisions of ticks lo..hi."""
    return _decisions(c.execute("SELECT turn FROM decision_turns WHERE run_id = ? AND tick BETWEEN ? AND ?",
                                (run_id, lo, hi)))


def labelled(c: Connection, run_id: str) -> list[Decision]:
    """Decisions with a label (inaccuracies, mistakes, blunders)."""
    d = dialect.of(c)
    return _decisions(c.execute(f"SELECT turn FROM decision_turns WHERE run_id = ? AND "
                                f"{d.value(d.doc('turn'), 'label')} IS NOT NULL", (run_id,)))


def every(c: Connection, run_id: str) -> list[dict]:
    """Every graded decision of the run as stored, in tick then seat order (what the summaries count)."""
    return [loads(r[0])[0] for r in c.execute(
        "SELECT turn FROM decision_turns WHERE run_id = ? ORDER BY tick, seat", (run_id,))]


# -- decision_seats -------------------------------------------------------------------------------
def set_summaries(c: Connection, run_id: str, summaries: dict[int, dict | None]) -> None:
    c.executemany("INSERT INTO decision_seats (run_id, seat, summary) VALUES (?, ?, ?) "
                  "ON CONFLICT (run_id, seat) DO UPDATE SET summary = excluded.summary",
                  [(run_id, s, json.dumps(v)) for s, v in summaries.items() if v is not None])


def seats(c: Connection, run_id: str) -> list[SeatGrading]:
    """Every graded seat of the run, in seat order: its summary, its name in the roster and its regret
    tick by tick."""
    row = c.execute("SELECT roster FROM runs WHERE id = ?", (run_id,)).fetchone()
    names = {s["seat"]: s["name"] for s in (loads(row["roster"])[0] if row else [])}
    regret: dict[int, list] = {}
    d = dialect.of(c)
    for r in c.execute(f"SELECT seat, tick, {d.number(d.doc('turn'), 'regret')} FROM decision_turns "
                       "WHERE run_id = ? ORDER BY seat, tick", (run_id,)):
        regret.setdefault(r[0], []).append((r[1], r[2]))
    return [SeatGrading(seat=r["seat"], name=names.get(r["seat"], ""), summary=loads(r["summary"])[0],
                        regret=regret.get(r["seat"], []))
            for r in c.execute("SELECT seat, summary FROM decision_seats WHERE run_id = ? ORDER BY seat", (run_id,))]


def accuracies(c: Connection, match_ids: list[str]) -> list[tuple[str, int, float | None]]:
    """(match_id, seat, accuracy) of every graded seat of these matches."""
    out, sql = [], dialect.of(c)
    for k in range(0, len(match_ids), 500):  # SQLite's bound-parameter ceiling
        part = match_ids[k:k + 500]
        out += [(r[0], r[1], r[2]) for r in c.execute(
            f"SELECT r.match_id, d.seat, {sql.number(sql.plain('d.summary'), 'accuracy')} FROM decision_seats d "
            f"JOIN runs r ON r.id = d.run_id WHERE r.match_id IN ({','.join('?' * len(part))})", part)]
    return out
