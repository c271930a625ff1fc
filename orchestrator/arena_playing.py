"""Playing one arena run's game on a worker: scripted and model seats, grading by the oracle on the
same worker, the graded log archived, results as the world's (CONTRACT.md section 11).

The archive holds `arena/<match_id>.json`: meta, the graded moves (the public log) and the results.
The per-seat rows go to the same seat files as the world's, so analytics reads arena results too.
"""
from __future__ import annotations

import asyncio
import functools
import json
import os
import time

from engine.arena.play import Tools, play
from orchestrator import archive
from orchestrator.seats.providers import SeatFailed


@functools.cache
def tools() -> Tools:
    """One set per worker process: Stockfish processes and the solver's table live across games."""
    return Tools()


def arena_path(data_dir, match_id: str):
    return archive.archive_dir(data_dir) / "arena" / f"{match_id}.json"


def read_game(data_dir, match_id: str) -> dict | None:
    p = arena_path(data_dir, match_id)
    return json.loads(p.read_text()) if p.exists() else None


def _model_seats(job, loop):
    from orchestrator.arena_seats import ArenaSeat
    from orchestrator.core import Core
    from orchestrator.seats.funding import credentials
    from orchestrator.seats.player import Credential

    model = {i: s for i, s in enumerate(job.seats) if s["provider"] != "local"}
    if not model:
        return {}
    creds = credentials(Core.open(job.data_dir), job.account_id, job.seats, [s["funding"] for s in job.seats])
    return {i: ArenaSeat(i, s, key=(creds.get(i) or Credential(None)).key,
                         base_url=(creds.get(i) or Credential(None)).base_url,
                         turn_timeout_ms=job.env["turn_timeout_ms"], loop=loop) for i, s in model.items()}


def play_arena_job(job, should_stop, on_tick):
    from orchestrator.playing import Outcome

    started = int(time.time() * 1000)
    game_id = job.meta["scenario_id"]
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0} for _ in job.seats]
    loop = asyncio.new_event_loop()
    seats = {}
    try:
        seats = _model_seats(job, loop)
        out = play(game_id, [{"name": s["name"], "model": s["model"]} for s in job.seats],
                   first_seat=job.env["first_seat"], seed=job.env["seed"], tools=tools(), answerers=seats,
                   should_stop=should_stop, on_ply=on_tick)
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
    path = arena_path(job.data_dir, job.match_id)
    os.makedirs(path.parent, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"meta": meta, "moves": out["moves"], "results": results}))
    os.replace(tmp, path)
    run_row = {"run_id": job.run_id, "match_id": job.match_id, "batch_id": job.meta.get("batch_id"),
               "scenario_id": game_id, "scenario_hash": job.meta.get("scenario_hash"),
               "config_hash": job.meta.get("config_hash"), "seed": job.env["seed"],
               "spawn_seed": job.env["spawn_seed"], "scaffolds": {i: s.get("scaffold") for i, s in enumerate(job.seats)}}
    archive.write_seats(job.data_dir, job.match_id, archive.seat_rows(run_row, results))
    cancelled = results["game"]["termination"] == "cancelled"
    return Outcome(run_id=job.run_id, status="cancelled" if cancelled else "finished",
                   stop_reason="cancelled" if cancelled else "season_end", match_ticks=results["match_ticks"],
                   results=results, match_id=job.match_id, usage=usage, spend_usd=sum(u["usd"] for u in usage),
                   started_at_ms=started)


def _settle(usage, seats, turns=None):
    for i, u in enumerate(usage):
        if i in seats:
            u.update(seats[i].usage)
        elif turns is not None:
            u["agent_turns"] = turns[i]["answers"]


def _failed(job, usage, seats, error, Outcome):
    _settle(usage, seats)
    return Outcome(run_id=job.run_id, status="failed", stop_reason="failed", match_ticks=0, results=None,
                   match_id=None, usage=usage, spend_usd=sum(u["usd"] for u in usage), error=error)
