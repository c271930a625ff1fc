"""After runs end: the export of their final views to archive/runs/, and the compaction of their
matches into one Parquet file per series (analytics/archive/store.py). A single run goes as it ends,
with whatever else ended meanwhile; a series waits until none of its runs is left to play, then goes
in one file of views (`runs/<batch_id>.parquet`, rewritten whole if settled again) and one of matches.
Per-run files would cost the service a Parquet write per run and leave analysts thousands to scan.

Nothing on a request's path waits for it: the dispatcher hands ended runs to a thread. The service
records nothing of it but a log line: the files are the record (a series' file exists, its landed
files are gone), and a compaction that failed is run again by the next sweep.
"""
from __future__ import annotations

import logging
import queue
import random
import threading

from analytics.archive import materialize as derived_logs
from analytics.archive.store import NODE, PROCESS, Archive
from orchestrator.statuses import ACTIVE
from orchestrator.records.run import RunRef
from orchestrator.runs.views import run_view
from orchestrator.store import runs

log = logging.getLogger("studio.export")
# A temporary file or a landed match no run names, older than this, was left by a writer that died
# (a live one moves its file into place within moments, and its run names the match before it plays).
ORPHAN_AGE_S = 3600.0


def views(ended: list[dict]) -> list[dict]:
    """Ended runs (as stored: runs.stored) as archive/runs/ keeps them: their views, with the account."""
    out = []
    for run in map(runs.run_of, ended):
        view = run_view(run)
        view["account_id"] = run.account_id
        out.append(view)
    return out


def export(core, run_ids: list[str], store: Archive | None = None, name: str | None = None, write=None) -> None:
    """Write the final views of these runs to archive/runs/ (named `name`, else after the first run);
    a copy, so a failure is only logged. write(runs, name): who builds and writes the views from the
    runs (a Compactor), else this thread."""
    try:
        # a view shows no results: the largest column is neither sent to the Compactor nor parsed there
        ended = [dict(r, results=None) for r in runs.stored(core.store.conn(), list(run_ids))]
        if ended and write is not None:
            write(ended, name)
        elif ended:
            (store or Archive.of(core.data_dir, core.config)).write_runs(views(ended), name)
    except Exception:  # the store stays the record; the export is a copy for notebooks
        log.exception("exporting %d ended runs failed", len(run_ids))


def settle(core, store: Archive, ended: list[RunRef], swept: list[RunRef] = (), compact=None, write=None) -> None:
    """ended: runs (id, batch_id, match_id) that just ended; swept: runs whose matches a previous
    process landed and never compacted. Single runs that just ended are exported; every series of
    either list with no run left to play is exported and compacted whole (`compact(key, match_ids)`),
    and so is each single run's match. Landed files stay readable until then; a failed compaction is
    logged and retried by the next sweep. compact=None: views only (a process that does not play runs
    must not compact what the playing process's archiver may be compacting). write: as `export`'s."""
    singles = [r.id for r in ended if not r.batch_id]
    if singles:
        export(core, singles, store, write=write)
    try:
        for b in sorted({r.batch_id for r in [*ended, *swept] if r.batch_id}):
            trials = runs.series_refs(core.store.conn(), b)
            if not any(r.status in ACTIVE for r in trials):
                if compact:
                    compact(b, [r.match_id for r in trials if r.match_id])
                export(core, [r.id for r in trials], store, name=b, write=write)
        for r in [*ended, *swept]:
            if compact and not r.batch_id and r.match_id:
                compact(r.match_id, [r.match_id])
    except Exception:
        log.exception("compacting ended series failed")


def start_notes(archive: Archive) -> list[tuple[int, str]]:
    """(log level, line) of what the service says of its archive as it starts: the scripted matches
    this engine cannot replay (an upgrade), and each file whose footer it could not read. A damaged
    file is a fault of its matches alone: the service starts, and their reads answer 410
    `archive_damaged`."""
    damaged: list = []
    note = derived_logs.engine_note(archive, damaged)
    after = ("; its matches' reads answer 410 archive_damaged until it is restored from a backup (`studio archive "
             "check` lists every damaged file)")
    return ([(logging.WARNING, note)] if note else []) + [(logging.ERROR, f"{e}{after}") for e in damaged]


def cancelled_in_queue(core, run_id: str) -> None:
    """A queued run was cancelled: nothing played, so no dispatcher heard of it. This process's
    archiver settles it (its series may have nothing left to play now); with none here, its view is
    exported and the compaction left to the playing process's next sweep."""
    d = core.dispatcher
    if d is not None:
        d.archiver.ended([run_id])
        return
    settle(core, Archive.of(core.data_dir, core.config), runs.refs(core.store.conn(), ids=[run_id]))


class Compactor:
    """A Ray actor's body: compacts series in the archive at `uri`, and writes ended runs' views there
    (Archiver places it). One actor runs its calls one at a time, in order: two compactions of one
    series never overlap. It holds no CPU and runs in another process: on another node than the
    service's when the archive is shared, on the service's node when the archive is a path on its disk.
    An actor rather than plain tasks: a task would start a fresh Python process for most compactions
    (Ray ends idle workers beyond one per CPU), and its imports cost more than the compaction."""

    def __init__(self, uri: str):
        import pyarrow

        pyarrow.set_cpu_count(1)  # it shares its node with the match workers, one per CPU
        self.archive = Archive(uri)

    def compact(self, key: str, match_ids: list[str]) -> str:
        self.archive.compact(key, match_ids)
        return key

    def export(self, ended: list[dict], name: str | None) -> str:
        return self.archive.write_runs(views(ended), name)


