"""Writing derived logs into the archive: `studio archive materialize`, and the notebook's views before a
query over events.

A scripted match kept as its inputs has no event log in the archive until one is asked for. Materializing a
series regenerates and verifies each of its matches' logs and writes them as one more published part of the
series, where the DuckDB views and every reader find them as any stored log. Chunks are played in parallel, a
process per CPU; `progress(done, total)` is called as they finish. A match its engine cannot give (another
engine digest, or a replay that does not verify) is not written: it is counted in `failed`, naming why.
Before an engine upgrade, `--all` writes every such log, so the new engine never has to replay them.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterable

from analytics.archive import derive
from analytics.archive.layout import EVENTS_DIR, SEATS_DIR
from analytics.archive.store import PROCESS, Archive

CHUNK = 64  # matches per written part: one process's share, and one progress step
# fewer matches than this are played here: a spawned process's start (its imports, the kernels loaded)
# costs more than it saves
PARALLEL_FROM = 4 * CHUNK


def pending(archive: Archive, keys: Iterable[str] | None = None,
            damaged: list | None = None) -> dict[str, dict[str, dict]]:
    """Series key -> {match id: record} of the scripted matches kept as inputs whose log is not
    written yet (only those series when keys are given), of series archived for good: a series
    still playing may yet drop a match from its staged parts (an orphan of a replayed run). Files
    that cannot be read (damage.Damaged) are left out and added to `damaged` when given, else raised."""
    wanted = set(keys) if keys is not None else None
    written = archive.index(EVENTS_DIR, damaged=damaged)
    out = {}
    for key, matches in archive.index(SEATS_DIR, settled=True, damaged=damaged).items():  # series that ended
        if wanted is not None and key not in wanted:
            continue
        todo = {m: meta[derive.KEY] for m, meta in matches.items()
                if derive.KEY in meta and m not in written.get(key, {})}
        if todo:
            out[key] = todo
    return out


def engine_changed(archive: Archive, damaged: list | None = None) -> dict[str, int]:
    """Series key -> how many of its matches kept as inputs were recorded under another engine digest
    and have no written log: what this engine cannot show (the server says so at start)."""
    return {key: n for key, todo in pending(archive, damaged=damaged).items()
            if (n := sum(derive.engine_changed(rec) for rec in todo.values()))}


def _write_chunk(uri: str, key: str, records: list[tuple[str, dict]]) -> tuple[int, dict[str, str]]:
    archive = Archive(uri)
    tables, failed = [], {}
    for match_id, rec in records:
        try:
            tables.append(derive.regenerate(match_id, rec))
        except derive.DerivedLogError as e:
            failed[match_id] = e.message
    if tables:
        archive.write_events(key, tables, f"derived-{records[0][0]}")
    return len(tables), failed


def materialize(archive: Archive, keys: Iterable[str] | None = None, *, workers: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> dict:
    """Write the pending logs of the given series (every series when keys is None). Returns
    {matches, written, failed: {match id: why}, series, damaged: {file: why}} (files whose matches
    could not be read: `studio archive check` lists every one)."""
    damaged: list = []
    todo = pending(archive, keys, damaged)
    chunks = [(key, items[i:i + CHUNK]) for key, recs in todo.items()
              for items in [sorted(recs.items())] for i in range(0, len(items), CHUNK)]
    total = sum(len(recs) for recs in todo.values())
    done, written, failed = 0, 0, {}

    def finished(n_records: int, result: tuple[int, dict]) -> None:
        nonlocal done, written
        done += n_records
        written += result[0]
        failed.update(result[1])
        if progress is not None:
            progress(done, total)

    workers = workers or os.cpu_count() or 1
    if total < PARALLEL_FROM or workers == 1 or archive.reach == PROCESS:
        for key, records in chunks:
            finished(len(records), _write_chunk(archive.location, key, records))
    else:
        # spawned, not forked: the service's threads (and Ray's) must not be copied mid-flight
        with ProcessPoolExecutor(min(workers, len(chunks)), mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [(len(records), pool.submit(_write_chunk, archive.location, key, records))
                       for key, records in chunks]
            for n, future in futures:
                finished(n, future.result())
    return {"matches": total, "written": written, "failed": failed, "series": sorted(todo),
            "damaged": {e.path: e.cause for e in damaged}}


def engine_note(archive: Archive, damaged: list | None = None) -> str | None:
    """What the server says at start when some matches were recorded under another engine (None when
    none were): how many, and which command writes their logs before an upgrade. A file it cannot
    read is left out of the count and added to `damaged` when given (the server names each, and
    starts)."""
    changed = engine_changed(archive, damaged)
    if not changed:
        return None
    n = sum(changed.values())
    return (f"{n} scripted match{'es' if n != 1 else ''} in {len(changed)} series (or single runs) were played under "
            f"another engine than this one ({derive.engine_digest()}) and their event logs were not kept: their "
            f"results stand, but their log, replay and decision pages cannot be shown. To keep such logs, run "
            f"`{derive.UPGRADE_COMMAND}` with the engine that played them before upgrading (docs/RUNS.md, "
            f"\"Upgrading the engine\").")
