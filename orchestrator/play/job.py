"""A job and its outcome: what the dispatcher hands a worker, and what comes back.

A worker needs no access to the data dir. It lands the match's files in the archive itself when it can
reach it (the job names the archive, and the node that can write it when it is one node's disk), and
hands back only what the head records (`for_head`, an Ended record): the run's columns, results and
roster in the text the runs repository stores (its own encoders, run here and not on the head), and a
manifest of the files it wrote. A scripted worker writes the matches of one call together (`land_chunk`: one part per series, in the archive's final format); a
model worker lands each match as it ends. A worker that cannot reach the archive hands the match's
Arrow IPC bytes back instead, for the head to land. The archive's formats are reached from here only.
"""
from __future__ import annotations

import functools
import json
import logging
import os
from dataclasses import dataclass, field

from analytics.archive import derive
from analytics.archive import format as archive
from analytics.archive.store import Archive
from orchestrator.errors import envelope
from orchestrator.records.run import Ended
from orchestrator.seats.ledger import Ledger, new_usage
from orchestrator.statuses import CANCELLED, FAILED
from orchestrator.store import runs as stored_runs

log = logging.getLogger("studio.playing")


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
    archive: str = ""           # the archive's location, where the worker lands the match itself; "" hands it back
    archive_node: str = ""      # the one Ray node that can write `archive` (a path on its disk); "" every node
    agents: str = ""            # the head's exchange of agent turns, by name ("" without agent seats)
    keep_log: bool = True       # False ([archive] events = "derived"): a scripted match keeps its inputs, not its log
    tenure: str = ""            # the dispatcher lease's tenure it was handed in; the recorder lands its writes only in it

    @property
    def scenario_id(self) -> str:
        return self.meta.get("scenario_id", "")

    @property
    def derives(self) -> bool:
        """A scripted match of this job is archived as its inputs (analytics/archive/derive.py), its log
        derived on demand; a fork keeps its log (its start is another match's log)."""
        return not self.keep_log and not self.meta.get("fork")

    @property
    def lands_here(self) -> bool:
        """The worker playing this job (its node in meta) writes the match's files itself."""
        return bool(self.archive) and self.archive_node in ("", self.meta.get("node_id"))

    @property
    def compress(self) -> bool:
        """LZ4 for bytes that cross a network: to a shared archive, or back to a head on another node. On
        one node they stay in shared memory or on the local disk, where compressing cost as much as playing."""
        if self.lands_here:
            return not self.archive_node
        return self.meta.get("node_id") != self.head_node

    def usage(self) -> list[dict]:
        """Every seat's usage, zeroed: the one shape a run's usage takes (the seat ledger's `new_usage`)."""
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
    events: bytes | None = None   # the event log, Arrow IPC (LZ4), for whoever lands it
    seats: bytes | None = None    # the seat rows, likewise
    transcript: bytes | None = None  # model turns, likewise (None when every seat is scripted)
    game: bytes | None = None     # an arena game's graded log (JSON), likewise
    log: object = None            # the event log as an Arrow table, not yet packed (world.play's pack=False)
    inputs: dict | None = None    # instead of the log, a scripted match's record (see archive/derive.py)
    seat_rows: list[dict] | None = None  # the archive's seat rows, made where the match was scored


def unplayed(job: Job) -> Outcome:
    """A job cancelled before its worker began it: no match, nothing metered."""
    return Outcome(run_id=job.run_id, status=CANCELLED, stop_reason="cancelled", match_ticks=0, results=None,
                   match_id=None, usage=job.usage(), spend_usd=0.0)


def failed(job: Job, usage: list[dict], error: dict, started: int | None, turns: list | None,
           transcript: bytes | None = None) -> Outcome:
    """A job whose play failed before anything was archived; the turns already paid stay metered, and
    the transcript of the turns asked (when the worker holds it) is kept with the run."""
    return Outcome(run_id=job.run_id, status=FAILED, stop_reason="failed", match_ticks=0, results=None,
                   match_id=None, usage=usage, spend_usd=Ledger(usage).usd, error=error,
                   started_at_ms=started, turns=turns, transcript=transcript)


UNRECORDED = ("the match was played to tick {tick}, but its record could not be written to the archive (a fault in "
              "the service, logged under this run's id); the turns it played stay metered")


def unrecorded(job: Job, usage: list[dict], started: int | None, turns: list | None, tick: int,
               transcript: list[dict] | bytes | None) -> Outcome:
    """A played match whose record (event log, seat rows) could not be made or packed, whatever the
    reason: the run fails naming that, never with the exception's text (the worker logs it), and keeps
    its transcript (transcript: the rows, or their packed bytes) beside what the recorder wrote."""
    log.exception("run %s: the match's record could not be written", job.run_id)
    if isinstance(transcript, list):
        try:
            transcript = transcript_ipc(transcript)
        except Exception:  # the recorder's rows stay the run's transcript
            log.exception("run %s: its transcript could not be packed", job.run_id)
            transcript = None
    return failed(job, usage, envelope("internal_error", UNRECORDED.format(tick=tick)), started, turns, transcript)


def internal_error(where: str, e: Exception) -> dict:
    """run.error for an exception no seat explains; the run fails rather than score a broken match."""
    return envelope("internal_error", f"{where}: {type(e).__name__}: {str(e)[:200]}")


