"""The runs table (and the batches row a launch writes with its runs): every statement on them that
the run's lifecycle, its launch, its reads and the head's dispatcher make, and the reading of its
JSON columns into the Run record.

A row an earlier version stored with Infinity or NaN in its JSON or money columns reads with those
values as null and their places named in `Run.unreadable`; every other row reads with one json.loads
per JSON column (the dispatcher's claim reads every run it plays).
"""
from __future__ import annotations

import json
from typing import Any, Iterable

import orchestrator.finite as finite
from orchestrator.records.fork import RunFork, SeriesFork
from orchestrator.records.roster import Seat, plain
from orchestrator.records.run import Ended, Run, RunRef
from orchestrator.statuses import ACTIVE, IN_WORLD, QUEUED, TERMINAL
from orchestrator.store import dialect, turns
from orchestrator.store import roster as stored_roster
from orchestrator.store.database import Connection, Row


class _Unfit(ValueError):
    pass


def _unfit(constant: str):
    raise _Unfit(constant)


# json.dumps wrote an earlier version's infinite or undefined numbers as Infinity or NaN; this parser
# stops at one (its hook is called for nothing else), so only such a text is walked value by value
_STRICT = json.JSONDecoder(parse_constant=_unfit)


def _loads(text: str | None, where: str, bad: list[str]) -> Any:
    if text is None:
        return None
    try:
        return _STRICT.decode(text)
    except _Unfit:
        value, paths = finite.loads(text)
    bad += [f"{where}{p if p.startswith('[') else '.' + p}" for p in paths]
    return value


def run_of(row: Row | dict, results: bool = True) -> Run:
    """The record of one `SELECT *` row of runs (or of its `stored` form); results=False leaves the
    results column unread (None), for readers that never show it."""
    bad: list[str] = []
    d = dict(row)
    d["effective"] = _loads(d["effective"], "effective", bad)
    d["roster"] = stored_roster.seats(_loads(d["roster"], "roster", bad))
    d["error"] = json.loads(d["error"]) if d["error"] else None
    d["results"] = json.loads(d["results"]) if results and d["results"] else None
    d["archived"] = json.loads(d["archived"]) if d["archived"] else None
    d["fork"] = RunFork.model_validate_json(d["fork"]) if d["fork"] else None
    for money in ("spend_usd", "cap_usd"):
        if d[money] is not None and not finite.finite(d[money]):
            d[money] = None
            bad.append(money)
    if bad:
        d["unreadable"] = tuple(bad)
    return Run.model_validate(d)


def _marks(values) -> str:
    return dialect.marks(len(values))


def _states(states: tuple[str, ...]) -> str:
    return dialect.constants(states)  # the statuses' constants, never a caller's text


# -- reads of one run, and of pages of runs --------------------------------------------------------
def get(c: Connection, run_id: str) -> Run | None:
    row = c.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else run_of(row)


def owned(c: Connection, run_id: str, account_id: str) -> Run | None:
    row = c.execute("SELECT * FROM runs WHERE id = ? AND account_id = ?", (run_id, account_id)).fetchone()
    return None if row is None else run_of(row)


def by_match(c: Connection, match_id: str) -> Run | None:
    row = c.execute("SELECT * FROM runs WHERE match_id = ?", (match_id,)).fetchone()
    return None if row is None else run_of(row)


def id_of_match(c: Connection, match_id: str, account_id: str) -> str | None:
    row = c.execute("SELECT id FROM runs WHERE match_id = ? AND account_id = ?", (match_id, account_id)).fetchone()
    return None if row is None else row[0]


def stored(c: Connection, run_ids: list[str]) -> list[dict]:
    """These runs as stored, JSON fields as their text, for a process that reads them itself (run_of):
    the head sends ended runs to the archive's Compactor actor this way, to build their views off the head."""
    if not run_ids:
        return []
    return [dict(r) for r in c.execute(f"SELECT * FROM runs WHERE id IN ({_marks(run_ids)})", tuple(run_ids))]


def page(c: Connection, account_id: str, limit: int, *, status: str | None = None, scenario_id: str | None = None,
         batch_id: str | None = None, before_seq: int | None = None) -> tuple[list[Run], int | None]:
    """An account's runs, newest first, `limit` of them below before_seq; with the seq to resume
    below when more remain, else None. Their results are left unread: a page of runs shows none, and
    a scripted run's are the largest column (16.7 KB for 24 agents)."""
    sql, params = "SELECT * FROM runs WHERE account_id = ?", [account_id]
    for col, val in (("status", status), ("scenario_id", scenario_id), ("batch_id", batch_id)):
        if val is not None:
            sql += f" AND {col} = ?"  # col comes from the fixed tuple above, never from the caller
            params.append(val)
    if before_seq is not None:
        sql += " AND seq < ?"
        params.append(before_seq)
    rows = c.execute(sql + " ORDER BY seq DESC LIMIT ?", (*params, limit + 1)).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    return [run_of(r, results=False) for r in rows], (rows[-1]["seq"] if more else None)


