"""Playing one world match: scripted seats in compiled stretches of ticks, model seats tick by tick
(the seats' `ModelSeats`). The match is scored from its finished event columns (the same
columns the archive stores; the rubric never reads live state).

A match with model seats plays as a coroutine (`play_async`), one of hundreds on a model worker's
event loop; its scoring and packing, the one long stretch of CPU in it, runs on a thread so the loop
keeps serving the others. In-process play runs the same coroutine on a loop of its own (`play`)."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

from analytics.archive import derive
from engine import rubric
from engine.match import AgentSpec
from engine.scenario import local_policy
from orchestrator.agents.player import AgentSeat
from orchestrator.play.fork import memories, new_match
from orchestrator.provider_kinds import LOCAL
from orchestrator.play.job import (Job, Outcome, failed, internal_error, log_table, packed_bytes, seat_rows,
                                  transcript_ipc, unrecorded)
from orchestrator.seats.ledger import Ledger
from orchestrator.seats.player import ModelSeats
from orchestrator.seats.faults import SeatFailed
from orchestrator.seats.recording import Recorder, Unrecorded
from orchestrator.statuses import CANCELLED, DRAINED, FAILED, FINISHED

log = logging.getLogger("studio.playing")
CHUNK_TICKS = 100  # a cancel is noticed within one stretch of compiled ticks (~1 ms of play)


async def model_seats(recorder: Recorder) -> ModelSeats:
    """The seat layer for a world job with model or agent seats: keys from the recorder, usage and
    every turn recorded by it, and the turns it recorded before a fault replayed (a resumed run)."""
    creds, to_replay = await asyncio.gather(recorder.credentials(), recorder.replay())
    return ModelSeats(creds, recorder=recorder, to_replay=to_replay, agent_seat=AgentSeat.of)


def mark_silent(results: dict, turns: dict[int, dict]) -> None:
    """Scorecards of model seats whose provider never answered say so (`replied` false, the epilogue
    first), so nobody reads a silent seat's waits as play; summaries may leave them out on `replied`."""
    for entry in results["agents"]:
        t = turns.get(entry["seat"])
        entry["replied"] = t is None or t["answered"] > 0
        if not entry["replied"]:
            entry["epilogue"] = "No replies: the model never answered a turn. " + entry["epilogue"]


def seat_specs(seats: list[dict]) -> list[AgentSpec]:
    out = []
    for s in seats:
        policy = local_policy(s["model"]) if s.get("provider") == LOCAL else None
        out.append(AgentSpec(name=s["name"], model=s["model"], policy=policy))
    return out


def field_meta(match) -> list[dict]:
    return [{"name": a.name, "model": a.model, "anchor": a.anchor} for a in match.specs]


def specs_from_meta(meta: dict) -> list[AgentSpec]:
    return [AgentSpec(name=a["name"], model=a["model"], anchor=a["anchor"]) for a in meta["field"]]


def live_frame(match) -> dict:
    """Where every agent stands now, for the public match page while the match plays; an agent is
    [x, y, alive, health, satiety, null] like a replay frame's (net worth is known only from snapshots)."""
    a = match.agents
    return {"tick": int(match.tick), "agents": [[int(x), int(y), bool(al), float(h), float(s), None] for (x, y), al, h, s
                                                in zip(a.pos, a.alive, a.health, a.satiety)]}


def scripted_season(match, job: Job, should_stop: Callable[[], bool], on_tick: Callable[[int], None]) -> str:
    chunk = 1 if job.tick_ms > 0 else CHUNK_TICKS
    while match.tick < match.season_ticks:
        if should_stop():
            return CANCELLED
        match.run(until=min(match.tick + chunk, match.season_ticks))
        on_tick(match.tick)
        if job.tick_ms > 0:
            time.sleep(job.tick_ms / 1000)
    return "season_end"


def play(job: Job, players: ModelSeats | None, should_stop: Callable[[], bool] = lambda: False,
         on_tick: Callable[[int], None] = lambda t: None, on_frame: Callable[[dict], None] | None = None,
         should_drain: Callable[[], bool] = lambda: False, pack: bool = True) -> Outcome:
    """Play, score and pack one world match. `players` plays the model seats, None when every seat is
    scripted. on_frame, when given, receives live_frame() after every tick reported. should_drain:
    the service is stopping; model seats stop at the next tick boundary, and the run, its turns all
    recorded, resumes on the next start (a `drained` outcome). pack=False leaves a scripted match's log
    as a table (Outcome.log), for a worker that writes its chunk's matches together (job.land_chunk)."""
    if players is not None:
        return asyncio.run(play_async(job, players, should_stop, on_tick, on_frame, should_drain))
    started = int(time.time() * 1000)
    match = new_match(job, seat_specs)
    stop = scripted_season(match, job, should_stop, _framed(match, on_tick, on_frame))
    return packed(job, match, stop, None, job.usage(), 0.0, None, started, pack)


