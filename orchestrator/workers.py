"""Ray: starting or joining a cluster, and the actors that play matches.

Scripted matches are CPU-bound: each of those workers holds one CPU and plays one job at a time,
one worker per CPU of the cluster; the actor is threaded so `cancel` and `ticks` are answered while
`play_many` runs, and the play loop checks the stop flag every stretch of ticks. Matches with model
seats mostly wait on providers: their workers hold no CPU and are async actors, every match a
coroutine on the worker's one event loop (hundreds at once), sized per node from its CPUs; `cancel`,
`drain`, `ticks` and `frames` are coroutines on the same loop, answered between the matches' steps,
and the play loop checks the stop flag every tick.
"""
from __future__ import annotations

import asyncio
import gc
import os
import time
import traceback

import ray

from orchestrator import reaper
from orchestrator.play import Job, Outcome, play_job, play_job_async, unplayed
from orchestrator.play.job import for_head, land_chunk

# A worker's result goes straight back to the dispatcher in the reply rather than through the
# shared-memory object store, Ray's path above 100 KB: measured with `studio serve`, a single run read
# 7-10 ms sooner and a 50-trial series played about 10% faster. The result is a few KB when the worker
# lands its match itself; a match's log (about 1 MB at 24 agents x 300 ticks) when it hands it back.
INLINE_RESULT_BYTES = 8 * 1024 * 1024
# Ray gives its raylet a fixed 30 s to register, which a loaded machine's start can miss: a start that
# timed out is tried again rather than failing the service
START_TRIES = 3


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
        reaper.watch()  # Ray's agents outlive a killed driver; the watcher ends them
        for attempt in range(START_TRIES):
            try:
                ray.init(address="local", num_cpus=num_cpus or len(os.sched_getaffinity(0)),
                         include_dashboard=False, log_to_driver=False, configure_logging=False,
                         _node_ip_address="127.0.0.1",
                         _system_config={"max_direct_call_object_size": INLINE_RESULT_BYTES})
                return
            except Exception as e:  # Ray raises a bare Exception for a slow node start
                if "timed out during startup" not in str(e) or attempt == START_TRIES - 1:
                    raise
                ray.shutdown()  # the half-started node's processes end before the next try


