"""Playing one arena run's game on a worker: scripted and model seats, grading by the oracle on the
same worker, the graded log archived, results as the world's (CONTRACT.md section 11).

The worker writes no file: it hands the graded log (meta, the graded moves that are the public log,
and the results) back as JSON and the per-seat rows as Arrow IPC; the head lands them in the archive
(`arena/<match_id>.json`, and the same seat files as the world's, so analytics reads arena results too).
"""
from __future__ import annotations

import asyncio
import functools
import json
import time

from analytics.archive import format as archive
from engine.arena.play import Tools, play
from orchestrator.seats.providers import SeatFailed


@functools.cache
def tools() -> Tools:
    """One set per worker process: Stockfish processes and the solver's table live across games."""
    return Tools()


def read_game(data_dir, match_id: str) -> dict | None:
    from analytics.archive.store import Archive

    return Archive.of(data_dir).read_game(match_id)


def _credentials(job, recorder) -> dict[int, dict]:
    """The seats' keys from the head's Recorder (in the call, never on the worker's disk); in-process
    play without one reads them from the data dir."""
    if recorder is not None:
        import ray

        return {int(i): c for i, c in ray.get(recorder.credentials.remote(job.run_id)).items()}
    from orchestrator import recorder as rec
    from orchestrator.core import Core

    return {int(i): c for i, c in rec.credentials(Core.open(job.data_dir), job.run_id).items()}


def _model_seats(job, loop, recorder=None):
    from orchestrator.arena_seats import ArenaSeat

    model = {i: s for i, s in enumerate(job.seats) if s["provider"] != "local"}
    if not model:
        return {}
    creds = _credentials(job, recorder)
    return {i: ArenaSeat(i, s, key=(creds.get(i) or {}).get("key"),
                         base_url=(creds.get(i) or {}).get("base_url"),
                         turn_timeout_ms=job.env["turn_timeout_ms"], loop=loop,
                         usd_per_mtok=(creds.get(i) or {}).get("usd_per_mtok"),
                         private_ok=(creds.get(i) or {}).get("private_ok", False)) for i, s in model.items()}


def _reporter(job, seats, recorder, on_tick):
    """After every ply: the live ply, and the model seats' usage and counts written to the head, so a
    worker that dies mid-game loses no metered spend (the world reports once per tick)."""
    if recorder is None or not seats:
        return on_tick
    import ray

    def on_ply(ply: int) -> None:
        on_tick(ply)
        # waited for: reports are totals, and one overtaken by its predecessor would roll them back
        ray.get(recorder.report.remote(job.run_id, ply, {i: {"usage": dict(s.usage), "turns": dict(s.turns)}
                                                         for i, s in seats.items()}))
    return on_ply


def play_arena_job(job, should_stop, on_tick, recorder=None):
    from orchestrator.playing import Outcome

    started = int(time.time() * 1000)
    game_id = job.meta["scenario_id"]
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0} for _ in job.seats]
    loop = asyncio.new_event_loop()
    seats = {}
    try:
        seats = _model_seats(job, loop, recorder)
        out = play(game_id, [{"name": s["name"], "model": s["model"]} for s in job.seats],
                   first_seat=job.env["first_seat"], seed=job.env["seed"], tools=tools(), answerers=seats,
                   should_stop=should_stop, on_ply=_reporter(job, seats, recorder, on_tick))
    except SeatFailed as e:
        return _failed(job, usage, seats, e.envelope(), Outcome)
    except Exception as e:  # the run fails; turns already paid stay metered
        return _failed(job, usage, seats, {"error": "internal_error",
                                           "message": f"the game stopped: {type(e).__name__}: {str(e)[:200]}"}, Outcome)
    finally:
        for s in seats.values():
            s.close()
        loop.close()
    _settle(usage, seats, out["turns"])
    results = out["results"]
    meta = dict(job.meta, run_id=job.run_id, match_id=job.match_id, seed=job.env["seed"],
                first_seat=job.env["first_seat"], seats=[{"name": s["name"], "model": s["model"]} for s in job.seats])
    game = json.dumps({"meta": meta, "moves": out["moves"], "results": results}).encode()
    run_row = {"run_id": job.run_id, "match_id": job.match_id, "batch_id": job.meta.get("batch_id"),
               "scenario_id": game_id, "scenario_hash": job.meta.get("scenario_hash"),
               "config_hash": job.meta.get("config_hash"), "seed": job.env["seed"],
               "spawn_seed": job.env["spawn_seed"], "scaffolds": {i: s.get("scaffold") for i, s in enumerate(job.seats)},
               "providers": {i: s.get("provider") for i, s in enumerate(job.seats)}}
    seat_ipc = archive.to_ipc(archive.seat_table(archive.seat_rows(run_row, results)))
    cancelled = results["game"]["termination"] == "cancelled"
    return Outcome(run_id=job.run_id, status="cancelled" if cancelled else "finished",
                   stop_reason="cancelled" if cancelled else "season_end", match_ticks=results["match_ticks"],
                   results=results, match_id=job.match_id, usage=usage, spend_usd=sum(u["usd"] for u in usage),
                   started_at_ms=started, seats=seat_ipc, game=game, turns=_turns(job, seats),
                   transcript=_transcript(seats))


def _settle(usage, seats, turns=None):
    for i, u in enumerate(usage):
        if i in seats:
            u.update(seats[i].usage)
            if turns is not None:  # the play loop judged legality: illegal answers less the timeouts
                seats[i].turns["invalid"] = turns[i]["illegal"] - turns[i]["timed_out"]
                rows = [r for r in seats[i].transcript if r["error"] is None]
                if rows and not rows[-1]["refused"] and seats[i].turns["invalid"] > sum(bool(r["refused"]) for r in rows):
                    rows[-1]["refused"] = ["the third illegal answer in one turn: the game is forfeit"]
        elif turns is not None:
            u["agent_turns"] = turns[i]["answers"]


def _transcript(seats) -> bytes | None:
    """Every model answer of the game (Arrow IPC), in ply order, for the owner's transcript."""
    rows = sorted((r for s in seats.values() for r in s.transcript), key=lambda r: r["tick"])
    return archive.to_ipc(archive.transcript_table(rows)) if seats else None


def _turns(job, seats) -> list[dict | None]:
    return [dict(seats[i].turns) if i in seats else None for i in range(len(job.seats))]


def _failed(job, usage, seats, error, Outcome):
    _settle(usage, seats)
    return Outcome(run_id=job.run_id, status="failed", stop_reason="failed", match_ticks=0, results=None,
                   match_id=None, usage=usage, spend_usd=sum(u["usd"] for u in usage), error=error,
                   turns=_turns(job, seats))
