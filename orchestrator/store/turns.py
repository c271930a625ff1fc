"""The run_turns table: a playing run's turns as they happen, the owner's transcript until its match
is archived, and what a resumed run replays.

Rows go once the match, transcript included, is in the archive; a run that failed before that keeps
them. `n` numbers the asks of one seat in one tick (an arena seat is asked again after an illegal
move; a world seat once).
"""
from __future__ import annotations

import json

from orchestrator.finite import loads
from orchestrator.records.turn import RecordedTurn, Replay, SeatTotals
from orchestrator.store.database import Connection


def add(c: Connection, run_id: str, tick: int, seat: int, turn: dict, play: list, memory) -> None:
    """One turn as it ended; a repeated write (a retry) replaces it."""
    c.execute("INSERT INTO run_turns (run_id, tick, seat, turn, play, memory) VALUES (?, ?, ?, ?, ?, ?) "
              "ON CONFLICT (run_id, tick, seat, n) DO UPDATE SET turn = excluded.turn, play = excluded.play, "
              "memory = excluded.memory",
              (run_id, tick, seat, json.dumps(turn), json.dumps(play), None if memory is None else json.dumps(memory)))


def keep(c: Connection, run_id: str, rows: list[dict]) -> None:
    """A worker's transcript rows kept as the run's record (an arena game's asks, several per ply
    when a move was illegal); nothing to replay."""
    asked: dict[tuple[int, int], int] = {}
    values = []
    for r in rows:
        key = (r["tick"], r["seat"])
        asked[key] = n = asked.get(key, -1) + 1
        values.append((run_id, r["tick"], r["seat"], n, json.dumps(r)))
    c.executemany("INSERT INTO run_turns (run_id, tick, seat, n, turn, play) VALUES (?, ?, ?, ?, ?, '[]') "
                  "ON CONFLICT (run_id, tick, seat, n) DO UPDATE SET turn = excluded.turn, play = '[]'", values)


def forget(c: Connection, run_ids: list[str]) -> None:
    """The runs' rows, once their matches are archived."""
    for k in range(0, len(run_ids), 500):  # SQLite's bound-parameter ceiling
        part = run_ids[k:k + 500]
        c.execute(f"DELETE FROM run_turns WHERE run_id IN ({','.join('?' * len(part))})", part)


def kept(c: Connection, run_id: str) -> bool:
    """Whether the store still holds any of the run's turns."""
    return c.execute("SELECT 1 FROM run_turns WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is not None


def _rows(c: Connection, run_id: str):
    return c.execute("SELECT tick, seat, turn, play, memory FROM run_turns WHERE run_id = ? ORDER BY tick, seat, n",
                     (run_id,)).fetchall()


def transcript(c: Connection, run_id: str) -> list[dict]:
    """The run's transcript rows in tick, then seat order (a number an earlier version kept as
    Infinity reads as null; the pages say so)."""
    return [loads(r["turn"])[0] for r in _rows(c, run_id)]


def recorded(c: Connection, run_id: str) -> list[RecordedTurn]:
    """The run's recorded turns in tick, then seat order."""
    return [RecordedTurn(tick=r["tick"], seat=r["seat"], turn=loads(r["turn"])[0],
                         play=loads(r["play"])[0],
                         memory=None if r["memory"] is None else loads(r["memory"])[0])
            for r in _rows(c, run_id)]


def replay(c: Connection, run_id: str) -> Replay:
    """What a resumed run replays: its recorded turns, and the usage and counts its roster holds for
    every seat that played a turn (empty for a run that recorded none)."""
    row = c.execute("SELECT roster FROM runs WHERE id = ?", (run_id,)).fetchone()
    roster = loads(row["roster"])[0] if row else []
    return Replay(turns=tuple(recorded(c, run_id)),
                  seats={i: SeatTotals(usage=s["usage"], turns=s["turns"]) for i, s in enumerate(roster)
                         if s.get("turns")})
