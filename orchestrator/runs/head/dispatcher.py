"""The dispatcher: one thread in the service that hands queued runs to Ray workers and records
what comes back.

Status changes go through the run lifecycle (runs/lifecycle.py). A store write that fails (disk full,
a held lock) is kept and retried in order, and a periodic sweep hands any run left launching or
running with no worker to `lifecycle.lost`: scripted runs and runs that never started are queued
again, model runs that were playing fail. The same happens on start to the runs a previous process
left behind.
"""
from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from contextlib import contextmanager

import ray
from ray.exceptions import RayActorError, RayError

from analytics.archive import derive
from analytics.archive.format import from_ipc
from analytics.archive.store import PROCESS, SHARED, Archive
from orchestrator.actors import Shared, joined
from orchestrator.core import Core
from orchestrator.records.roster import plain
from orchestrator.records.run import Run
from orchestrator.runs.head.grader import Grader
from orchestrator.play import Job
from orchestrator.agents.exchange import Exchanges
from orchestrator.runs import kinds, lifecycle
from orchestrator.runs.head import archiving
from orchestrator.runs.head.archiving import Archiver
from orchestrator.runs.head.lease import Fenced, Lease
from orchestrator.runs.head.modelpool import ModelPool
from orchestrator.runs.head.recorder import patience_s, start_recorder
from orchestrator.runs.series import stopping
from orchestrator.runs.series.summarizer import Summarizer
from orchestrator.statuses import DRAINED, QUEUED
from orchestrator.store import StoreError, runs
from orchestrator.workers import MODEL_JOBS_PER_WORKER, MatchWorker, cause, cluster_cpus, init_ray

log = logging.getLogger("studio.dispatcher")
PROGRESS_EVERY_S = 0.5
SWEEP_EVERY_S = 5.0
RETRY_S = 0.5
# A second job waits inside the actor, so the worker never idles while the dispatcher records the
# first one; the run's started_at_ms is taken from the worker when it really starts playing.
SCRIPTED_JOBS_PER_WORKER = 2
# A deep queue of a series' small scripted runs goes to the workers in chunks: one Ray call, one
# reply and one store transaction for several runs, instead of one each (Ray's per-call handling on
# both ends cost more than a 24-agent match). A chunk is bounded by its work, agents x ticks summed
# (here eight 24-agent, 300-tick seasons), so a run queued behind it waits tens of milliseconds at
# most; a bigger run goes alone. Paced runs (min_tick_ms), arena games and model runs go one per call.
CHUNK_RUNS = 8
CHUNK_AGENT_TICKS = CHUNK_RUNS * 24 * 300


