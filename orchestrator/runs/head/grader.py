"""The head's side of grading: a thread that finds ended runs whose grading is pending, hands their
decisions to Ray tasks on the workers (grading/work.py) in parts, and records each part as it comes
back. Nothing here is on the run's own path: a run is finished, and its results are read, before its
grading starts.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import ray
from ray.exceptions import RayError

from analytics.archive.store import Archive
from analytics.grading import summarize
from orchestrator.core import Core
from orchestrator.grading import plan, states, work
from orchestrator.grading.fair import FairQueue
from orchestrator.grading.settings import settings
from orchestrator.statuses import TERMINAL
from orchestrator.store import Connection, StoreError
from orchestrator.store import grading as stored
from orchestrator.workers import cause, cluster_cpus

log = logging.getLogger("studio.grading")
POLL_S = 0.5     # how often ended runs are looked for, and results waited on
RETRY_S = 2.0    # a failed grading starts again no sooner than this


@dataclass
class Grading:
    """One run's grading while this process holds it."""
    run_id: str
    account: str
    match_id: str
    key: str | None          # the series' batch_id the match is compacted under, if any
    env: dict
    seats: list[int]
    start: int = 0           # a fork grades its own ticks, from its fork tick on
    out: int = 0             # tasks not yet back
    failed: list = field(default_factory=list)  # why its tasks failed