def _loopback_only() -> None:
    """A private Ray listens on 127.0.0.1 only: its ports take tasks from whoever connects. Ray
    rewrites 127.0.0.1 to the machine's address unless clusters are off, a flag it reads from the
    environment when first imported (here, long before this call), so set both."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # for the processes Ray starts
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


def cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# Model matches one model worker plays at once: coroutines, a few hundred KB each, mostly waiting on
# providers. One worker per CPUS_PER_MODEL_WORKER CPUs of a node (one at least): a worker's loop
# uses about a core when its matches' turns come back together.
MODEL_JOBS_PER_WORKER = 1000
CPUS_PER_MODEL_WORKER = 4
CONTROL_CALLS = 16  # cancel, drain, ticks, frames: never queued behind the matches
GC_THRESHOLDS = (50_000, 20, 100)  # a model worker's cyclic collector (Python's default: 700, 10, 10)


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
        self._frame: dict[str, dict] = {}  # run id -> where its agents stand now (`live_frame`)
        self._node = ray.get_runtime_context().get_node_id()

    def _play(self, job: dict, recorder=None) -> tuple[Job, Outcome]:
        j = Job(**job)
        if j.run_id in self._stop:  # cancelled while it waited behind another job: nothing is played
            self._stop.discard(j.run_id)
            return j, unplayed(j)
        self._tick[j.run_id] = [0, int(time.time() * 1000)]
        j.meta = dict(j.meta, node_id=self._node)  # archived with the match
        try:
            # a scripted match's log stays a table: the chunk's matches are written together below
            return j, play_job(j, should_stop=lambda: j.run_id in self._stop,
                               on_tick=lambda t: self._tick[j.run_id].__setitem__(0, t), recorder=recorder,
                               on_frame=lambda f: self._frame.__setitem__(j.run_id, f),
                               should_drain=lambda: self._draining, pack=False)
        finally:
            self._stop.discard(j.run_id)
            self._tick.pop(j.run_id, None)
            self._frame.pop(j.run_id, None)

    @ray.method(concurrency_group="play")
    def play_many(self, jobs: list[dict], recorder=None) -> list:
        """Play jobs one after another, one outcome each; the matches' files land together once all
        are played (they go back to the head together anyway), when this node reaches the archive, and
        the head gets each run's row. A job that raises becomes {run_id, raised, traceback} and the
        others still play: one bad match must not fail the chunk it came in."""
        out: list = []
        for job in jobs:
            try:
                out.append(self._play(job, recorder))
            except Exception as e:
                out.append({"run_id": job["run_id"], "raised": cause(e), "traceback": traceback.format_exc()})
        played = [x for x in out if isinstance(x, tuple)]
        landed = land_chunk(played)
        for k, x in enumerate(out):
            if isinstance(x, tuple):
                j, o = x
                try:
                    out[k] = for_head(o, j, landed.get(o.run_id), land=o.run_id not in landed)
                except Exception as e:
                    out[k] = {"run_id": j.run_id, "raised": cause(e), "traceback": traceback.format_exc()}
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

    @ray.method(concurrency_group="control")
    def node(self) -> str:
        return self._node


class ModelPlayer(Player):
    """A model worker's body: every job a coroutine on the actor's event loop (a world match with model
    seats plays there; an arena game on a thread whose provider calls come back to the loop)."""

    def __init__(self):
        super().__init__()
        self._stopped: dict[str, asyncio.Event] = {}  # run id -> set by cancel, while it plays
        # Hundreds of matches in play keep a large heap of live objects, which the cyclic collector
        # would otherwise walk again and again (its passes, not the matches, took the most CPU): what
        # the start loaded is set aside for good, and young collections come less often.
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)

    async def play_many(self, jobs: list[dict], recorder=None) -> list:
        """Player.play_many, the jobs at once."""
        return list(await asyncio.gather(*(self._play_one(job, recorder) for job in jobs)))

    async def _play_one(self, job: dict, recorder) -> dict:
        try:
            return await self._play_async(job, recorder)
        except Exception as e:
            return {"run_id": job["run_id"], "raised": cause(e), "traceback": traceback.format_exc()}

    async def _play_async(self, job: dict, recorder) -> dict:
        """Player._play on the loop."""
        j = Job(**job)
        if j.run_id in self._stop:
            self._stop.discard(j.run_id)
            return for_head(unplayed(j), j)
        self._tick[j.run_id] = [0, int(time.time() * 1000)]
        self._stopped[j.run_id] = stopped = asyncio.Event()
        j.meta = dict(j.meta, node_id=self._node)
        try:
            outcome = await play_job_async(j, should_stop=lambda: j.run_id in self._stop,
                                           on_tick=lambda t: self._tick[j.run_id].__setitem__(0, t), recorder=recorder,
                                           on_frame=lambda f: self._frame.__setitem__(j.run_id, f),
                                           should_drain=lambda: self._draining, stopped=stopped)
        finally:
            self._stopped.pop(j.run_id, None)
            self._stop.discard(j.run_id)
            self._tick.pop(j.run_id, None)
            self._frame.pop(j.run_id, None)
        return await asyncio.to_thread(for_head, outcome, j)  # the archive's writes off the matches' loop

    async def cancel(self, run_id: str) -> None:
        self._stop.add(run_id)
        if run_id in self._stopped:
            self._stopped[run_id].set()

    async def drain(self) -> None:
        self._draining = True

    async def ticks(self) -> dict[str, list[int]]:
        return {r: list(v) for r, v in self._tick.items()}

    async def frames(self) -> dict[str, dict]:
        return dict(self._frame)

    async def pid(self) -> int:
        return os.getpid()

    async def node(self) -> str:
        return self._node


# Scripted matches play one at a time per worker (a queued second job starts the moment the first
# ends, without two threads fighting over the GIL); cancel and progress calls have their own threads.
MatchWorker = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0,
                         concurrency_groups={"play": 1, "control": 2})(Player)
# Matches with model seats mostly wait on providers: no CPU held, hundreds at once.
ModelWorker = ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0,
                         max_concurrency=MODEL_JOBS_PER_WORKER + CONTROL_CALLS)(ModelPlayer)


def model_worker(node_id: str | None = None):
    """A model worker, on the given node when it has room (soft: a node that left takes none)."""
    if node_id is None:
        return ModelWorker.remote()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return ModelWorker.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=True)).remote()


def model_nodes() -> list[str]:
    """The live nodes' ids, each once per model worker it should hold (by its CPUs)."""
    out = []
    for node in ray.nodes():
        if node.get("Alive"):
            cpus = int(node.get("Resources", {}).get("CPU", 0))
            out += [node["NodeID"]] * max(1, cpus // CPUS_PER_MODEL_WORKER)
    return out


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
