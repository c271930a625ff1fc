"""The one channel between the workers playing model seats and the control plane.

Workers touch no file of the control plane (the store, the key file): a `Recorder` actor pinned to
the head node does it for them.
- `credentials(run_id)`: the decrypted keys of a run's model seats, returned in the call (never
  written on the worker's side);
- `report(run_id, tick, seats)`: every seat's usage and turn counts so far, written to the run's row
  at once (roster usage and turns, spend, live tick). The worker awaits it after every tick it plays,
  so a worker killed with -9, or a service that goes away, never loses spend for ticks that played.

The functions below do the work over a Core; the actor only holds one.
"""
from __future__ import annotations

import json

import ray

from orchestrator.core import Core
from orchestrator.runs import lifecycle


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


def record(core: Core, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
    """Write what a playing run has metered so far (lifecycle.metered): seats maps index -> {usage,
    turns}, totals; only a run still launching or running is written."""
    with core.store.write() as c:
        return lifecycle.metered(c, run_id, tick, seats)


class Recorder:
    def __init__(self, data_dir: str):
        self.core = Core.open(data_dir)

    def credentials(self, run_id: str) -> dict[int, dict]:
        return credentials(self.core, run_id)

    def report(self, run_id: str, tick: int, seats: dict[int, dict]) -> bool:
        return record(self.core, run_id, tick, seats)


def start_recorder(data_dir: str):
    """The Recorder actor on this (the head) node: the store lives here, not on the workers' disks."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1, max_concurrency=16)(Recorder)
    return actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(data_dir)
