"""Ray: starting or joining a cluster, and the actors that play matches.

Scripted matches are CPU-bound: each of those workers holds one CPU and plays one job at a time,
one worker per CPU of the cluster. Matches with model seats mostly wait on providers: their workers
hold no CPU and play several jobs at once, one thread (and event loop) each. Actors are threaded so
`cancel` and `ticks` are answered while `play` runs: the play loop checks the stop flag every tick
(model seats) or every stretch of ticks (scripted).
"""
from __future__ import annotations

import os
from dataclasses import asdict

import ray

from orchestrator.playing import Job, model_players, play_job


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join RAY_ADDRESS / --ray-address when given, else start a private local Ray in-process."""
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    else:
        # "local" never joins a stale cluster left in /tmp/ray by an unclean exit
        ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False,
                 log_to_driver=False, configure_logging=False)


def cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


MODEL_JOBS_PER_WORKER = 8


@ray.remote(num_cpus=1, max_concurrency=3, max_restarts=0, max_task_retries=0)  # 2 plays + control
class MatchWorker:
    def __init__(self):
        self._stop: set[str] = set()
        self._tick: dict[str, int] = {}

    def play(self, job: dict) -> dict:
        j = Job(**job)
        try:
            outcome = play_job(j, should_stop=lambda: j.run_id in self._stop,
                               on_tick=lambda t: self._tick.__setitem__(j.run_id, t), players=model_players(j))
        finally:
            self._stop.discard(j.run_id)
            self._tick.pop(j.run_id, None)
        return asdict(outcome)

    def cancel(self, run_id: str) -> None:
        self._stop.add(run_id)

    def ticks(self) -> dict[str, int]:
        return dict(self._tick)

    def pid(self) -> int:
        return os.getpid()


def model_worker():
    """A worker for matches with model seats: no CPU held, MODEL_JOBS_PER_WORKER jobs at once (+2
    threads for cancel and progress)."""
    return MatchWorker.options(num_cpus=0, max_concurrency=MODEL_JOBS_PER_WORKER + 2).remote()