def of_series(c: Connection, batch_id: str, account_id: str) -> list[Run]:
    return [run_of(r) for r in c.execute("SELECT * FROM runs WHERE batch_id = ? AND account_id = ? ORDER BY trial, seq",
                                         (batch_id, account_id))]


def refs(c: Connection, *, ids: Iterable[str] = (), matches: Iterable[str] = ()) -> list[RunRef]:
    """The runs of these ids, or of these match ids: which match each played, in which series."""
    column, values = ("id", list(ids)) if ids else ("match_id", list(matches))
    if not values:
        return []
    rows = c.execute(f"SELECT id, batch_id, match_id FROM runs WHERE {column} IN ({_marks(values)})", tuple(values))
    return [RunRef(id=r["id"], batch_id=r["batch_id"], match_id=r["match_id"]) for r in rows]


def series_refs(c: Connection, batch_id: str) -> list[RunRef]:
    """A series' runs in trial order, with their statuses."""
    rows = c.execute("SELECT id, batch_id, status, match_id FROM runs WHERE batch_id = ? ORDER BY trial", (batch_id,))
    return [RunRef(**dict(r)) for r in rows]


def scored_matches(c: Connection, account_id: str, statuses: tuple[str, ...], *, id: str | None = None,
                   batch_id: str | None = None, scenario_id: str | None = None) -> dict[str, str | None]:
    """match id -> batch_id of an account's runs in these statuses with a match, narrowed by the fields given."""
    where = {k: v for k, v in (("id", id), ("batch_id", batch_id), ("scenario_id", scenario_id)) if v is not None}
    clauses = "".join(f" AND {column} = ?" for column in where)  # this function's own names
    rows = c.execute(f"SELECT match_id, batch_id FROM runs WHERE account_id = ? AND match_id IS NOT NULL "
                     f"AND status IN ({_marks(statuses)}){clauses}", (account_id, *statuses, *where.values()))
    return {r["match_id"]: r["batch_id"] for r in rows}


def _roster(text: str) -> tuple[Seat, ...]:
    return tuple(Seat.model_validate(s) for s in stored_roster.seats(_loads(text, "roster", [])))


def account_and_roster(c: Connection, run_id: str) -> tuple[str, tuple[Seat, ...]] | None:
    row = c.execute("SELECT account_id, roster FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else (row["account_id"], _roster(row["roster"]))


# -- what an account holds ---------------------------------------------------------------------------
def active_launches(c: Connection, account_id: str) -> int:
    return c.execute(f"SELECT COUNT(DISTINCT launch_id) FROM runs WHERE account_id = ? AND status IN {ACTIVE}",
                     (account_id,)).fetchone()[0]


def turns_settled_since(c: Connection, account_id: str, since_ms: int) -> int:
    return int(c.execute(f"SELECT COALESCE(SUM(turns_settled), 0) FROM runs WHERE account_id = ? AND status IN "
                         f"{TERMINAL} AND finished_at_ms >= ?", (account_id, since_ms)).fetchone()[0])


def turns_held(c: Connection, account_id: str) -> int:
    return int(c.execute(f"SELECT COALESCE(SUM(turns_reserved), 0) FROM runs WHERE account_id = ? AND status IN "
                         f"{ACTIVE}", (account_id,)).fetchone()[0])


def history(c: Connection, account_id: str) -> int:
    return c.execute("SELECT COUNT(*) FROM runs WHERE account_id = ?", (account_id,)).fetchone()[0]


# -- a launch ----------------------------------------------------------------------------------------
def series_owned(c: Connection, batch_id: str, account_id: str) -> bool:
    return c.execute("SELECT 1 FROM batches WHERE id = ? AND account_id = ?", (batch_id, account_id)).fetchone() \
        is not None


def series_seed(c: Connection, batch_id: str, account_id: str) -> int | None:
    row = c.execute("SELECT batch_seed FROM batches WHERE id = ? AND account_id = ?", (batch_id, account_id)).fetchone()
    return None if row is None else row[0]


def add_series(c: Connection, batch_id: str, account_id: str, trials: int, seed_mode: str, batch_seed: int,
               now_ms: int) -> None:
    c.execute("INSERT INTO batches (id, account_id, trials, seed_mode, batch_seed, created_at_ms) "
              "VALUES (?, ?, ?, ?, ?, ?)", (batch_id, account_id, trials, seed_mode, batch_seed, now_ms))


def add(c: Connection, *, id: str, account_id: str, launch_id: str, batch_id: str | None, trial: int, name: str,
        scenario_id: str, scenario_hash: str, scripted: bool, effective: dict, roster: tuple[Seat, ...],
        cap_usd: float | None, turns_reserved: int, created_at_ms: int, grading: str | None,
        grading_status: str | None, fork: RunFork | None = None) -> None:
    """A queued run."""
    c.execute("INSERT INTO runs (id, account_id, launch_id, batch_id, trial, name, status, scenario_id, "
              "scenario_hash, scripted, effective, roster, cap_usd, turns_reserved, created_at_ms, grading, "
              f"grading_status, fork) VALUES (?, ?, ?, ?, ?, ?, '{QUEUED}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (id, account_id, launch_id, batch_id, trial, name, scenario_id, scenario_hash, int(scripted),
               json.dumps(effective), json.dumps(plain(roster)), cap_usd, turns_reserved, created_at_ms, grading,
               grading_status, None if fork is None else json.dumps(fork.stored())))


