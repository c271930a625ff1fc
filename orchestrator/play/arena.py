"""Playing one arena game on a worker (docs/ARENA.md): scripted and model seats, grading by
the game's oracle on the same worker, results in the world's shape.

The outcome carries the graded log (meta, the graded moves that are the public log, and the results)
as JSON and the per-seat rows as Arrow IPC; they land in the archive (`arena/<match_id>.json`, and the
same seat files as the world's, so analytics reads arena results too) as a world match's do (job.py).
"""
from __future__ import annotations

import asyncio
import functools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from engine.arena.game import Game
from engine.arena.play import Tools, play as play_game
from orchestrator.agents.player import AgentArenaSeat
from orchestrator.play.arena_seats import ArenaSeat
from orchestrator.play.job import Job, Outcome, failed, internal_error, seats_ipc, transcript_ipc, unrecorded
from orchestrator.provider_kinds import AGENT, LOCAL
from orchestrator.seats.ledger import Ledger
from orchestrator.seats.loop import on_loop
from orchestrator.seats.player import Credential
from orchestrator.seats.faults import SeatFailed
from orchestrator.seats.recording import Recorder
from orchestrator.statuses import CANCELLED, FINISHED


@functools.cache
def tools() -> Tools:
    """One set per worker process: Stockfish processes and the solver's table live across games."""
    return Tools()


def model_seats(job: Job, recorder: Recorder, loop: asyncio.AbstractEventLoop,
                ledger: Ledger) -> dict[int, ArenaSeat]:
    """The seats a model or an agent plays (every seat not `local`), keyed by seat index, each charging
    its entry in the run's ledger."""
    model = {i: s for i, s in enumerate(job.seats) if s["provider"] != LOCAL}
    if not model:
        return {}
    creds = on_loop(loop, recorder.credentials())
    return {i: AgentArenaSeat(i, s, job=job, loop=loop, usage=ledger.entry(i)) if s["provider"] == AGENT else
            ArenaSeat(i, s, credential=creds.get(i) or Credential(None), turn_timeout_ms=job.env["turn_timeout_ms"],
                      loop=loop, usage=ledger.entry(i)) for i, s in model.items()}


def _reporter(recorder: Recorder, seats: dict[int, ArenaSeat], on_tick: Callable[[int], None],
              loop: asyncio.AbstractEventLoop) -> Callable[[int], None]:
    """After every ply: the live ply, and the model seats' usage and counts written to the recorder, so
    a worker that dies mid-game loses no metered spend (the world reports once per tick). After every
    faulted call too, so the run view shows a seat's faults before its ply is played."""
    if not seats:
        return on_tick

    def report(ply: int) -> None:
        on_loop(loop, recorder.report(ply, {i: {"usage": dict(s.usage), "turns": dict(s.turns)}
                                            for i, s in seats.items()}))

    def on_ply(ply: int) -> None:
        on_tick(ply)
        report(ply)
    for s in seats.values():
        s.on_fault = report
    return on_ply


# Games playing at once on one model worker, each on a thread: the engine's game loop asks
# its seats one answer at a time and grades with Stockfish, so it is not a coroutine.
GAME_THREADS = 64


@functools.cache
def _games() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(GAME_THREADS, thread_name_prefix="arena-game")


async def play_async(game: Game, job: Job, recorder: Recorder, should_stop: Callable[[], bool] = lambda: False,
                     on_tick: Callable[[int], None] = lambda t: None) -> Outcome:
    """play() on a thread of its own; its model seats' provider calls run on this (the caller's) loop,
    beside every other match of the worker."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_games(), functools.partial(play, game, job, recorder, should_stop, on_tick, loop))


def play(game: Game, job: Job, recorder: Recorder, should_stop: Callable[[], bool] = lambda: False,
         on_tick: Callable[[int], None] = lambda t: None, loop: asyncio.AbstractEventLoop | None = None) -> Outcome:
    """Play and grade one game. loop: where the model seats' provider calls run (a running loop in
    another thread); by default a loop of the game's own."""
    started = int(time.time() * 1000)
    ledger = Ledger(job.usage())
    usage = ledger.seats
    own_loop = loop is None
    loop = asyncio.new_event_loop() if own_loop else loop
    seats: dict[int, ArenaSeat] = {}
    try:
        seats = model_seats(job, recorder, loop, ledger)
        out = play_game(game.id, [{"name": s["name"], "model": s["model"]} for s in job.seats],
                        first_seat=job.env["first_seat"], seed=job.env["seed"], tools=tools(), answerers=seats,
                        should_stop=should_stop, on_ply=_reporter(recorder, seats, on_tick, loop))
    except SeatFailed as e:  # a provider fault streak, a key rejected, a model unknown: never a loss
        _settle(usage, seats)
        return failed(job, usage, e.envelope(), started, _turns(job, seats), _transcript(seats))
    except Exception as e:  # the run fails; turns already paid stay metered
        _settle(usage, seats)
        return failed(job, usage, internal_error("the game stopped", e), started, _turns(job, seats),
                      _transcript(seats))
    finally:
        for s in seats.values():
            s.close()
        if own_loop:
            loop.close()
    _settle(usage, seats, out["turns"])
    results = out["results"]
    meta = dict(job.meta, run_id=job.run_id, match_id=job.match_id, seed=job.env["seed"],
                first_seat=job.env["first_seat"], seats=[{"name": s["name"], "model": s["model"]} for s in job.seats])
    cancelled = results["game"]["termination"] == "cancelled"
    try:
        return Outcome(run_id=job.run_id, status=CANCELLED if cancelled else FINISHED,
                       stop_reason="cancelled" if cancelled else "season_end", match_ticks=results["match_ticks"],
                       results=results, match_id=job.match_id, usage=usage, spend_usd=ledger.usd,
                       started_at_ms=started, seats=seats_ipc(job, results), turns=_turns(job, seats),
                       transcript=_transcript(seats),
                       game=json.dumps({"meta": meta, "moves": out["moves"], "results": results}).encode())
    except Exception:  # the game was played and metered; only its record failed
        return unrecorded(job, usage, started, _turns(job, seats), results["match_ticks"], _asked(seats))


def _settle(usage: list[dict], seats: dict[int, ArenaSeat], turns: list[dict] | None = None) -> None:
    for i, u in enumerate(usage):  # the seats charged their entries as they played (model_seats)
        if i in seats:
            if turns is not None:  # the play loop judged legality: illegal answers less the timeouts
                seats[i].turns["invalid"] = turns[i]["illegal"] - turns[i]["timed_out"]
                rows = [r for r in seats[i].transcript if r["error"] is None]
                if rows and not rows[-1]["refused"] and seats[i].turns["invalid"] > sum(bool(r["refused"]) for r in rows):
                    rows[-1]["refused"] = ["the third illegal answer in one turn: the game is forfeit"]
        elif turns is not None:
            u["agent_turns"] = turns[i]["answers"]


def _asked(seats: dict[int, ArenaSeat]) -> list[dict]:
    """Every model answer of the game, in ply order: the owner's transcript."""
    return sorted((r for s in seats.values() for r in s.transcript), key=lambda r: r["tick"])


def _transcript(seats: dict[int, ArenaSeat]) -> bytes | None:
    return transcript_ipc(_asked(seats)) if seats else None


def _turns(job: Job, seats: dict[int, ArenaSeat]) -> list[dict | None]:
    return [dict(seats[i].turns) if i in seats else None for i in range(len(job.seats))]
