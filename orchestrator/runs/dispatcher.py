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
from dataclasses import asdict

import ray
from ray.exceptions import RayActorError, RayError

from orchestrator.core import Core
from orchestrator.playing import Job
from orchestrator.runs.registry import Registry
from orchestrator.store import now_ms
from orchestrator.workers import MatchWorker, cluster_cpus, init_ray

log = logging.getLogger("studio.dispatcher")
PROGRESS_EVERY_S = 1.0


class Dispatcher:
    def __init__(self, core: Core, *, ray_address: str | None = None, num_cpus: int | None = None,
                 workers: int | None = None):
        self.core = core
        self.ray_address = ray_address
        self.num_cpus = num_cpus
        self.n_workers = workers  # default: one per CPU of the cluster
        self.workers: list = []
        self.inflight: dict = {}      # ObjectRef -> (run_id, worker)
        self.by_run: dict = {}        # run_id -> worker
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.registry = Registry(core.data_dir)
        # spectators (and tests) may slow scripted matches down to watch them live
        self.tick_ms = float((core.config.get("runs") or {}).get("min_tick_ms", 0))

    @property
    def capacity(self) -> int:
        return max(1, len(self.workers))

    def start(self) -> None:
        init_ray(self.ray_address, self.num_cpus)
        self.workers = [MatchWorker.remote() for _ in range(self.n_workers or cluster_cpus())]
        self.reconcile()
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
        for w in self.workers:
            ray.kill(w)
        self.workers = []
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

    def _free_workers(self) -> list:
        busy = {id(w) for _, w in self.inflight.values()}
        return [w for w in self.workers if id(w) not in busy]

    def _submit_queued(self) -> None:
        free = self._free_workers()
        if not free:
            return
        with self.core.store.write() as c:
            rows = c.execute(
                "UPDATE runs SET status = 'launching' WHERE id IN (SELECT id FROM runs WHERE status = 'queued' "
                "AND scripted = 1 ORDER BY seq LIMIT ?) RETURNING *", (len(free),)).fetchall()
        for row, worker in zip(sorted(rows, key=lambda r: r["seq"]), free):
            self._hand_over(row, worker)

    def _hand_over(self, row, worker) -> None:
        match_id = secrets.token_hex(16)  # unlisted pages: the id is the only key
        eff = json.loads(row["effective"])
        job = Job(run_id=row["id"], match_id=match_id, data_dir=str(self.core.data_dir),
                  season_ticks=eff["season_ticks"], env=eff["env"], seats=json.loads(row["roster"]),
                  meta={"scenario_id": row["scenario_id"], "scenario_hash": row["scenario_hash"],
                        "config_hash": eff["hash"], "batch_id": row["batch_id"]},
                  spend_cap_usd=row["cap_usd"], tick_ms=self.tick_ms)
        ref = worker.play.remote(asdict(job))
        with self.core.store.write() as c:
            c.execute("UPDATE runs SET status = 'running', match_id = ?, started_at_ms = ?, live_tick = 0 "
                      "WHERE id = ?", (match_id, now_ms(), row["id"]))
        self.inflight[ref] = (row["id"], worker)
        self.by_run[row["id"]] = worker
        if row["cancel_requested"]:
            worker.cancel.remote(row["id"])

    def _collect(self, timeout: float) -> None:
        ready, _ = ray.wait(list(self.inflight), num_returns=len(self.inflight), timeout=timeout)
        for ref in ready:
            run_id, worker = self.inflight.pop(ref)
            self.by_run.pop(run_id, None)
            try:
                outcome = ray.get(ref)
            except RayActorError as e:
                self._replace(worker)
                self._fail(run_id, f"the worker playing this run died ({type(e).__name__}); nothing after its last "
                                   "archived tick was metered")
                continue
            except RayError as e:
                self._fail(run_id, f"the match could not be played: {str(e).splitlines()[0][:300]}")
                continue
            try:
                self._record(outcome)
            except Exception as e:  # a run must never stay `running` because its record failed
                log.exception("recording run %s failed", run_id)
                self._fail(run_id, f"the match played but could not be recorded: {type(e).__name__}")

    def _replace(self, worker) -> None:
        self.workers = [w for w in self.workers if w is not worker] + [MatchWorker.remote()]

    def _record(self, o: dict) -> None:
        row = self.core.store.one("SELECT * FROM runs WHERE id = ?", (o["run_id"],))
        roster = json.loads(row["roster"])
        for seat, usage in zip(roster, o["usage"]):
            seat["usage"] = usage
        settled = sum(u["agent_turns"] for u in o["usage"])
        self.registry.register(row, o)
        with self.core.store.write() as c:
            c.execute("UPDATE runs SET status = ?, stop_reason = ?, results = ?, roster = ?, spend_usd = ?, "
                      "turns_settled = ?, live_tick = ?, finished_at_ms = ?, error = ? WHERE id = ?",
                      (o["status"], o["stop_reason"], json.dumps(o["results"]), json.dumps(roster), o["spend_usd"],
                       settled, o["match_ticks"], now_ms(), json.dumps(o["error"]) if o["error"] else None,
                       o["run_id"]))
        self.registry.export_run(self.core, o["run_id"])

    def _fail(self, run_id: str, message: str) -> None:
        with self.core.store.write() as c:
            c.execute("UPDATE runs SET status = 'failed', stop_reason = 'failed', error = ?, turns_settled = 0, "
                      "finished_at_ms = ? WHERE id = ?",
                      (json.dumps({"error": "internal_error", "message": message}), now_ms(), run_id))
        self.registry.export_run(self.core, run_id)

    def _progress(self) -> None:
        """Copy live ticks from busy workers into the store (long runs only take more than a poll)."""
        busy = {id(w): w for _, w in self.inflight.values()}
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
        nothing and gives the same match), fail the rest. Queued runs simply resume."""
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