async def play_async(job: Job, players: ModelSeats, should_stop: Callable[[], bool] = lambda: False,
                     on_tick: Callable[[int], None] = lambda t: None, on_frame: Callable[[dict], None] | None = None,
                     should_drain: Callable[[], bool] = lambda: False, stopped: asyncio.Event | None = None) -> Outcome:
    """play() for a match with model seats, as a coroutine; stopped: set on a cancel (ModelSeats)."""
    started = int(time.time() * 1000)
    match = await asyncio.to_thread(new_match, job, seat_specs)  # a fork's rebuild: CPU, off the loop
    if job.meta.get("fork"):
        players.memories = await asyncio.to_thread(memories, job)
    ledger = Ledger(job.usage())
    usage = ledger.seats
    error = None
    try:
        stop, _ = await players.play_async(match, job, usage, should_stop, _framed(match, on_tick, on_frame),
                                           should_drain, stopped)
    except (SeatFailed, Unrecorded) as e:  # a key rejected, a provider down, a store that stays full
        stop, error = FAILED, e.envelope()
    except Exception as e:  # anything else: the run fails, and the turns already paid stay metered
        log.exception("run %s: the match stopped at tick %d", job.run_id, match.tick)
        stop, error = FAILED, internal_error(f"the match stopped at tick {match.tick}", e)
    spend = ledger.usd  # whatever ended the season: every turn paid is in the ledger
    turns = [players.turns.get(i) for i in range(len(job.seats))]
    if stop == FAILED and match.tick == 0:  # nothing played: no match to archive
        return failed(job, usage, error, started, turns)
    if stop == DRAINED:  # nothing archived: the recorder holds every turn, and the run resumes
        return Outcome(run_id=job.run_id, status=DRAINED, stop_reason=DRAINED, match_ticks=match.tick,
                       results=None, match_id=None, usage=usage, spend_usd=spend, started_at_ms=started,
                       turns=turns)
    try:
        return await asyncio.to_thread(packed, job, match, stop, players, usage, spend, error, started)
    except Exception:  # the season was played and metered; only its record failed
        ledger.settle_turns(match.tick)
        return unrecorded(job, usage, started, turns, match.tick, players.transcript)


def _framed(match, on_tick: Callable[[int], None], on_frame: Callable[[dict], None] | None) -> Callable[[int], None]:
    if on_frame is None:
        return on_tick

    def framed(t: int) -> None:
        on_tick(t)
        on_frame(live_frame(match))
    return framed


def packed(job: Job, match, stop: str, players: ModelSeats | None, usage: list[dict], spend: float,
           error: dict | None, started: int, pack: bool = True) -> Outcome:
    """A played match finished, scored and packed for the head (pack=False: its log left a table)."""
    # agent turns settle as seats x ticks played (docs/RUNS.md), whoever plays the seat; a
    # fork's seats played from its tick on
    Ledger(usage).settle_turns(match.tick - match.start_tick)
    match.finish(stop)  # a season that ran out has finished itself already; this closes a stopped one
    meta = dict(job.meta, run_id=job.run_id, match_id=job.match_id, field=field_meta(match),
                season_ticks=job.season_ticks, seed=job.env["seed"], spawn_seed=job.env["spawn_seed"])
    if match.config.reseeds:  # where a fork drew its streams afresh: a replay of the log does the same
        meta["reseeds"] = [list(r) for r in match.config.reseeds]
    cols = match.columns()
    results = rubric.score(cols, specs_from_meta(meta))
    # a scripted match is kept as its inputs: its log is derived on demand (analytics/archive/derive.py)
    inputs = derive.record(match, meta, results) if players is None and job.derives else None
    log = log_table(job, cols, meta, match.messages) if inputs is None else None
    if job.meta.get("fork"):
        results["fork"] = {"run_id": job.meta["fork"]["run_id"], "tick": job.meta["fork"]["tick"]}
    turns, transcript = None, None
    if players is not None:
        mark_silent(results, players.turns)
        transcript = transcript_ipc(players.transcript)
        turns = [players.turns.get(i) for i in range(len(job.seats))]
    status = {CANCELLED: CANCELLED, FAILED: FAILED}.get(stop, FINISHED)  # the stop reason says the status
    # the archive's seat rows are made here, with the scores, whether the bytes are packed now or the
    # chunk's rows go in one table (job.land_chunk)
    rows = seat_rows(job, results)
    out = Outcome(run_id=job.run_id, status=status, stop_reason=stop, match_ticks=results["match_ticks"],
                  results=results, match_id=job.match_id, usage=usage, spend_usd=spend, error=error,
                  started_at_ms=started, turns=turns, transcript=transcript, log=log, inputs=inputs,
                  seat_rows=rows)
    return packed_bytes(out, job) if pack else out
