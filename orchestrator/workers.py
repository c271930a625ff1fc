"""Ray: starting or joining a cluster, and the actors that play matches.

Scripted matches are CPU-bound: each of those workers holds one CPU and plays one job at a time,
one worker per CPU of the cluster. Matches with model seats mostly wait on providers: their workers
hold no CPU and play several jobs at once, one thread (and event loop) each. Actors are threaded so
`cancel` and `ticks` are answered while `play_many` runs: the play loop checks the stop flag every tick
(model seats) or every stretch of ticks (scripted).
"""
from __future__ import annotations

import os
import time
import traceback

import ray

from orchestrator.play import Job, play_job, unplayed
from orchestrator.play.job import for_head


# A worker's result goes straight back to the dispatcher in the reply rather than through the
# shared-memory object store, Ray's path above 100 KB: measured with `studio serve`, a single run read
# 7-10 ms sooner and a 50-trial series played about 10% faster. The result is a few KB when the worker
# lands its match itself; a match's log (about 1 MB at 24 agents x 300 ticks) when it hands it back.
INLINE_RESULT_BYTES = 8 * 1024 * 1024


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join RAY_ADDRESS / --ray-address when given, else start a private local Ray in-process."""
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    else:
        # "local" never joins a stale cluster left in /tmp/ray by an unclean exit
        _loopback_only()
        ray.init(address="local", num_cpus=num_cpus or len(os.sched_getaffinity(0)), include_dashboard=False,
                 log_to_driver=False, configure_logging=False, _node_ip_address="127.0.0.1",
                 _system_config={"max_direct_call_object_size": INLINE_RESULT_BYTES})


def _loopback_only() -> None:
    """A private Ray listens on 127.0.0.1 only: its ports take tasks from whoever connects. Ray
    rewrites 127.0.0.1 to the machine's address unless clusters are off, a flag it reads from the
    environment when first imported (here, long before this call), so set both."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # for the processes Ray starts
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


def cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


MODEL_JOBS_PER_WORKER = 8


class Player:
    """A worker actor's body; wrapped twice below, for scripted and for model-seat matches."""

    def __init__(self):
        # one core per scripted worker: Arrow's own thread pool would only contend with the other workers
        import pyarrow

        pyarrow.set_cpu_count(1)
        # Load every compiled kernel now, while the service starts, not inside the first match: the
        # dispatcher counts a worker ready once this constructor has returned (Dispatcher.warming).
        from engine.warm import warm

        warm()
        self._stop: set[str] = set()
        self._draining = False  # the service stops: model matches stop at their next tick boundary
        self._tick: dict[str, list[int]] = {}  # run id -> [tick, began at ms], while it plays
        self._frame: dict[str, dict] = {}  # run id -> where its agents stand now (play.world.live_frame)

    def _play(self, job: dict, recorder=None) -> dict:
        j = Job(**job)
        if j.run_id in self._stop:  # cancelled while it waited behind another job: nothing is played
            self._stop.discard(j.run_id)
            return for_head(unplayed(j), j)
        self._tick[j.run_id] = [0, int(time.time() * 1000)]
        j.meta = dict(j.meta, node_id=ray.get_runtime_context().get_node_id())  # archived with the match
        try:
            outcome = play_job(j, should_stop=lambda: j.run_id in self._stop,
                               on_tick=lambda t: self._tick[j.run_id].__setitem__(0, t), recorder=recorder,
                               on_frame=lambda f: self._frame.__setitem__(j.run_id, f),
                               should_drain=lambda: self._draining)
        finally:
            self._stop.discard(j.run_id)
            self._tick.pop(j.run_id, None)
            self._frame.pop(j.run_id, None)
        # the match's files land here when this node reaches the archive; the head gets the run's row
        return for_head(outcome, j)

    @ray.method(concurrency_group="play")
    def play_many(self, jobs: list[dict], recorder=None) -> list[dict]:
        """Play jobs one after another, one outcome each. A job that raises becomes {run_id, raised,
        traceback} and the others still play: one bad match must not fail the chunk it came in."""
        out = []
        for job in jobs:
            try:
                out.append(self._play(job, recorder))
            except Exception as e:
                out.append({"run_id": job["run_id"], "raised": cause(e), "traceback": traceback.format_exc()})
        return out

    @ray.method(concurrency_group="control")
    def cancel(self, run_id: str) -> None:
        self._stop.add(run_id)

    @ray.method(concurrency_group="control")
    def drain(self) -> None:
        self._draining = True

    @ray.method(concurrency_group="control")
    def ticks(self) -> dict[str, list[int]]:
        return {r: list(v) for r, v in self._tick.items()}

    @ray.method(concurrency_group="control")
    def frames(self) -> dict[str, dict]:
        return dict(self._frame)

    @ray.method(concurrency_group="control")
    def pid(self) -> int:
        return os.getpid()


# Scripted matches play one at a time per worker (a queued second job starts the moment the first
# ends, without two threads fighting over the GIL); cancel and progress calls have their own threads.
MatchWorker = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0,
                         concurrency_groups={"play": 1, "control": 2})(Player)
# Matches with model seats mostly wait on providers: no CPU held, several at once.
ModelWorker = ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0,
                         concurrency_groups={"play": MODEL_JOBS_PER_WORKER, "control": 2})(Player)


def model_worker():
    # spread over the nodes: model matches (and the archive writes that end them) leave the head's node
    return ModelWorker.options(scheduling_strategy="SPREAD").remote()


def cause(e: BaseException) -> str:
    """One sentence for run.error: the underlying error, without Ray's wrapping (pids, actor ids)."""
    inner = getattr(e, "cause", None)
    if isinstance(inner, BaseException) and inner is not e:
        e = inner
    if isinstance(e, OSError) and (e.errno or e.strerror):
        text = os.strerror(e.errno) if e.errno else e.strerror  # pyarrow puts its own words in strerror
        return text[:1].lower() + text[1:]
    text = (str(e).strip().splitlines() or [""])[0]
    if text.startswith("ray::") or not text:
        return type(e).__name__
    return f"{type(e).__name__}: {text[:200]}"
