"""The dispatcher: one thread in the service that hands queued runs to Ray workers and records
what comes back.

queued -> launching (claimed in a write transaction) -> running (handed to a worker) ->
finished | cancelled | failed. A worker that dies fails only its own run; on start, runs a previous
process left launching or running are requeued when every seat is scripted (replaying them costs
nothing) and failed otherwise, with their reservations settled at zero.
"""
from __future__ import annotations

import json
import logging
import secrets
import threading
import time

import ray
from ray.exceptions import RayActorError, RayError

from orchestrator.archive_store import Archive
from orchestrator.core import Core
from orchestrator.playing import Job
from orchestrator.runs.registry import Registry
from orchestrator.store import now_ms
from orchestrator.workers import MODEL_JOBS_PER_WORKER, MatchWorker, cluster_cpus, init_ray, model_worker

log = logging.getLogger("studio.dispatcher")
PROGRESS_EVERY_S = 1.0
# A second job waits inside the actor, so the worker never idles while the dispatcher records the
# first one; the run's started_at_ms is taken from the worker when it really starts playing.
SCRIPTED_JOBS_PER_WORKER = 2
MODEL_WORKERS = 2


class Dispatcher:
    def __init__(self, core: Core, *, ray_address: str | None = None, num_cpus: int | None = None,
                 workers: int | None = None):
        self.core = core
        self.ray_address = ray_address
        self.num_cpus = num_cpus
        self.n_workers = workers  # default: one per CPU of the cluster
        self.workers: list = []       # scripted matches, one CPU each
        self.model_workers: list = []  # matches with model seats, no CPU held
        self.inflight: dict = {}      # ObjectRef -> (run_id, worker)
        self.by_run: dict = {}        # run_id -> worker
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.archive = Archive.of(core.data_dir, core.config)  # workers hand matches back; the head lands them
        self.registry = Registry(core, self.archive)
        # spectators (and tests) may slow scripted matches down to watch them live
        self.tick_ms = float((core.config.get("runs") or {}).get("min_tick_ms", 0))

    def capacity(self, scripted: bool = True) -> int:
        """How many runs of a kind play at once: one per scripted worker, several per model worker."""
        if scripted:
            return max(1, len(self.workers))
        return max(1, len(self.model_workers) * MODEL_JOBS_PER_WORKER)

    def start(self) -> None:
        init_ray(self.ray_address, self.num_cpus)
        self.workers = [MatchWorker.remote() for _ in range(self.n_workers or cluster_cpus())]
        self.model_workers = [model_worker() for _ in range(MODEL_WORKERS)]
        self.reconcile()
        self.registry.sweep()
        self.core.dispatcher = self
        self._thread = threading.Thread(target=self._loop, name="studio-dispatcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop dispatching. Runs still playing stay `running` in the store; the next start requeues
        or fails them (reconcile), so the workers playing them are killed rather than awaited."""
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout=10)
        for w in self.workers + self.model_workers:
            ray.kill(w)
        self.workers, self.model_workers = [], []
        self.core.dispatcher = None
        self.registry.close()

    def wake(self) -> None:
        self._wake.set()

    def request_cancel(self, run_id: str) -> None:
        worker = self.by_run.get(run_id)
        if worker is not None:
            worker.cancel.remote(run_id)

    # -- the loop ------------------------------------------------------------------------------
    def _loop(self) -> None:
        last_progress = time.monotonic()
        while not self._stop.is_set():
            try:
                self._submit_queued()
                if self.inflight:
                    self._collect(timeout=0.02)
                else:
                    self._wake.wait(0.5)
                    self._wake.clear()
                if time.monotonic() - last_progress > PROGRESS_EVERY_S:
                    self._progress()
                    last_progress = time.monotonic()
            except Exception:  # never let one bad record stop every later run
                log.exception("dispatcher step failed")
                time.sleep(0.2)

    def _free_slots(self, pool: list, per_worker: int) -> list:
        load: dict[int, int] = {}
        for _, w in self.inflight.values():
            load[id(w)] = load.get(id(w), 0) + 1
        return [w for w in pool for _ in range(per_worker - load.get(id(w), 0))]

    def _submit_queued(self) -> None:
        for scripted, slots in ((1, self._free_slots(self.workers, SCRIPTED_JOBS_PER_WORKER)),
                                (0, self._free_slots(self.model_workers, MODEL_JOBS_PER_WORKER))):
            if not slots:
                continue
            with self.core.store.write() as c:
                rows = c.execute(
                    "UPDATE runs SET status = 'launching' WHERE id IN (SELECT id FROM runs WHERE status = 'queued' "
                    "AND scripted = ? ORDER BY seq LIMIT ?) RETURNING *", (scripted, len(slots))).fetchall()
            if rows:
                self._hand_over(sorted(rows, key=lambda r: r["seq"]), slots)

    def _hand_over(self, rows: list, slots: list) -> None:
        started, back = [], []
        for row, worker in zip(rows, slots):
            try:
                started.append(self._submit(row, worker))
            except Exception:  # never leave a claimed run `launching`: it goes back to the queue
                log.exception("handing run %s to a worker failed", row["id"])
                back.append((row["id"],))
        with self.core.store.write() as c:
            c.executemany("UPDATE runs SET status = 'running', match_id = ?, started_at_ms = ?, live_tick = 0 "
                          "WHERE id = ?", started)
            c.executemany("UPDATE runs SET status = 'queued' WHERE id = ?", back)

    def _submit(self, row, worker) -> tuple:
        """Hand one claimed run to a worker; returns its (match_id, started_at_ms, run_id)."""
        match_id = secrets.token_hex(16)  # unlisted pages: the id is the only key
        eff = json.loads(row["effective"])
        job = Job(run_id=row["id"], match_id=match_id, data_dir=str(self.core.data_dir),
                  season_ticks=eff["season_ticks"], env=eff["env"], seats=json.loads(row["roster"]),
                  meta={"scenario_id": row["scenario_id"], "scenario_hash": row["scenario_hash"],
                        "config_hash": eff["hash"], "batch_id": row["batch_id"]},
                  spend_cap_usd=row["cap_usd"], tick_ms=self.tick_ms, account_id=row["account_id"])
        ref = worker.play.remote(job.__dict__)
        self.inflight[ref] = (row["id"], worker)
        self.by_run[row["id"]] = worker
        return match_id, now_ms(), row["id"]

    def _collect(self, timeout: float) -> None:
        # wake on the first result, then take whatever else is ready too
        ready, rest = ray.wait(list(self.inflight), num_returns=1, timeout=timeout)
        if ready and rest:
            ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        outcomes = []
        try:
            got = ray.get(ready)  # one call for every ready result; a failure is sorted out one by one
        except RayError:
            got = None
        for k, ref in enumerate(ready):
            run_id, worker = self.inflight.pop(ref)
            self.by_run.pop(run_id, None)
            try:
                outcomes.append(got[k] if got is not None else ray.get(ref))
            except RayActorError as e:
                self._replace(worker)
                self._fail(run_id, f"the worker playing this run died ({type(e).__name__}); nothing after its last "
                                   "archived tick was metered")
            except RayError as e:
                self._fail(run_id, f"the match could not be played: {str(e).splitlines()[0][:300]}")
        if not outcomes:
            return
        try:
            self._record(outcomes)
        except Exception as e:  # a run must never stay `running` because its record failed
            log.exception("recording %d runs failed", len(outcomes))
            for o in outcomes:
                self._fail(o["run_id"], f"the match played but could not be recorded: {type(e).__name__}")

    def _replace(self, worker) -> None:
        """A dead worker leaves its pool once (it may fail several jobs) and a new one of its kind joins."""
        if any(w is worker for w in self.model_workers):
            self.model_workers = [w for w in self.model_workers if w is not worker] + [model_worker()]
        elif any(w is worker for w in self.workers):
            self.workers = [w for w in self.workers if w is not worker] + [MatchWorker.remote()]

    def _record(self, outcomes: list[dict]) -> None:
        """Every ready outcome landed in the archive, then one store transaction and one catalog insert:
        a run reads finished only once its match can be read."""
        for o in outcomes:
            if o.get("events") is not None:
                self.archive.land(o["match_id"], o["events"], o["seats"])
            o["events"] = o["seats"] = None
        ids = [o["run_id"] for o in outcomes]
        rows = {r["id"]: r for r in self.core.store.all(
            f"SELECT * FROM runs WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))}
        updates = []
        for o in outcomes:
            roster = json.loads(rows[o["run_id"]]["roster"])
            for seat, usage in zip(roster, o["usage"]):
                seat["usage"] = usage
            settled = sum(u["agent_turns"] for u in o["usage"])
            updates.append((o["status"], o["stop_reason"], json.dumps(o["results"]) if o["results"] else None,
                            json.dumps(roster), o["spend_usd"], settled, o["match_ticks"], now_ms(),
                            json.dumps(o["error"]) if o["error"] else None, o.get("started_at_ms"), o["run_id"]))
        with self.core.store.write() as c:
            c.executemany("UPDATE runs SET status = ?, stop_reason = ?, results = ?, roster = ?, spend_usd = ?, "
                          "turns_settled = ?, live_tick = ?, finished_at_ms = ?, error = ?, "
                          "started_at_ms = COALESCE(?, started_at_ms) WHERE id = ?", updates)
        self.registry.ended(ids, rows, outcomes)

    def _fail(self, run_id: str, message: str) -> None:
        with self.core.store.write() as c:
            c.execute("UPDATE runs SET status = 'failed', stop_reason = 'failed', error = ?, turns_settled = 0, "
                      "finished_at_ms = ? WHERE id = ?",
                      (json.dumps({"error": "internal_error", "message": message}), now_ms(), run_id))
        self.registry.ended([run_id])

    def _progress(self) -> None:
        """Copy live ticks from busy workers into the store (long runs only take more than a poll), and
        pass on cancels asked for in another process (the admin CLI, a notebook on the same data dir)."""
        for row in self.core.store.all("SELECT id FROM runs WHERE status = 'running' AND cancel_requested = 1"):
            self.request_cancel(row["id"])
        busy = {id(w): w for _, w in self.inflight.values()}  # one ticks() call per busy worker
        for w in busy.values():
            try:
                ticks = ray.get(w.ticks.remote(), timeout=1.0)
            except RayError:
                continue
            with self.core.store.write() as c:
                for run_id, tick in ticks.items():
                    c.execute("UPDATE runs SET live_tick = ? WHERE id = ? AND status = 'running'", (tick, run_id))

    def reconcile(self) -> None:
        """Runs left launching or running by a previous process: requeue scripted ones (a replay costs
        nothing and gives the same match), fail the rest. Queued runs simply resume. Whatever was landed
        for them before the store heard of it is dropped, so no reader counts a match no run owns."""
        for row in self.core.store.all("SELECT match_id FROM runs WHERE status IN ('launching', 'running') "
                                       "AND match_id IS NOT NULL"):
            self.archive.remove_match(row["match_id"])
        with self.core.store.write() as c:
            c.execute("UPDATE runs SET status = 'queued', match_id = NULL, started_at_ms = NULL, live_tick = NULL "
                      "WHERE status IN ('launching', 'running') AND scripted = 1 AND cancel_requested = 0")
            c.execute("UPDATE runs SET status = 'cancelled', stop_reason = 'cancelled', turns_settled = 0, "
                      "match_id = NULL, finished_at_ms = ? WHERE status IN ('launching', 'running') AND "
                      "scripted = 1 AND cancel_requested = 1", (now_ms(),))
            msg = json.dumps({"error": "internal_error", "message": "the service restarted while this run was "
                              "playing; it was stopped and nothing was metered for it"})
            c.execute("UPDATE runs SET status = 'failed', stop_reason = 'failed', error = ?, turns_settled = 0, "
                      "finished_at_ms = ? WHERE status IN ('launching', 'running')", (msg, now_ms()))
