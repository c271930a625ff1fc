"""Playing one run's match from a job description, wherever it runs (a Ray worker or in-process).

Plain functions: no store, no Ray. The worker calls `play_job`; it plays the season (compiled in
stretches when every seat is scripted, tick by tick when models play), writes the event log to
Parquet, then scores the match from the stored file, never from the live state.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from engine import rubric
from engine.match import AgentSpec
from engine.scenario import build_match
from orchestrator import archive
from orchestrator.seats.providers import SeatFailed

CHUNK_TICKS = 100  # a cancel is noticed within one stretch of compiled ticks (~1 ms of play)


@dataclass
class Job:
    run_id: str
    match_id: str
    data_dir: str
    season_ticks: int
    env: dict                   # resolved, seeds included
    seats: list[dict]           # resolved roster entries (run view's roster)
    meta: dict = field(default_factory=dict)  # scenario id and hashes, batch id: stored with the log
    spend_cap_usd: float | None = None
    tick_ms: float = 0.0        # operator's pace for scripted matches (config [runs] min_tick_ms); 0: flat out
    account_id: str | None = None  # whose stored keys the model seats use (decrypted where they play)


@dataclass
class Outcome:
    run_id: str
    status: str                 # finished, cancelled or failed
    stop_reason: str
    match_ticks: int
    results: dict | None
    match_id: str | None          # the archived match (None when nothing was archived)
    usage: list[dict]           # per seat: agent_turns, input_tokens, output_tokens, usd
    spend_usd: float
    error: dict | None = None
    started_at_ms: int | None = None  # when the worker began playing (a job may wait behind another)


def _failed(job: Job, match, usage: list[dict], error: dict) -> Outcome:
    for u in usage:
        u["agent_turns"] = match.tick
    return Outcome(run_id=job.run_id, status="failed", stop_reason="failed", match_ticks=match.tick, results=None,
                   match_id=None, usage=usage, spend_usd=sum(u["usd"] for u in usage), error=error)


def model_players(job: Job):
    """The seat layer for a job with model seats, keys decrypted here (they never travel in the job)."""
    if all(s["provider"] == "local" for s in job.seats):
        return None
    from orchestrator.core import Core
    from orchestrator.seats.funding import credentials
    from orchestrator.seats.player import ModelSeats

    core = Core.open(job.data_dir)
    return ModelSeats(credentials(core, job.account_id, job.seats, [s["funding"] for s in job.seats]))


def seat_specs(seats: list[dict]) -> list[AgentSpec]:
    out = []
    for s in seats:
        policy = s["model"].split("/", 1)[1] if s.get("provider") == "local" else None
        out.append(AgentSpec(name=s["name"], model=s["model"], policy=policy))
    return out


def field_meta(match) -> list[dict]:
    return [{"name": a.name, "model": a.model, "anchor": a.anchor} for a in match.specs]


def specs_from_meta(meta: dict) -> list[AgentSpec]:
    return [AgentSpec(name=a["name"], model=a["model"], anchor=a["anchor"]) for a in meta["field"]]


def play_job(job: Job, should_stop: Callable[[], bool] = lambda: False,
             on_tick: Callable[[int], None] = lambda t: None, players=None) -> Outcome:
    """Play, archive, score. `players` plays the model seats (orchestrator.seats), None when every
    seat is scripted."""
    started = int(time.time() * 1000)
    match = build_match(job.season_ticks, job.env, seat_specs(job.seats))
    stop = "season_end"
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0} for _ in job.seats]
    spend = 0.0
    if players is None:
        chunk = 1 if job.tick_ms > 0 else CHUNK_TICKS
        while match.tick < match.season_ticks:
            if should_stop():
                stop = "cancelled"
                break
            match.run(until=min(match.tick + chunk, match.season_ticks))
            on_tick(match.tick)
            if job.tick_ms > 0:
                time.sleep(job.tick_ms / 1000)
    else:
        try:
            stop, spend = players.play(match, job, usage, should_stop, on_tick)
        except SeatFailed as e:  # a rejected key or unknown model: the run cannot go on
            return _failed(job, match, usage, e.envelope())
        except Exception as e:  # anything else: the run fails, and the turns already paid stay metered
            return _failed(job, match, usage, {"error": "internal_error", "message": f"the match stopped at tick "
                                               f"{match.tick}: {type(e).__name__}: {str(e)[:200]}"})
    # agent turns settle as seats x ticks played (CONTRACT.md section 4), whoever plays the seat
    for u in usage:
        u["agent_turns"] = match.tick
    match.finish(stop)  # a season that ran out has finished itself already; this closes a stopped one
    meta = dict(job.meta, run_id=job.run_id, match_id=job.match_id, field=field_meta(match),
                season_ticks=job.season_ticks, seed=job.env["seed"], spawn_seed=job.env["spawn_seed"])
    path = archive.write_events(job.data_dir, job.match_id, match.columns(), meta, match.messages)
    cols, stored_meta = archive.read_events(path, with_text=False)
    results = rubric.score(cols, specs_from_meta(stored_meta))
    run_row = {"run_id": job.run_id, "match_id": job.match_id, "batch_id": job.meta.get("batch_id"),
               "scenario_id": job.meta.get("scenario_id"), "scenario_hash": job.meta.get("scenario_hash"),
               "config_hash": job.meta.get("config_hash"), "seed": job.env["seed"],
               "spawn_seed": job.env["spawn_seed"],
               "scaffolds": {i: s.get("scaffold") for i, s in enumerate(job.seats)},
               "providers": {i: s.get("provider") for i, s in enumerate(job.seats)}}
    rows = archive.seat_rows(run_row, results)
    archive.write_seats(job.data_dir, job.match_id, rows)
    status = "cancelled" if stop == "cancelled" else "finished"
    return Outcome(run_id=job.run_id, status=status, stop_reason=stop, match_ticks=results["match_ticks"],
                   results=results, match_id=job.match_id, usage=usage, spend_usd=spend,
                   started_at_ms=started)