class Grader:
    """One run's grading: a `count` task reads the match and lists its decisions; those not already
    stored (a grading started before, by this process or one that stopped) are split into parts
    (plan.parts); at most `tasks` of all runs' tasks are out at once, handed out account by account in
    turn with at most `per_account` of one account's out (grading/fair.py: one account's big grading
    never holds another's back for more than a part); every part's rows are stored as they arrive
    (`graded` counts them); when the last part is back the seat summaries are stored and the run's
    results gain them. A task that fails sends the grading back to pending to start again, at most
    states.MAX_STARTS times; after that it ends done with what it graded (graded < total) and the log
    names the failure."""

    def __init__(self, core: Core, archive: Archive, tasks: int | None = None):
        self.core = core
        # the workers open the archive themselves: a local one by its absolute path
        self.uri = str(archive.local_root) if archive.local_root is not None else archive.uri
        self.tasks = tasks
        self.part_decisions = 0
        self.held: dict[str, Grading] = {}
        self.refs: dict = {}              # ObjectRef -> (run id, "count" | "grade")
        self.waiting: FairQueue | None = None  # (run id, part or None for the count) for a free task slot
        self.unsaved: list = []           # store writes the store refused, retried in order
        self.not_before: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "Grader":
        """Ray must be up. Runs a previous process left running are taken up again."""
        s = settings(self.core.config, cluster_cpus())
        self.tasks = self.tasks or s.tasks
        self.part_decisions = s.part_decisions
        self.waiting = FairQueue(min(self.tasks, s.per_account))
        with self.core.store.write() as c:
            n = states.restart_all(c)
        if n:
            log.warning("%d gradings were running when the last process stopped; they start again", n)
        self._thread = threading.Thread(target=self._loop, name="studio-grading", daemon=True)
        self._thread.start()
        return self

    def per_account(self) -> int:
        """Tasks one account's grading may have out at once (1 before the start)."""
        return self.waiting.per_account if self.waiting is not None else 1

    def stop(self) -> None:
        """Stop handing out tasks; what is out is left (its runs stay running until the next start)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for ref in list(self.refs):
            try:
                ray.cancel(ref, force=True)
            except (RayError, ValueError):  # finished meanwhile, or its worker is gone already
                pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self._flush():
                    self._take_ended()
                    self._submit()
                self._collect()
            except Exception:  # one bad grading must not stop the others
                log.exception("grading step failed")
                self._stop.wait(POLL_S)

    # -- store writes --------------------------------------------------------------------------
    def _write(self, step, what: str) -> None:
        self.unsaved.append((step, what))
        self._flush()

    def _flush(self) -> bool:
        while self.unsaved:
            step, what = self.unsaved[0]
            try:
                with self.core.store.write() as c:
                    step(c)
            except StoreError as e:
                log.warning("the store refused a grading write (%s: %s); retrying", what, e)
                return False
            self.unsaved.pop(0)
        return True

    # -- starting ------------------------------------------------------------------------------
    def _take_ended(self) -> None:
        now = time.monotonic()
        for r in stored.open_of_ended(self.core.store.conn(), TERMINAL):
            if r.run_id in self.held or r.status != "pending" or self.not_before.get(r.run_id, 0) > now:
                continue
            if not r.scored or r.match_id is None:
                self._write(lambda c, i=r.run_id: states.move(c, "nothing", i), f"nothing to grade in {r.run_id}")
                continue
            p = r.plan
            g = Grading(r.run_id, r.account_id, r.match_id, r.batch_id, p.env, plan.graded_seats(p.roster, p.mode),
                        p.fork_tick)
            with self.core.store.write() as c:
                if not states.move(c, "start", g.run_id, started=True):
                    continue
            self.held[g.run_id] = g
            g.out = 1
            self.waiting.put(g.account, (g.run_id, None))

    def _counted(self, g: Grading, decisions: list) -> None:
        decisions = [tuple(d) for d in decisions]
        done = stored.graded_keys(self.core.store.conn(), g.run_id)
        todo = [d for d in decisions if d not in done]
        graded = len(decisions) - len(todo)
        self._write(lambda c: states.move(c, "counted", g.run_id, total=len(decisions), graded=graded),
                    f"count {g.run_id}")
        for part in plan.parts(todo, self.tasks, self.part_decisions):
            self.waiting.put(g.account, (g.run_id, part))
            g.out += 1

    def _submit(self) -> None:
        while len(self.refs) < self.tasks:
            taken = self.waiting.take()
            if taken is None:
                return
            run_id, part = taken[1]
            g = self.held[run_id]
            if part is None:
                self.refs[work.count.remote(self.uri, g.match_id, g.key, g.seats, g.start)] = (run_id, "count")
            else:
                self.refs[work.grade.remote(self.uri, g.match_id, g.key, g.env, g.seats, part)] = (run_id, "grade")

    # -- results -------------------------------------------------------------------------------
    def _collect(self) -> None:
        if not self.refs:
            self._stop.wait(POLL_S)
            return
        ready, _ = ray.wait(list(self.refs), num_returns=1, timeout=POLL_S)
        for ref in ready:
            run_id, what = self.refs.pop(ref)
            g = self.held[run_id]
            g.out -= 1
            self.waiting.done(g.account)
            try:
                got = ray.get(ref)
            except RayError as e:
                log.error("run %s: a grading task (%s) failed: %s", run_id, what, cause(e), exc_info=e)
                g.failed.append(cause(e))
                got = None
            if got is not None and what == "count":
                self._counted(g, got)
            elif got:
                self._write(lambda c, rows=got: _store_rows(c, run_id, rows), f"grades of {run_id}")
            if g.out == 0:
                self._settle(g)

    def _settle(self, g: Grading) -> None:
        del self.held[g.run_id]
        if g.failed:
            starts = stored.starts(self.core.store.conn(), g.run_id)
            if starts < states.MAX_STARTS:
                self.not_before[g.run_id] = time.monotonic() + RETRY_S
                self._write(lambda c: states.move(c, "retry", g.run_id), f"retry grading {g.run_id}")
                return
            log.error("run %s: grading gave up after %d starts (%s); what was graded is kept", g.run_id, starts,
                      "; ".join(g.failed))
        self.not_before.pop(g.run_id, None)
        self._write(lambda c: _finish(c, g.run_id, g.seats), f"finish grading {g.run_id}")


def _store_rows(c: Connection, run_id: str, rows: list[dict]) -> None:
    stored.add(c, run_id, rows)
    states.move(c, "part", run_id, recount=True)


def _finish(c: Connection, run_id: str, seats: list[int]) -> None:
    """Seat summaries from every stored row; the run's results gain them (`decisions`, null for a seat
    not graded); the grading is done."""
    summaries = summarize(stored.every(c, run_id), seats)
    stored.set_summaries(c, run_id, summaries)
    stored.results_gain(c, run_id, summaries)
    states.move(c, "done", run_id, recount=True)
