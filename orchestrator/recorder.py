"""The one channel between the workers playing model seats and the control plane.

Workers touch no file of the control plane (the store, the key file): a `Recorder` actor pinned to
the head node does it for them.
- `credentials(run_id)`: the decrypted keys of a run's model seats, returned in the call (never
  written on the worker's side);
- `turn(run_id, tick, seat, ...)`: one model turn as it happened (its transcript row, what the seat
  played, the conversation entry it left) with the seat's usage and counts so far, in one write. The
  worker awaits it as each answer arrives, so a worker killed with -9, or a service that goes away,
  loses neither spend nor transcript for any turn that was answered;
- `report(run_id, tick, seats)`: every seat's usage and counts so far and the live tick, after each tick;
- `recorded(run_id)`: what a resumed run replays: its recorded turns and every seat's totals.

A write the store refuses for now (a full disk, a held lock) is retried until it lands or
RECORD_PATIENCE_S pass (`[runs] record_patience_s` in config.toml): the match waits meanwhile, and only a store that stays unwritable fails the
run, with a message that names the cause.

The functions below do the work over a Core; the actor only holds one.
"""
from __future__ import annotations

import json
import logging
import sqlite3
import time

import ray

from orchestrator.core import Core
from orchestrator.runs import lifecycle

log = logging.getLogger("studio.recorder")
RECORD_PATIENCE_S = 120.0
RETRY_S = 0.5


class Unrecorded(Exception):
    """The store refused a playing run's writes for RECORD_PATIENCE_S: the run cannot go on safely."""

    def envelope(self) -> dict:
        return {"error": "internal_error", "message": str(self)}


def credentials(core: Core, run_id: str) -> dict[int, dict]:
    """seat index -> {key, base_url, usd_per_mtok, private_ok} for a run's seats that need a key."""
    from orchestrator.seats.funding import credentials as seat_credentials

    row = core.store.one("SELECT account_id, roster FROM runs WHERE id = ?", (run_id,))
    if row is None:
        return {}
    roster = json.loads(row["roster"])
    creds = seat_credentials(core, row["account_id"], roster, [s["funding"] for s in roster])
    return {i: {"key": c.key, "base_url": c.base_url, "usd_per_mtok": c.usd_per_mtok, "private_ok": c.private_ok}
            for i, c in creds.items()}


def patience_s(core: Core) -> float:
    """How long a playing run waits for a store that refuses writes: `[runs] record_patience_s`."""
    return float((core.config.get("runs") or {}).get("record_patience_s", RECORD_PATIENCE_S))


def _patiently(core: Core, step, what: str):
    """step(c) in a write transaction, retried while the store refuses writes for now."""
    patience = patience_s(core)
    began, refused = time.monotonic(), False  # from the first attempt: SQLite's busy wait counts too
    while True:
        try:
            with core.store.write() as c:
                out = step(c)
            if refused:
                log.warning("the store takes %s again after %.1f s", what, time.monotonic() - began)
            return out
        except sqlite3.OperationalError as e:
            now = time.monotonic()
            if not refused:
                refused = True
                log.error("the store refused %s (%s); retrying every %.1f s", what, e, RETRY_S)
            if now - began >= patience:
                raise Unrecorded(f"the service could not record this run's turns for {patience:.0f} s: {e}") from e
            time.sleep(RETRY_S)


def record(core: Core, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
    """Write what a playing run has metered so far (lifecycle.metered): seats maps index -> {usage,
    turns}, totals; only a run still launching or running is written."""
    return _patiently(core, lambda c: lifecycle.metered(c, run_id, tick, seats), "a run's usage")


def record_turn(core: Core, run_id: str, tick: int, seat: int, turn: dict, play: list, memory, report: dict) -> bool:
    return _patiently(core, lambda c: lifecycle.recorded(c, run_id, tick, seat, turn, play, memory, report),
                      "a model turn")


def recorded(core: Core, run_id: str) -> dict:
    """{turns: [{tick, seat, turn, play, memory}], seats: {index: {usage, turns}}} of a run that resumes;
    empty lists and maps for a run that never recorded a turn."""
    turns = lifecycle.turns_recorded(core.store.conn(), run_id)
    row = core.store.one("SELECT roster FROM runs WHERE id = ?", (run_id,))
    roster = json.loads(row["roster"]) if row else []
    return {"turns": [{"tick": t["tick"], "seat": t["seat"], "turn": json.loads(t["turn"]), "play": json.loads(t["play"]),
                       "memory": None if t["memory"] is None else json.loads(t["memory"])} for t in turns],
            "seats": {i: {"usage": s["usage"], "turns": s["turns"]} for i, s in enumerate(roster) if s.get("turns")}}


class Recorder:
    def __init__(self, data_dir: str):
        self.core = Core.open(data_dir)

    def credentials(self, run_id: str) -> dict[int, dict]:
        return credentials(self.core, run_id)

    def report(self, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
        return record(self.core, run_id, tick, seats)

    def turn(self, run_id: str, tick: int, seat: int, turn: dict, play: list, memory, report: dict) -> bool:
        return record_turn(self.core, run_id, tick, seat, turn, play, memory, report)

    def recorded(self, run_id: str) -> dict:
        return recorded(self.core, run_id)


def start_recorder(data_dir: str):
    """The Recorder actor on this (the head) node: the store lives here, not on the workers' disks."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1, max_concurrency=16)(Recorder)
    return actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(data_dir)