class Archiver:
    """The service's thread that settles ended runs: it only decides and reads the store, and whatever
    has queued up meanwhile goes in one file; the work on files runs on a `Compactor`. Compactions run in this thread until `on_ray`
    names the service's Ray node, and always for an archive only this process reaches (PROCESS)."""

    def __init__(self, core, store: Archive | None = None, shared=None):
        self.core = core
        self.shared = shared  # the actors' `Shared`: every head's compactor is the service's one
        self.archive = store or Archive.of(core.data_dir, core.config)
        self._queue: queue.Queue = queue.Queue()
        self._head: str | None = None  # the service's Ray node, once Ray runs
        self._compactor = None         # the Compactor actor, once Ray runs
        self._compacting: dict = {}    # ObjectRef -> what: compactions and exports under way
        self._failed = False           # a compaction failed: the next sweep runs it again
        self._flushes: list = []       # flush() callers waiting for the compactions under way
        self._thread = threading.Thread(target=self._drain, name="studio-export", daemon=True)
        self._thread.start()

    def on_ray(self, head_node: str) -> None:
        """Ray runs: compactions go to a Compactor from now on (none for an archive of this process alone)."""
        if self.archive.reach != PROCESS:
            self._head = head_node
            self._actor()  # started now: a series' files follow its last result as closely as in this thread

    def _actor(self):
        """The Compactor, started with Ray and again after it died; placed by `_where`."""
        import ray

        if self._compactor is None:
            named = self.shared.options("compactor") if self.shared is not None else {}
            self._compactor = ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)(Compactor).options(
                **named, scheduling_strategy=self._where()).remote(self.archive.location)
        return self._compactor

    def ended(self, run_ids: list[str]) -> None:
        self._queue.put(("ended", run_ids))

    def sweep(self) -> None:
        """Compact whatever a previous process landed and never compacted (it stopped mid-series), or a
        compaction that failed; remove what writers that died left (ORPHAN_AGE_S)."""
        self._queue.put(("sweep",))

    def retry(self) -> None:
        """The dispatcher's periodic sweep: a sweep only if a compaction failed since the last one."""
        if self._failed:
            self._failed = False
            self.sweep()

    def flush(self) -> None:
        """Wait until everything handed over so far is written, compactions included."""
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)
        if self._compactor is not None:
            if self.shared is not None:
                self.shared.kill(self._compactor)
            else:
                import ray

                ray.kill(self._compactor)
            self._compactor = None

    def _rows(self, column: str, values: list[str]) -> list[RunRef]:
        c = self.core.store.conn()
        return runs.refs(c, ids=values) if column == "id" else runs.refs(c, matches=values)

    def _compact(self, key: str, match_ids: list[str]) -> None:
        if self._head is None:
            self.archive.compact(key, match_ids)
            return
        self._compacting[self._actor().compact.remote(key, match_ids)] = f"series {key}"

    def _write(self, ended: list[dict], name: str | None) -> None:
        if self._head is None:
            self.archive.write_runs(views(ended), name)
            return
        self._compacting[self._actor().export.remote(ended, name)] = f"the views of {name or ended[0]['id']}"

    def _where(self):
        """On the service's node for an archive on its disk; else on another node when there is one."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if self.archive.reach == NODE:
            return NodeAffinitySchedulingStrategy(self._head, soft=False)
        others = [n["NodeID"] for n in ray.nodes() if n["Alive"] and n["NodeID"] != self._head]
        return NodeAffinitySchedulingStrategy(random.choice(others), soft=True) if others else "DEFAULT"

    def _finished(self, wait_s: float = 0.0) -> None:
        """Collect compactions that have ended; a failure is logged and left to the next sweep."""
        if not self._compacting:
            return
        import ray

        refs = list(self._compacting)
        done = ray.wait(refs, num_returns=len(refs), timeout=wait_s)[0]
        for ref in done:
            what = self._compacting.pop(ref)
            try:
                ray.get(ref)
                log.debug("archived %s", what)
            except Exception as e:  # the landed files stay readable; the next sweep compacts them
                log.warning("archiving %s failed (%s); the next sweep retries", what, e)
                self._failed = True
                if isinstance(e, ray.exceptions.RayActorError):
                    self._compactor = None  # a new one next time, placed afresh

    def _orphans(self) -> None:
        """What writers that died left: temporary files, and landed matches no run names."""
        try:
            self.archive.drop_temporaries(ORPHAN_AGE_S)
            old = self.archive.landed(older_than_s=ORPHAN_AGE_S)
            owned = {r.match_id for r in self._rows("match_id", old)}
            self.archive.remove_matches(m for m in old if m not in owned)
        except Exception:
            log.exception("removing orphaned archive files failed")

    def _drain(self) -> None:
        while True:
            try:  # while compactions run, wake now and then to collect them
                items = [self._queue.get(timeout=0.1 if self._compacting else None)]
            except queue.Empty:
                items = []
            while True:  # take whatever else queued up meanwhile: one file for all of it
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            run_ids = list(dict.fromkeys(r for item in items if item and item[0] == "ended" for r in item[1]))
            sweeping = any(item and item[0] == "sweep" for item in items)
            if sweeping:
                self._orphans()
            swept = self._rows("match_id", self.archive.landed()) if sweeping else []
            ended = self._rows("id", run_ids)
            if ended or swept:
                settle(self.core, self.archive, ended, swept, self._compact, self._write)
            self._flushes += [item[1] for item in items if item and item[0] == "flush"]
            closing = None in items
            self._finished(wait_s=30 if self._flushes or closing else 0)
            if not self._compacting:
                for done in self._flushes:
                    done.set()
                self._flushes = []
            if closing:
                return