def set_series_fork(c: Connection, batch_id: str, fork: SeriesFork) -> None:
    c.execute("UPDATE batches SET fork = ? WHERE id = ?", (fork.model_dump_json(), batch_id))


# -- the lifecycle's statements ------------------------------------------------------------------------
class Expr:
    """A value a transition sets that the store computes from the row itself; `sql` per dialect name
    where the two spell it differently."""

    def __init__(self, sql: str | dict[str, str], params: tuple = ()):
        self.sql, self.params = sql, params

    def spelled(self, name: str) -> str:
        return self.sql if isinstance(self.sql, str) else self.sql[name]


def _metered(sql) -> str:
    return (f"(SELECT COALESCE(SUM({sql.number('s.value', 'usage', 'agent_turns')}), 0) "
            f"FROM {sql.elements(sql.plain('runs.roster'), 's')})")


# agent turns the recorder metered into the roster while the run played (0 for scripted runs)
METERED_TURNS = Expr({d.name: _metered(d) for d in (dialect.Sqlite, dialect.Postgres)})


def plus(column: str, n: int) -> Expr:
    return Expr(f"{column} + ?", (n,))


def at_least(column: str, value: int) -> Expr:
    return Expr(f"CASE WHEN COALESCE({column}, 0) > ? THEN COALESCE({column}, 0) ELSE ? END", (value, value))


_MOVES: dict = {}


def move(c: Connection, run_id: str, leaves: tuple[str, ...], sets: dict[str, Any]) -> bool:
    """Set these fields of the run when its status is one of `leaves`; whether it was. JSON fields
    are given as Python values (error) or records (roster)."""
    name = dialect.of(c).name
    key = (name, leaves, tuple((k, v.spelled(name) if isinstance(v, Expr) else None) for k, v in sets.items()))
    sql = _MOVES.get(key)
    if sql is None:
        parts = ", ".join(f"{k} = {v.spelled(name) if isinstance(v, Expr) else '?'}" for k, v in sets.items())
        sql = _MOVES[key] = f"UPDATE runs SET {parts} WHERE id = ? AND status IN {_states(leaves)} RETURNING id"
    params: list = []
    for k, v in sets.items():
        if isinstance(v, Expr):
            params += v.params
        else:
            params.append(json.dumps(plain(v)) if k == "roster" else json.dumps(v) if k == "error" and v is not None
                          else v)
    # fetch all: the UPDATE completes before COMMIT
    return bool(c.execute(sql, (*params, run_id)).fetchall())


def status(c: Connection, run_id: str) -> str | None:
    row = c.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else row[0]


def statuses(c: Connection, run_ids: list[str]) -> dict[str, str]:
    rows = c.execute(f"SELECT id, status FROM runs WHERE id IN ({_marks(run_ids)})", run_ids).fetchall()
    return {r["id"]: r["status"] for r in rows}


def status_and_match(c: Connection, run_id: str) -> tuple[str, str | None]:
    row = c.execute("SELECT status, match_id FROM runs WHERE id = ?", (run_id,)).fetchone()
    return row["status"], row["match_id"]


def roster_in(c: Connection, run_id: str, states: tuple[str, ...]) -> tuple[Seat, ...] | None:
    """The run's roster while it is in one of these states, else None."""
    row = c.execute(f"SELECT roster FROM runs WHERE id = ? AND status IN {_states(states)}", (run_id,)).fetchone()
    return None if row is None else _roster(row["roster"])