def run_row(job: Job) -> dict:
    """The run as the archive's seat rows name it: one builder for every kind of job."""
    return {"run_id": job.run_id, "match_id": job.match_id, "batch_id": job.meta.get("batch_id"),
            "scenario_id": job.meta.get("scenario_id"), "scenario_hash": job.meta.get("scenario_hash"),
            "config_hash": job.meta.get("config_hash"), "seed": job.env["seed"], "spawn_seed": job.env["spawn_seed"],
            "scaffolds": {i: s.get("scaffold") for i, s in enumerate(job.seats)},
            "providers": {i: s.get("provider") for i, s in enumerate(job.seats)}}


def log_table(job: Job, cols: dict, meta: dict, messages: list[str]):
    """The match's event log as the archive's Arrow table (the columns as they are: no Python rows)."""
    return archive.events_table(job.match_id, cols, meta, messages)


def packed_bytes(o: Outcome, job: Job) -> Outcome:
    """A world match's log and seat rows as the Arrow IPC bytes a worker lands alone or hands back."""
    if o.log is not None or o.inputs is not None:
        o.events = archive.to_ipc(o.log, job.compress) if o.log is not None else None
        o.seats = seats_ipc(job, o.results, job.compress, o.inputs, o.seat_rows)
        o.log = o.inputs = o.seat_rows = None
    return o


def seat_rows(job: Job, results: dict) -> list[dict]:
    """The match's rows of the archive's seat table, one per agent, from its scored results."""
    return archive.seat_rows(run_row(job), results)


def seats_ipc(job: Job, results: dict, compress: bool = True, inputs: dict | None = None,
              rows: list[dict] | None = None) -> bytes:
    table = archive.seat_table(seat_rows(job, results) if rows is None else rows)
    if inputs is not None:  # the record of a match whose log is not kept travels with its seat rows
        table = table.replace_schema_metadata({b"studio": json.dumps({derive.KEY: inputs}).encode()})
    return archive.to_ipc(table, compress)


def transcript_ipc(rows: list[dict]) -> bytes:
    return archive.to_ipc(archive.transcript_table(rows))


@functools.lru_cache(maxsize=4)
def _archive(uri: str) -> Archive:
    """One per worker process and location: opening it creates its directories."""
    return Archive(uri)


def land_chunk(played: list[tuple[Job, Outcome]]) -> dict[str, dict | None]:
    """The scripted matches of one worker call that this worker can land, written together: one part
    per series (the archive's `land_part`), so the archive's write costs are paid once
    per chunk and its compaction is a move. Returns run id -> the manifest `for_head` records (None:
    the archive refused the part, and the match goes back to the head as bytes); runs left out were
    not for this worker to land."""
    groups: dict[tuple[str, str], list[tuple[Job, Outcome]]] = {}
    for job, o in played:
        if (o.log is not None or o.inputs is not None) and job.lands_here:
            groups.setdefault((job.archive, job.meta.get("batch_id") or o.match_id), []).append((job, o))
    out: dict[str, dict | None] = {}
    for (uri, key), pairs in groups.items():
        try:
            seats = archive.seat_table([row for job, o in pairs
                                        for row in (seat_rows(job, o.results) if o.seat_rows is None else o.seat_rows)])
            files = _archive(uri).land_part(key, [o.log for _, o in pairs if o.log is not None], seats,
                                            {o.match_id: o.inputs for _, o in pairs if o.inputs is not None})
        except OSError as e:
            log.warning("runs %s: the archive refused their matches (%s); handing them back to the service",
                        ", ".join(o.run_id for _, o in pairs), e)
            out.update((o.run_id, None) for _, o in pairs)
            continue
        for job, o in pairs:
            out[o.run_id] = {"node_id": job.meta.get("node_id"), "pid": os.getpid(), "files": files}
            o.log = o.inputs = o.seat_rows = None
    return out


def for_head(o: Outcome, job: Job, landed: dict | None = None, land: bool = True) -> Ended:
    """The outcome as the head records it (the run lifecycle's `ended_many`): the run's columns
    as the runs repository stores them, and the match's files landed here when this worker
    can reach the archive (`archived`: the files, their sizes, and which node and process wrote them;
    `landed`: what land_chunk wrote for it already). A write the archive refuses (a full disk, a store
    out of reach) is not retried here, where it would hold the worker: the bytes go back to the head,
    which retries landing them for `record_patience_s` and then fails the run naming the cause.
    land=False: hand the bytes back without trying (the archive refused this match's chunk)."""
    archived = landed
    try:
        packed_bytes(o, job)
    except Exception:
        o = unrecorded(job, o.usage, o.started_at_ms, o.turns, o.match_ticks, o.transcript)
    if archived is None and land and o.seats is not None and job.lands_here:
        try:
            files = _archive(job.archive).land(o.match_id, o.events, o.seats, o.transcript, o.game)
        except OSError as e:
            log.warning("run %s: the archive refused its match (%s); handing it back to the service", o.run_id, e)
        else:
            archived = {"node_id": job.meta.get("node_id"), "pid": os.getpid(), "files": files}
            o.events = o.seats = o.transcript = o.game = None
    roster = [dict(s) for s in job.seats]
    for seat, usage, turns in zip(roster, o.usage, o.turns or [None] * len(roster)):
        seat["usage"] = usage
        if turns is not None:
            seat["turns"] = turns
            seat["replied"] = turns["answered"] > 0
    return Ended(o.run_id, o.status, o.stop_reason, o.match_ticks, o.match_id, stored_runs.results_text(o.results),
                 stored_runs.roster_text(roster),
                 o.spend_usd, sum(u["agent_turns"] for u in o.usage), o.error or None, o.started_at_ms,
                 archived or None, o.events, o.seats, o.transcript, o.game)
