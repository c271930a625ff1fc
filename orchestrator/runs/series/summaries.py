"""A series' summary, computed once per change of its scored runs and kept: in the store (table
batch_summaries), so every process on the data dir and the next start read it, and parsed in this
process's memory, so a read of a series that did not change costs no parse either.

The version a summary is kept under is a digest of the match ids it was computed from: a series'
scored runs only ever grow (an ended run never changes), so the same set means the same rows and the
same summary, and a run that ends changes it.

Computed here only when this process has no dispatcher (a read-only process, a notebook); with one,
a worker's task computes it and reads take the kept one.
"""
from __future__ import annotations

import hashlib
import logging
import threading

from analytics.archive.store import Archive
from orchestrator.core import Core
from orchestrator.grading.read import graded_seats
from orchestrator.runs.series.summary_text import Kept, compute, source
from orchestrator.store import OperationalError, series as store, unavailable

log = logging.getLogger("studio.summaries")

MEMO_SERIES = 256  # parsed summaries held per process, the series read most recently


_memo: dict[tuple[str, str], tuple[str, Kept]] = {}
# One summary computed at a time: two reads of a series that just changed compute it once, and the
# computation is CPU-bound (a second one in parallel would only share the same cores).
_computing = threading.Lock()


def version(scored, graded=()) -> str:
    """Scored matches, and those whose decision grading is done (their accuracies join the summary then)."""
    text = "\n".join(sorted(scored)) + "\ngraded\n" + "\n".join(sorted(graded))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def summary_source(core: Core, match_ids: list[str], batch_id: str | None = None):
    """An in-memory DuckDB table of exactly this series' seat rows (landed or compacted): no glob over
    the whole archive, and no dependence on the export of ended runs having caught up."""
    return source(Archive.of(core.data_dir, core.config), match_ids, batch_id, graded_seats(core, match_ids))


def _remember(key: tuple[str, str], v: str, kept: Kept) -> None:
    _memo.pop(key, None)
    _memo[key] = (v, kept)
    while len(_memo) > MEMO_SERIES:
        _memo.pop(next(iter(_memo)), None)  # the oldest entry: dicts keep insertion order


def cached(core: Core, batch_id: str, scored, graded=()) -> Kept | None:
    """The kept summary of the series over exactly these scored matches, or None when there is none."""
    v = version(scored, graded)
    hit = _memo.get((str(core.data_dir), batch_id))
    if hit is not None and hit[0] == v:
        return hit[1]
    got = _newest(core, batch_id)
    return got[1] if got is not None and got[0] == v else None


def newest(core: Core, batch_id: str) -> Kept | None:
    """The series' most recently kept summary, whatever runs it covers, or None when none is kept."""
    got = _newest(core, batch_id)
    return got[1] if got is not None else None


def _newest(core: Core, batch_id: str) -> tuple[str, Kept] | None:
    """(version, summary) as kept in the store; its text is read and parsed once per version."""
    v = store.summary_version(core.store.conn(), batch_id)
    if v is None:
        return None
    key = (str(core.data_dir), batch_id)
    hit = _memo.get(key)
    if hit is not None and hit[0] == v:
        return hit
    got = store.kept_summary(core.store.conn(), batch_id)
    if got is None:
        return None
    kept = Kept(got.summary, got.text)
    _remember(key, got.version, kept)
    return got.version, kept


def summary(core: Core, batch_id: str, scored, graded=()) -> Kept:
    """The series' summary over these scored matches: the kept one, else computed and kept."""
    got = cached(core, batch_id, scored, graded)
    if got is not None:
        return got
    with _computing:
        got = cached(core, batch_id, scored, graded)  # another read may have computed it meanwhile
        if got is not None:
            return got
        scored = list(scored)
        kept = compute(Archive.of(core.data_dir, core.config), batch_id, scored, graded_seats(core, scored))
        keep(core, batch_id, scored, graded, kept)
        return kept


def keep(core: Core, batch_id: str, scored, graded, kept: Kept) -> bool:
    """Kept under its version, when every scored match's rows were there to read; whether it was."""
    return kept.summary["matches"] == len(scored) and _keep(core, batch_id, version(scored, graded), kept)


def _keep(core: Core, batch_id: str, v: str, kept: Kept) -> bool:
    try:
        with core.store.write() as c:
            store.keep_summary(c, batch_id, v, kept.summary["matches"], kept.text, core.clock.now_ms())
    except OperationalError as e:
        if unavailable(e) is None:
            raise
        log.warning("series %s: its summary is not kept for now (%s); the next read computes it again", batch_id, e)
        return False
    _remember((str(core.data_dir), batch_id), v, kept)
    return True
