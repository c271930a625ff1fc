"""A job and its outcome: what the dispatcher hands a worker, and what comes back.

A worker on another node needs no access to the data dir: the outcome carries the match's archive
rows as Arrow IPC bytes for the head to land (analytics.archive.store). The archive's formats are
reached from here only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from analytics.archive import format as archive
from orchestrator.seats.player import new_usage


@dataclass
class Job:
    run_id: str
    match_id: str
    data_dir: str               # in-process play only (model seats' keys without a recorder); "" on a worker
    season_ticks: int
    env: dict                   # resolved, seeds included
    seats: list[dict]           # resolved roster entries (run view's roster)
    meta: dict = field(default_factory=dict)  # scenario id and hashes, batch_id: stored with the log
    spend_cap_usd: float | None = None
    tick_ms: float = 0.0        # operator's pace for scripted matches (config [runs] min_tick_ms); 0: flat out
    account_id: str | None = None  # whose stored keys the model seats use (decrypted where they play)
    head_node: str = ""         # the Ray node the dispatcher runs on: a worker there hands back uncompressed
    agents: str = ""            # the head's exchange of agent turns, by name ("" without agent seats)

    @property
    def scenario_id(self) -> str:
        return self.meta.get("scenario_id", "")

    def usage(self) -> list[dict]:
        """Every seat's usage, zeroed: the one shape a run's usage takes (seats.player.new_usage)."""
        return [new_usage() for _ in self.seats]


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
                   match_id=None, usage=job.usage(), spend_usd=0.0)


def failed(job: Job, usage: list[dict], error: dict, started: int | None, turns: list | None,
           transcript: bytes | None = None) -> Outcome:
    """A job whose play failed before anything was archived; the turns already paid stay metered, and
    the transcript of the turns asked (when the worker holds it) is kept with the run."""
    return Outcome(run_id=job.run_id, status="failed", stop_reason="failed", match_ticks=0, results=None,
                   match_id=None, usage=usage, spend_usd=sum(u["usd"] for u in usage), error=error,
                   started_at_ms=started, turns=turns, transcript=transcript)


def internal_error(where: str, e: Exception) -> dict:
    """run.error for an exception no seat explains; the run fails rather than score a broken match."""
    return {"error": "internal_error", "message": f"{where}: {type(e).__name__}: {str(e)[:200]}"}


def run_row(job: Job) -> dict:
    """The run as the archive's seat rows name it: one builder for every kind of job."""
    return {"run_id": job.run_id, "match_id": job.match_id, "batch_id": job.meta.get("batch_id"),
            "scenario_id": job.meta.get("scenario_id"), "scenario_hash": job.meta.get("scenario_hash"),
            "config_hash": job.meta.get("config_hash"), "seed": job.env["seed"], "spawn_seed": job.env["spawn_seed"],
            "scaffolds": {i: s.get("scaffold") for i, s in enumerate(job.seats)},
            "providers": {i: s.get("provider") for i, s in enumerate(job.seats)}}


def events_ipc(job: Job, cols: dict, meta: dict, messages: list[str], compress: bool) -> bytes:
    return archive.to_ipc(archive.events_table(job.match_id, cols, meta, messages), compress)


def seats_ipc(job: Job, results: dict, compress: bool = True) -> bytes:
    return archive.to_ipc(archive.seat_table(archive.seat_rows(run_row(job), results)), compress)


def transcript_ipc(rows: list[dict]) -> bytes:
    return archive.to_ipc(archive.transcript_table(rows))
