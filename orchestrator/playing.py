"""Playing one run's match from a job description, wherever it runs (a Ray worker or in-process).

Plain functions: no store, no Ray, no file. The worker calls `play_job`; it plays the season (compiled
in stretches when every seat is scripted, tick by tick when models play), scores the match from its
finished event columns (the same columns the archive stores; the rubric never reads live state), and
hands the event log and seat rows back as Arrow IPC bytes for the head to archive
(analytics.archive.store). A worker on another node therefore needs no access to the data dir.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

from analytics.archive import format as archive
from engine import rubric
from engine.match import AgentSpec
from engine.scenario import build_match, local_policy
from orchestrator.seats.providers import SeatFailed

log = logging.getLogger("studio.playing")
CHUNK_TICKS = 100  # a cancel is noticed within one stretch of compiled ticks (~1 ms of play)


@dataclass
class Job:
    run_id: str
    match_id: str
    data_dir: str               # in-process play only (model seats' keys without a recorder); "" on a worker
    season_ticks: int
    env: dict                   # resolved, seeds included
    seats: list[dict]           # resolved roster entries (run view's roster)
    meta: dict = field(default_factory=dict)  # scenario id and hashes, batch id: stored with the log
    spend_cap_usd: float | None = None
    tick_ms: float = 0.0        # operator's pace for scripted matches (config [runs] min_tick_ms); 0: flat out
    account_id: str | None = None  # whose stored keys the model seats use (decrypted where they play)
    head_node: str = ""         # the Ray node the dispatcher runs on: a worker there hands back uncompressed


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
    turns: list[dict | None] | None = None  # per seat: model turn counts (None for scripted seats)
    events: bytes | None = None   # the event log, Arrow IPC (LZ4), for the head to land
    seats: bytes | None = None    # the seat rows, likewise
    transcript: bytes | None = None  # model turns, likewise (None when every seat is scripted)
    game: bytes | None = None     # an arena game's graded log (JSON), likewise


def unplayed(job: Job) -> Outcome:
    """A job cancelled before its worker began it: no match, nothing metered."""
    return Outcome(run_id=job.run_id, status="cancelled", stop_reason="cancelled", match_ticks=0, results=None,
                   match_id=None, usage=[{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}
                                         for _ in job.seats], spend_usd=0.0)


def model_players(job: Job, recorder=None):
    """The seat layer for a job with model seats. recorder: the head node's Recorder actor
    (orchestrator.recorder), which hands over the seats' keys in the call and takes the usage
    reports; the worker itself opens no file of the control plane. Without one (in-process play) the
    keys come from the data dir directly."""
    if all(s["provider"] == "local" for s in job.seats) or job.meta.get("scenario_id", "").startswith("arena:"):
        return None
    from orchestrator.seats.player import Credential, ModelSeats

    if recorder is None:
        from orchestrator import recorder as rec
        from orchestrator.core import Core

        creds = rec.credentials(Core.open(job.data_dir), job.run_id)
        report = None
    else:
        import ray

        creds = ray.get(recorder.credentials.remote(job.run_id))

        async def report(tick: int, seats: dict) -> None:
            await recorder.report.remote(job.run_id, tick, seats)
    return ModelSeats({int(i): Credential(c["key"], c["base_url"], c["usd_per_mtok"], c.get("private_ok", False))
                       for i, c in creds.items()},
                      report=report)


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
        policy = local_policy(s["model"]) if s.get("provider") == "local" else None
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


def play_job(job: Job, should_stop: Callable[[], bool] = lambda: False,
             on_tick: Callable[[int], None] = lambda t: None, players=None, recorder=None,
             on_frame: Callable[[dict], None] | None = None) -> Outcome:
    """Play, archive, score. `players` plays the model seats (orchestrator.seats), None when every
    seat is scripted. on_frame, when given, receives live_frame() after every tick reported."""
    if job.meta.get("scenario_id", "").startswith("arena:"):  # two-seat games beside the world
        from orchestrator.arena_playing import play_arena_job

        return play_arena_job(job, should_stop, on_tick, recorder)
    started = int(time.time() * 1000)
    match = build_match(job.season_ticks, job.env, seat_specs(job.seats))
    if on_frame is not None:
        report_tick = on_tick

        def on_tick(t: int) -> None:
            report_tick(t)
            on_frame(live_frame(match))
    stop = "season_end"
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0} for _ in job.seats]
    spend, error = 0.0, None
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
        except SeatFailed as e:  # a key rejected, a model unknown, a provider down: the run cannot go on
            stop, error = "failed", e.envelope()
        except Exception as e:  # anything else: the run fails, and the turns already paid stay metered
            log.exception("run %s: the match stopped at tick %d", job.run_id, match.tick)
            stop, error = "failed", {"error": "internal_error", "message": f"the match stopped at tick "
                                     f"{match.tick}: {type(e).__name__}: {str(e)[:200]}"}
        spend = sum(u["usd"] for u in usage)
        if stop == "failed" and match.tick == 0:  # nothing played: no match to archive
            return Outcome(run_id=job.run_id, status="failed", stop_reason="failed", match_ticks=0, results=None,
                           match_id=None, usage=usage, spend_usd=spend, error=error, started_at_ms=started,
                           turns=[players.turns.get(i) for i in range(len(job.seats))])
    # agent turns settle as seats x ticks played (CONTRACT.md section 4), whoever plays the seat
    for u in usage:
        u["agent_turns"] = match.tick
    match.finish(stop)  # a season that ran out has finished itself already; this closes a stopped one
    meta = dict(job.meta, run_id=job.run_id, match_id=job.match_id, field=field_meta(match),
                season_ticks=job.season_ticks, seed=job.env["seed"], spawn_seed=job.env["spawn_seed"])
    cols = match.columns()
    # LZ4 only for bytes that cross a network: on the head's own node Ray's object store is shared
    # memory, and compressing the log cost as much as playing it
    compress = job.meta.get("node_id") != job.head_node
    events = archive.to_ipc(archive.events_table(job.match_id, cols, meta, match.messages), compress)
    results = rubric.score(cols, specs_from_meta(meta))
    if players is not None:
        mark_silent(results, players.turns)
    run_row = {"run_id": job.run_id, "match_id": job.match_id, "batch_id": job.meta.get("batch_id"),
               "scenario_id": job.meta.get("scenario_id"), "scenario_hash": job.meta.get("scenario_hash"),
               "config_hash": job.meta.get("config_hash"), "seed": job.env["seed"],
               "spawn_seed": job.env["spawn_seed"],
               "scaffolds": {i: s.get("scaffold") for i, s in enumerate(job.seats)},
               "providers": {i: s.get("provider") for i, s in enumerate(job.seats)}}
    seats = archive.to_ipc(archive.seat_table(archive.seat_rows(run_row, results)), compress)
    turns, transcript = None, None
    if players is not None:
        transcript = archive.to_ipc(archive.transcript_table(players.transcript))
        turns = [players.turns.get(i) for i in range(len(job.seats))]
    status = {"cancelled": "cancelled", "failed": "failed"}.get(stop, "finished")
    return Outcome(run_id=job.run_id, status=status, stop_reason=stop, match_ticks=results["match_ticks"],
                   results=results, match_id=job.match_id, usage=usage, spend_usd=spend, error=error,
                   started_at_ms=started, turns=turns, events=events, seats=seats, transcript=transcript)