def claim(c: Connection, leaves: tuple[str, ...], to: str, scripted: bool, limit: int, series_ids: tuple = (),
          held: tuple = (), skip: tuple = ()) -> list[Run]:
    """The oldest `limit` runs of a kind in `leaves`, moved to `to`, oldest first (see lifecycle.claim)."""
    within = f" AND batch_id IN ({_marks(series_ids)})" if series_ids else ""
    if held:
        within += f" AND (batch_id IS NULL OR batch_id NOT IN ({_marks(held)}))"
    if skip:  # one parameter however many: a long series may leave thousands waiting
        within += f" AND NOT {dialect.of(c).text_in('id')}"
    rows = c.execute(f"UPDATE runs SET status = ? WHERE id IN (SELECT id FROM runs WHERE status IN {_states(leaves)} "
                     f"AND scripted = ?{within} ORDER BY seq LIMIT ?) RETURNING *",
                     (to, int(scripted), *series_ids, *held, *((json.dumps(list(skip)),) if skip else ()),
                      limit)).fetchall()
    return sorted((run_of(r) for r in rows), key=lambda r: r.seq)


def set_match_ids(c: Connection, pairs: list[tuple[str, str]]) -> None:
    """(run id, match id) pairs."""
    c.executemany("UPDATE runs SET match_id = ? WHERE id = ?", [(m, r) for r, m in pairs])


def set_cap(c: Connection, run_id: str, cap_usd: float) -> None:
    c.execute("UPDATE runs SET cap_usd = ? WHERE id = ?", (cap_usd, run_id))


def results_text(results: dict | None) -> str | None:
    """The results column as stored (an Ended record carries it so)."""
    return _json(results)


def roster_text(roster: list[dict]) -> str:
    """The roster column as stored, each seat with its usage (an Ended record carries it so)."""
    return json.dumps(roster)


def outcome_row(run_id: str, o: dict, roster: list[dict]) -> Ended:
    """One outcome as `ended` takes it (o: as the play wing returns it; roster: with each seat's usage)."""
    return Ended(run_id, o["status"], o["stop_reason"], o["match_ticks"], o["match_id"], results_text(o["results"]),
                 roster_text(roster), o["spend_usd"], sum(u["agent_turns"] for u in o["usage"]), o["error"] or None,
                 o.get("started_at_ms"), o.get("archived"))


def ended(c: Connection, rows: list[Ended], now_ms: int) -> None:
    """Ended runs' outcomes as their workers handed them over (the play wing's `for_head`), stored as
    they come; the recorded turns of those whose match, transcript included, is archived go."""
    turns.forget(c, [r.run_id for r in rows if r.match_id is not None])
    c.executemany("UPDATE runs SET status = ?, stop_reason = ?, results = ?, roster = ?, spend_usd = ?, "
                  "turns_settled = ?, live_tick = ?, error = ?, match_id = ?, archived = ?, "
                  f"started_at_ms = COALESCE(?, started_at_ms), finished_at_ms = {int(now_ms)} WHERE id = ?",
                  [(r.status, r.stop_reason, r.results, r.roster, r.spend_usd, r.turns_settled,
                    r.match_ticks, _json(r.error), r.match_id, _json(r.archived), r.started_at_ms, r.run_id)
                   for r in rows])


def _json(value) -> str | None:
    return json.dumps(value) if value else None


def in_world(c: Connection, run_ids: list[str] | None = None) -> list[Run]:
    """Runs launching or running (of these ids, when given), oldest first."""
    within = f" AND id IN ({_marks(run_ids)})" if run_ids is not None else ""
    return [run_of(r) for r in c.execute(f"SELECT * FROM runs WHERE status IN {_states(IN_WORLD)}{within} ORDER BY seq",
                                         tuple(run_ids or ()))]


def in_world_ids(c: Connection) -> list[str]:
    return [r[0] for r in c.execute(f"SELECT id FROM runs WHERE status IN {_states(IN_WORLD)} ORDER BY seq")]


def cancels_asked(c: Connection) -> list[str]:
    return [r[0] for r in c.execute(f"SELECT id FROM runs WHERE status IN {_states(IN_WORLD)} AND cancel_requested = 1")]


def match_ids(c: Connection, run_ids: list[str]) -> list[str]:
    if not run_ids:
        return []
    return [r[0] for r in c.execute(f"SELECT match_id FROM runs WHERE id IN ({_marks(run_ids)}) AND match_id IS NOT NULL",
                                    run_ids)]