class Dispatcher:
    """Runs go queued -> launching (claimed, then handed to a worker, where it may wait behind another
    job) -> running (the worker began it) -> finished | cancelled | failed. Among several heads only the
    one holding the store's dispatcher lease runs a Dispatcher (duty.py); each of its store writes
    checks the lease in its own transaction (`Lease.fence`), so a head that lost the lease changes
    nothing another head may be resuming."""

    def __init__(self, core: Core, *, ray_address: str | None = None, num_cpus: int | None = None,
                 workers: int | None = None, lease: Lease | None = None, tenure: str | None = None,
                 shared: Shared | None = None, agents: Exchanges | None = None):
        self.core = core
        self.lease = lease  # the dispatcher lease its head holds; None: this process alone plays (tests)
        # the tenure of the lease this dispatcher plays in: every write checks it, every job carries it
        self.tenure = tenure if tenure is not None else (lease.tenure if lease is not None else None)
        self.shared = shared or Shared(core.store, detached=joined(ray_address))
        self._fenced = False  # the head lost the lease: nothing more is claimed or written
        self.ray_address = ray_address
        self.num_cpus = num_cpus
        self.n_workers = workers  # default: one per CPU of the cluster
        self.workers: list = []       # scripted matches, one CPU each
        self.models = ModelPool(self.wake)  # matches with model seats, no CPU held
        self.inflight: dict = {}      # ObjectRef -> (run ids of the chunk, worker)
        self.by_run: dict = {}        # run_id -> worker
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pending: list = []      # store writes not yet landed, oldest first
        self._write_failing = False
        self._began: set = set()      # runs whose worker reported that it began playing them
        # per kind (scripted?): whether a claim may find queued runs; cleared when one found fewer than it
        # asked for, set again by a launch (wake), a requeue, and every PROGRESS_EVERY_S: an idle claim is a
        # write transaction, and the loop would make one every few milliseconds
        self._maybe_queued = {True: True, False: True}
        self._first = {True: 0, False: 0}  # which worker of a pool goes first among equally loaded ones
        self.ends = lifecycle.Ends()  # set as a run's end lands in the store (a cancel waits on it)
        self.live_frames: dict = {}   # run_id -> where its agents stand (the world's `live_frame`), while it plays
        self.archive = Archive.of(core.data_dir, core.config)  # workers land matches; the head those handed back
        self.archiver = Archiver(core, self.archive, self.shared)
        self.recorder = None          # the service's Recorder actor: model seats' keys and usage
        self._starting: list = []     # start-up calls of scripted workers not yet answered
        self._node = ""               # this process's Ray node (workers there hand back uncompressed)
        # spectators (and tests) may slow scripted matches down to watch them live
        self.tick_ms = float((core.config.get("runs") or {}).get("min_tick_ms", 0))
        self.keep_log = derive.events_mode(core.config) == derive.STORED  # else scripted matches keep inputs
        # agent seats' open turns (agents/exchange.py): the service's exchange, as the head sees it
        self.agents = agents or Exchanges(core.config, core.clock, self.shared)
        self._own_agents = agents is None  # else its head's, which serves agents after this stops

    @property
    def warming(self) -> bool:
        """Some scripted worker has not finished starting (its process, imports and kernels): a
        launch now waits for it, which the estimate allows for."""
        if self._starting:
            self._starting = ray.wait(self._starting, num_returns=len(self._starting), timeout=0)[1]
        return bool(self._starting)

    def capacity(self, scripted: bool = True) -> int:
        """How many runs of a kind play at once: one per scripted worker, hundreds per model worker."""
        if scripted:
            return max(1, len(self.workers))
        return max(1, len(self.models.workers) * MODEL_JOBS_PER_WORKER)

    def start(self) -> None:
        init_ray(self.ray_address, self.num_cpus)
        self.workers = [MatchWorker.remote() for _ in range(self.n_workers or cluster_cpus())]
        self.models.grow()
        self._node = ray.get_runtime_context().get_node_id()
        self._starting = [w.pid.remote() for w in self.workers]  # answered once a worker is warm
        self.archiver.on_ray(self._node)
        self.reconcile()
        self.archiver.sweep()
        for level, line in archiving.start_notes(self.archive):  # matches this engine cannot replay; damage
            log.log(level, line)
        self.grader = Grader(self.core, self.archive).start()  # grades ended runs' decisions on the workers
        self.summaries = Summarizer(self.core, self.archive)  # series' summaries, computed on the workers
        self.core.dispatcher = self
        self._thread = threading.Thread(target=self._loop, name="studio-dispatcher", daemon=True)
        self._thread.start()

    def fence(self) -> None:
        """The head lost the lease (another head may resume these runs any moment): claim and write
        nothing more, from any thread, at once. `stop(fenced=True)` then ends the workers."""
        self._fenced = True
        self._stop.set()
        self._wake.set()

    def stop(self, fenced: bool = False) -> None:
        """Stop dispatching (SIGTERM): nothing more is claimed; model matches are asked to stop at their
        next tick boundary (every answered turn is recorded by then) and, as they come back, are queued
        to resume on the next start; scripted workers are killed rather than awaited and their runs
        stay `running` until the next start replays them (reconcile), as after a kill -9. A model run
        that has not reached a tick boundary within DRAIN_S resumes all the same, from its recorded turns.
        fenced: the lease is lost; every worker is killed at once, its runs left to the head that takes
        the lease next (its reconcile), as after a kill -9 of this head."""
        if fenced:
            self.fence()
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout=10)
        if not self._fenced:
            self._drain()
        self.grader.stop()
        self.summaries.stop()
        for w in self.workers:
            ray.kill(w)
        self.models.stop()
        try:
            if self.by_run and not self._fenced:
                with self.core.store.write() as c:
                    ended = self._lost(c, list(self.by_run), SHUT_DOWN, counted=False, scripted=False)
                self.ends.landed(ended)
        except StoreError:
            log.exception("settling the runs that were playing failed; the next start settles them")
        self.shared.kill(self.recorder)
        self.recorder = None
        if self._own_agents:
            self.agents.stop()
        self.inflight, self.by_run = {}, {}
        self.workers = []
        self.core.dispatcher = None
        self.archiver.close()

    def _drain(self) -> None:
        """Ask the model workers to stop at a tick boundary and collect what they hand back."""
        for w in self.models.ready:
            try:
                w.drain.remote()
            except RayError:
                pass
        models = {id(w) for w in self.models.ready}
        deadline = time.monotonic() + DRAIN_S
        while time.monotonic() < deadline and any(id(w) in models for _, w in self.inflight.values()):
            try:
                self._collect(timeout=0.2)
            except Exception:  # a stop must go on whatever one result does
                log.exception("collecting a drained match failed")
                break
        self._flush()

    def wake(self) -> None:
        self._maybe_queued = {True: True, False: True}
        self._wake.set()

    def request_cancel(self, run_id: str) -> None:
        worker = self.by_run.get(run_id)
        if worker is not None:
            worker.cancel.remote(run_id)

    # -- the loop ------------------------------------------------------------------------------
    def _loop(self) -> None:
        last_progress = last_sweep = time.monotonic()
        while not self._stop.is_set():
            try:
                if not self._flush():  # the store refuses writes (disk full, held lock): wait, keep state
                    self._stop.wait(RETRY_S)
                    continue
                self.models.settle()
                self._submit_queued()
                # a result (its call's done callback, _submit), a launch or a stop wakes the loop: no
                # polling of Ray while matches play; the wait's bound keeps progress and sweeps on time
                self._wake.wait(PROGRESS_EVERY_S)
                self._wake.clear()
                if self.inflight:
                    self._collect(timeout=0)
                if time.monotonic() - last_progress > PROGRESS_EVERY_S:
                    self._maybe_queued = {True: True, False: True}  # runs queued by another process
                    self._progress()
                    last_progress = time.monotonic()
                if time.monotonic() - last_sweep > SWEEP_EVERY_S:
                    self.models.grow()  # nodes that joined
                    self._sweep()
                    last_sweep = time.monotonic()
            except Exception:  # never let one bad record stop every later run
                log.exception("dispatcher step failed")
                self._stop.wait(RETRY_S)

    @contextmanager
    def _writing(self):
        """A write transaction of the dispatcher's: only while its head holds the lease (fencing)."""
        if self._fenced:
            raise Fenced("this head lost the dispatcher lease")
        with self.core.store.write() as c:
            if self.lease is not None:
                self.lease.fence(c, self.tenure)
            yield c

    def _write(self, step, what: str, land=None, run_ids: tuple = ()) -> None:
        """Queue a store write of the dispatcher's and try it now. A write the store refuses stays
        queued, in order, and is retried until it lands: a result is never dropped because the disk
        was full for a moment. Steps are lifecycle transitions, so a replayed one changes nothing twice.
        land: files to put in the archive first (idempotent), retried likewise; if the archive refuses
        them for RECORD_PATIENCE_S the runs (run_ids) fail, naming the cause, and whatever of their
        matches did land is removed."""
        self._pending.append([step, what, land, run_ids, None])
        self._flush()

    def _flush(self) -> bool:
        while self._pending:
            entry = self._pending[0]
            step, what, land, run_ids, since = entry
            try:
                if land is not None:
                    land()
                    entry[2] = None  # in the archive: a retry of the store write does not put them again
                with self._writing() as c:
                    ended = step(c)
                    if ended:  # a series with a target or a budget may stop with them (its queued trials end)
                        ended = [*ended, *stopping.after_ended(c, ended, self.core.clock.now_ms())]
                if ended:  # exported once committed, so the export reads the final rows
                    self.ends.landed(ended)
                    self.archiver.ended(ended)
            except (StoreError, OSError) as e:
                if not self._write_failing:
                    log.error("the %s refused a write (%s: %s): %s; retrying every %.1f s",
                              "store" if isinstance(e, StoreError) else "archive", what, type(e).__name__, e,
                              RETRY_S)
                self._write_failing = True
                now = time.monotonic()
                entry[4] = since = since if since is not None else now
                if isinstance(e, OSError) and run_ids and now - since >= patience_s(self.core):
                    # the archive stayed unwritable: these results cannot be kept, so their runs fail
                    why = unplayable(f"its match could not be archived for {now - since:.0f} s: {cause(e)}")
                    self._pending[0] = [lambda c, ids=run_ids, m=why: self._unarchived(c, ids, m),
                                        f"fail {len(run_ids)} unarchived runs", None, (), None]
                    continue
                return False
            self._pending.pop(0)
            if self._write_failing:
                log.warning("the store takes writes again (%s)", what)
                self._write_failing = False
        return True

    def _unarchived(self, c, run_ids: tuple, message: str) -> list[str]:
        """Runs whose matches the archive refused for the whole patience: failed, and any part of their
        matches that did land removed (the store's rows are the record of which matches exist)."""
        failed = [r for r in run_ids if lifecycle.fail(c, r, message, self.core.clock.now_ms())]
        for match_id in runs.match_ids(c, failed):
            try:
                self.archive.remove_match(match_id)
            except OSError:
                log.warning("match %s: removing its partly landed files failed; they stay", match_id)
        return failed

    def _free_slots(self, pool: list, per_worker: int, first: int = 0) -> list:
        """Free slots, the workers taken in turn, the least loaded first and, among equally loaded ones,
        from the `first`-th on: runs spread over the workers (and nodes), also when they are claimed one
        at a time and each ends before the next is claimed."""
        load: dict[int, int] = {}
        for _, w in self.inflight.values():  # a chunk takes one slot, however many runs it holds
            load[id(w)] = load.get(id(w), 0) + 1
        size = len(pool)
        order = [pool[i] for i in sorted(range(size), key=lambda i: (load.get(id(pool[i]), 0), (i - first) % size))]
        free = [per_worker - load.get(id(w), 0) for w in order]
        return [w for k in range(max(free, default=0)) for w, n in zip(order, free) if k < n]

    def _submit_queued(self) -> None:
        pools = {True: (self.workers, SCRIPTED_JOBS_PER_WORKER), False: (self.models.ready, MODEL_JOBS_PER_WORKER)}
        for scripted, (pool, per_worker) in pools.items():
            if not self._maybe_queued[scripted]:  # before the slots: a model pool has thousands of them
                continue
            slots = self._free_slots(pool, per_worker, self._first[scripted])
            if not slots:
                continue
            self._maybe_queued[scripted] = False  # before the claim: a launch committed meanwhile sets it again
            with self._writing() as c:
                held, stopped = stopping.held(c, scripted, self.core.clock.now_ms())
                rows = stopping.capped(c, lifecycle.claim(c, scripted, len(slots), held=held,
                                                          skip=stopping.beyond(c, scripted)))
                # a series with a target or a budget goes one trial per call: a stop leaves the rest queued
                per_chunk = self._per_chunk(rows) if scripted and not stopping.controlled(
                    c, {r.batch_id for r in rows}) else 1
                series = tuple(sorted({r.batch_id for r in rows if r.batch_id}))
                if per_chunk > 1 and len(rows) == len(slots) and series:  # more of these series may wait
                    rows += lifecycle.claim(c, scripted, len(slots) * (per_chunk - 1), series)
            if stopped:
                self.ends.landed(stopped)
                self.archiver.ended(stopped)
            if len(rows) >= len(slots):  # it took all it asked for: more may wait
                self._maybe_queued[scripted] = True
            if rows:
                self._first[scripted] += 1
                self._hand_over(chunked(rows, len(slots)), slots)

    def _per_chunk(self, rows: list[Run]) -> int:
        """Runs per chunk for claimed runs like these: as many as fit CHUNK_AGENT_TICKS."""
        if self.tick_ms > 0 or not rows or not all(kinds.of(r.scenario_id).in_chunks for r in rows):
            return 1
        work = max(r.work() for r in rows)
        return max(1, min(CHUNK_RUNS, CHUNK_AGENT_TICKS // max(1, work)))

    def _hand_over(self, chunks: list[list], slots: list) -> None:
        handed, back = [], []
        for rows, worker in zip(chunks, slots):
            try:
                handed += zip([r.id for r in rows], self._submit(rows, worker))
            except Exception:  # never leave a claimed run `launching`: it goes back to the queue
                log.exception("handing runs %s to a worker failed", ", ".join(r.id for r in rows))
                back += [r.id for r in rows]

        def step(c):
            lifecycle.handed_many(c, handed)
            for run_id in back:
                lifecycle.requeue(c, run_id)
            if back:
                self._maybe_queued = {True: True, False: True}
        self._write(step, f"hand over {len(handed)} runs")

    def _submit(self, rows: list[Run], worker) -> list[str]:
        """Hand claimed runs to a worker in one call; returns their match ids. A run stays `launching`
        until the worker reports that it began playing it (it may wait behind another job or run)."""
        jobs = [self._job(row) for row in rows]
        recorder = None
        if not rows[0].scripted:
            if self.recorder is None:  # started with the first model run
                self.recorder = start_recorder(str(self.core.data_dir), self.shared,
                                               getattr(self.core.store, "url", None))
            recorder = self.recorder
        ref = worker.play_many.remote([j.__dict__ for j in jobs], recorder)
        ids = [row.id for row in rows]
        self.inflight[ref] = (ids, worker)
        ref.future().add_done_callback(lambda _: self._wake.set())  # on a Ray thread: it only wakes the loop
        self.by_run.update((run_id, worker) for run_id in ids)
        return [j.match_id for j in jobs]

    def _job(self, run: Run) -> Job:
        eff, seats = run.effective, plain(run.roster)  # a job is plain data: the worker's side reads dicts
        # A job carries no path of the head's data dir: its worker may be on a node that cannot see it.
        # Model seats get their keys from the recorder actor. The archive's location goes with the node
        # that can write it: every node for a shared archive, the head's for a path on its disk (a worker
        # elsewhere hands the match back), none for an archive of this process alone.
        reach = self.archive.reach
        return Job(run_id=run.id, match_id=secrets.token_hex(16),  # unlisted pages: the id is the only key
                   data_dir="", season_ticks=eff["season_ticks"], env=eff["env"], seats=seats,
                   meta={"scenario_id": run.scenario_id, "scenario_hash": run.scenario_hash,
                         "config_hash": eff["hash"], "batch_id": run.batch_id,
                         # a fork's record, and where its worker reads the original (play/fork.py); as
                         # JSON data, archived with the match's meta
                         **({"fork": run.fork.model_copy(update={"archive": self.archive.location}).model_dump(
                             mode="json")} if run.fork else {})},
                   spend_cap_usd=run.cap_usd, tick_ms=self.tick_ms, account_id=run.account_id,
                   head_node=self._node, archive="" if reach == PROCESS else self.archive.location,
                   archive_node="" if reach == SHARED else self._node, agents=self.agents.for_seats(seats),
                   keep_log=self.keep_log, tenure=self.tenure or "")

    def _collect(self, timeout: float) -> None:
        # wake on the first result, then take whatever else is ready too
        ready, rest = ray.wait(list(self.inflight), num_returns=1, timeout=timeout)
        if ready and rest:
            ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        outcomes, lost, failed = [], [], []
        try:
            got = ray.get(ready)  # one call for every ready result; a failure is sorted out one by one
        except RayError:
            got = None
        for k, ref in enumerate(ready):
            run_ids, worker = self.inflight.pop(ref)
            for run_id in run_ids:
                self.by_run.pop(run_id, None)
                self._began.discard(run_id)
                self.live_frames.pop(run_id, None)
            try:
                played = got[k] if got is not None else ray.get(ref)
            except RayActorError:
                self._replace(worker)
                lost += run_ids
                continue
            except RayError as e:  # the call itself failed: its traceback goes to the log, run.error stays short
                log.error("runs %s: the worker raised", ", ".join(run_ids), exc_info=e)
                failed += [(run_id, unplayable(cause(e))) for run_id in run_ids]
                continue
            for o in played:
                if isinstance(o, dict):  # {run_id, raised, traceback}: its match raised; the rest of the chunk stands
                    log.error("run %s: the worker raised\n%s", o["run_id"], o["traceback"])
                    failed.append((o["run_id"], unplayable(o["raised"])))
                else:
                    outcomes.append(o)
        if outcomes:
            self._record(outcomes)
        if lost:
            self._write(lambda c: self._lost(c, lost, WORKER_LOST), f"requeue {len(lost)} runs of a lost worker")
        for run_id, message in failed:
            self._write(lambda c, r=run_id, m=message: self._failed(c, r, m), f"fail run {run_id}")

    def _replace(self, worker) -> None:
        """A dead worker leaves its pool once (it may fail several jobs) and a new one of its kind joins."""
        if self.models.lost(worker):
            self.models.grow()  # its node gets another, unless the node left with it
        elif any(w is worker for w in self.workers):
            fresh = MatchWorker.remote()
            self.workers = [w for w in self.workers if w is not worker] + [fresh]
            self._starting.append(fresh.pid.remote())

    def _record(self, outcomes: list[dict]) -> None:
        """Ready outcomes in one store transaction (lifecycle.ended_many) and one export. Their workers
        landed the matches already; matches a worker handed back (its node cannot reach the archive, or
        the archive refused them) are landed here first, in a write of their own: a run reads finished
        only once its match can be read, and only those runs fail if the archive keeps refusing."""
        kept = {}  # a failed run's transcript with no match to archive it beside: kept with the run
        for o in outcomes:
            if o.seats is None and o.transcript is not None:
                kept[o.run_id] = from_ipc(o.transcript).to_pylist()
                o.transcript = None
        back = [o for o in outcomes if o.seats is not None]

        def land():
            for o in back:
                if o.seats is None:  # landed by an earlier try
                    continue
                files = self.archive.land(o.match_id, o.events, o.seats, o.transcript, o.game)
                o.archived = {"node_id": self._node, "pid": os.getpid(), "files": files}
                o.events = o.seats = o.transcript = o.game = None

        def step(c, these):
            for o in these:
                if o.status == DRAINED:  # stopped at a tick boundary for a shutdown: resumes later
                    lifecycle.resume(c, o.run_id, counted=False)
                elif o.run_id in kept:
                    lifecycle.keep_transcript(c, o.run_id, kept[o.run_id])
            lifecycle.ended_many(c, [o for o in these if o.status != DRAINED], self.core.clock.now_ms())
            return [o.run_id for o in these if o.status != DRAINED]
        there = [o for o in outcomes if o.seats is None]
        if there:
            self._write(lambda c: step(c, there), f"record {len(there)} results")
        if back:
            self._write(lambda c: step(c, back), f"record {len(back)} results handed back", land,
                        tuple(o.run_id for o in back))

    def _failed(self, c, run_id: str, message: str) -> list[str]:
        lifecycle.fail(c, run_id, message, self.core.clock.now_ms())
        return [run_id]

    def _lost(self, c, run_ids: list[str], why: str, counted: bool = True, scripted: bool = True) -> list[str]:
        """Runs whose worker is gone: requeued, resumed, cancelled or failed (lifecycle.lost); whatever was
        landed for them before the store heard of it is dropped, so no reader counts a match no run owns.
        counted: the loss counts towards a model run's MAX_RESUMES (a shutdown does not); scripted:
        scripted runs are handled too (a shutdown leaves them to the next start)."""
        ended = []
        self._maybe_queued = {True: True, False: True}  # some may be queued again
        for run in lifecycle.in_world(c, run_ids):
            if run.scripted and not scripted:
                continue
            if run.match_id:
                self.archive.remove_match(run.match_id)
            went = lifecycle.lost(c, run, why, self.core.clock.now_ms(), resumable=kinds.of(run.scenario_id).resumable,
                                  counted=counted)
            if went != QUEUED:
                ended.append(run.id)
        return ended  # the runs that ended: the caller exports them once committed

    def _progress(self) -> None:
        """Copy live ticks and starts from busy workers into the store, and pass on cancels asked for in
        another process (the admin CLI, a notebook on the same data dir)."""
        for run_id in lifecycle.cancels_asked(self.core.store.conn()):
            self.request_cancel(run_id)
        busy = {id(w): w for _, w in self.inflight.values()}  # one ticks() call per busy worker
        for w in busy.values():
            try:
                ticks = ray.get(w.ticks.remote(), timeout=1.0)
            except RayError:
                continue

            def step(c, ticks=ticks):
                for run_id, (tick, began_ms) in ticks.items():
                    if run_id not in self.by_run:
                        continue  # its result is in already
                    if run_id not in self._began:
                        lifecycle.began(c, run_id, began_ms)
                    lifecycle.tick(c, run_id, tick)
            self._write(step, "live ticks")
            self._began.update(r for r in ticks if r in self.by_run)
            try:  # positions stay in memory: the public match page reads them, nothing is stored
                frames = ray.get(w.frames.remote(), timeout=1.0)
            except RayError:
                continue
            self.live_frames.update((r, f) for r, f in frames.items() if r in self.by_run)

    def _sweep(self) -> None:
        """Runs the store shows launching or running that no worker of this dispatcher holds (a
        result or a loss whose write was dropped): handled as a lost worker's runs. Skipped while
        writes are pending, since those may still end them."""
        self.archiver.retry()
        if self._pending:
            return

        def step(c):
            stranded = [r for r in lifecycle.in_world_ids(c) if r not in self.by_run]
            if stranded:
                log.warning("%d runs were stranded with no worker: %s", len(stranded), ", ".join(stranded))
            return self._lost(c, stranded, WORKER_LOST) if stranded else None
        self._write(step, "sweep stranded runs")

    def reconcile(self) -> None:
        """Runs left launching or running by a previous process: requeue scripted ones (a replay costs
        nothing and gives the same match), fail the model runs that were playing. Queued runs simply
        resume."""
        self._write(lambda c: self._lost(c, lifecycle.in_world_ids(c), RESTARTED),
                    "recover runs a previous process left")


WORKER_LOST = "the worker playing this run stopped; the turns it played until then stay metered"
SHUT_DOWN = "the service shut down while this run was playing; the turns it played stay metered"
# How long a stop waits for model matches to reach a tick boundary (a turn's time at most, usually
# far less); within a container's stop grace period.
DRAIN_S = 20.0
RESTARTED = "the service restarted while this run was playing; it was stopped, and the turns it played stay metered"


def unplayable(why: str) -> str:
    """run.error's message for a match its worker could not play."""
    return f"the match could not be played: {why}"


def chunked(rows: list, n: int) -> list[list]:
    """rows (oldest first) in at most n chunks of near-equal size, in order: each chunk one worker call."""
    size = -(-len(rows) // n)
    return [rows[k:k + size] for k in range(0, len(rows), size)]
