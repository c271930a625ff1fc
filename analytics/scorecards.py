"""Every match's scorecard recomputed from its event log alone, for the whole data dir at once.

Stored seat rows are the rubric's output at archive time; recomputing them from the events checks
the archive end to end and re-scores old logs. It agrees with the rubric's `score` to the last
digit because it is the same code: the engine's compiled tally kernel, called per match from a
compiled grouped pass over each streamed Arrow batch (Python loops over batches, never over rows
or agents), then the rubric's `scorecards` over all agents of all matches at once.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow.compute as pc
from engine.kernels.jit import alloc

from analytics.data import as_data
from engine import rubric
from engine.kernels import tally as T
from engine.kernels.codes import MATCH_START

_COLUMNS = ("tick", "agent", "kind", "ok", "a", "b", "c", "d", "f", "g", "v")
_BATCH_ROWS = 1_000_000


@alloc
def _tally_all(starts, tick, agent, kind, ok, a, b, c, d, f, g, v):
    """The engine's tally per match over stacked logs. starts int64[M + 1] (row offsets).
    Returns counters int64[A, N_COUNTERS], worth float64[A], header int64[M, 4] (side, ticks,
    radius, season ticks), offsets int64[M + 1] (agent rows of match m are offsets[m]:offsets[m+1])."""
    m_count = starts.shape[0] - 1
    sizes = np.zeros(m_count, dtype=np.int64)
    for m in range(m_count):
        for r in range(starts[m], starts[m + 1]):
            if kind[r] == MATCH_START:
                sizes[m] = c[r]  # match_start: c is the field size
                break
    offsets = np.zeros(m_count + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(sizes)
    cnt = np.zeros((offsets[m_count], T.N_COUNTERS), dtype=np.int64)
    worth = np.zeros(offsets[m_count], dtype=np.float64)
    header = np.zeros((m_count, 4), dtype=np.int64)
    for m in range(m_count):
        s, e = starts[m], starts[m + 1]
        cm, wm, hm = T.tally(sizes[m], tick[s:e], agent[s:e], kind[s:e], ok[s:e], a[s:e], b[s:e], c[s:e],
                             d[s:e], f[s:e], g[s:e], v[s:e])
        cnt[offsets[m]:offsets[m + 1]] = cm
        worth[offsets[m]:offsets[m + 1]] = wm
        header[m] = hm
    return cnt, worth, header, offsets


class _Tallies:
    """Collects the grouped tally's output while the logs stream past, one Arrow batch at a time.

    Streaming keeps memory to a batch instead of the whole archive, and skips first-touch page
    faults on one huge buffer, which cost more than the scan itself on a cold process. A log may
    be split over batches: its last piece is held (as views, copied only if it spans batches)
    until the next batch shows whether it continues."""

    def __init__(self):
        self.done: set[int] = set()
        self.names: list[str] = []      # match ids in the order first seen; a match's index is its place here
        self._index: dict[str, int] = {}
        self.parts: list[tuple] = []
        self.pending: list[dict] = []
        self.pending_file = -1

    def _match_numbers(self, ids) -> np.ndarray:
        """A match number per row from the match_id column: a series file holds many matches, each
        contiguous, so only the places where the id changes are looked at."""
        n = len(ids)
        change = np.flatnonzero(pc.not_equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)) + 1
        starts = np.concatenate(([0], change))
        numbers = []
        for s in starts:
            name = ids[int(s)].as_py()
            if name not in self._index:
                self._index[name] = len(self.names)
                self.names.append(name)
            numbers.append(self._index[name])
        return np.repeat(np.array(numbers, dtype=np.int64), np.diff(np.concatenate((starts, [n]))))

    def _tally(self, files: np.ndarray, starts: np.ndarray, cols: dict) -> None:
        if self.done.intersection(files.tolist()) or np.unique(files).size != files.size:
            # The grouped pass needs each log whole and in order (DuckDB keeps insertion order).
            raise RuntimeError("event rows of a match did not arrive contiguously; cannot group by match")
        self.done.update(files.tolist())
        cnt, worth, header, offsets = _tally_all(starts, *(cols[c] for c in _COLUMNS))
        self.parts.append((files, cnt, worth, header, np.diff(offsets)))

    def _flush(self) -> None:
        if self.pending:
            pieces = self.pending
            cols = pieces[0] if len(pieces) == 1 else {c: np.concatenate([p[c] for p in pieces]) for c in _COLUMNS}
            self._tally(np.array([self.pending_file]), np.array([0, cols["kind"].size]), cols)
        self.pending = []

    def add(self, batch) -> None:
        if batch.num_rows == 0:
            return
        cols = {c: batch.column(c).to_numpy() for c in _COLUMNS}  # zero-copy views
        fi = self._match_numbers(batch.column("match_id"))
        bounds = np.concatenate(([0], np.flatnonzero(fi[1:] != fi[:-1]) + 1, [fi.size]))
        files = fi[bounds[:-1]]
        first = 0
        if files[0] == self.pending_file:
            self.pending.append({c: v[:bounds[1]] for c, v in cols.items()})
            first = 1
        if first == files.size:
            return  # the whole batch continues the pending log
        self._flush()
        last = files.size - 1
        if last > first:  # logs wholly inside this batch: one compiled call for all of them
            lo, hi = bounds[first], bounds[last]
            self._tally(files[first:last], bounds[first:last + 1] - lo, {c: v[lo:hi] for c, v in cols.items()})
        self.pending = [{c: v[bounds[last]:] for c, v in cols.items()}]
        self.pending_file = int(files[last])

    def finish(self) -> tuple:
        self._flush()
        if not self.parts:
            return (np.zeros(0, np.int64), np.zeros((0, T.N_COUNTERS), np.int64), np.zeros(0),
                    np.zeros((0, 3), np.int64), np.zeros(1, np.int64))
        files, cnt, worth, header, sizes = (np.concatenate(x) for x in zip(*self.parts))
        # Back to file order, whatever order the batches came in: move each match's agent rows.
        order = np.argsort(files, kind="stable")
        old_start = np.cumsum(sizes) - sizes
        new_sizes = sizes[order]
        new_start = np.cumsum(new_sizes) - new_sizes
        rows = np.arange(new_sizes.sum()) + np.repeat(old_start[order] - new_start, new_sizes)
        return files[order], cnt[rows], worth[rows], header[order], np.concatenate(([0], np.cumsum(new_sizes)))


def _tally_files(paths: list[Path], batch_rows: int = _BATCH_ROWS, match_ids=None, con=None) -> tuple:
    """Stream the columns the tally reads from every log (only ``match_ids`` when given); matches are
    numbered in the order they arrive. Returns (match ids, match number per match, counters, worth,
    header, agent offsets). A cursor on ``con`` keeps that database's settings (threads, memory)."""
    tallies = _Tallies()
    if not paths:
        return [], *tallies.finish()
    con = con.cursor() if con is not None else duckdb.connect(":memory:")
    sql = f"SELECT {', '.join(_COLUMNS)}, match_id FROM read_parquet($paths)"
    params: dict = {"paths": [str(p) for p in paths]}
    if match_ids is not None:
        sql += " WHERE list_contains($ids, match_id)"
        params["ids"] = sorted({str(m) for m in match_ids})
    for batch in con.sql(sql, params=params).to_arrow_reader(batch_rows):
        tallies.add(batch)
    con.close()
    return tallies.names, *tallies.finish()


def recompute_scorecards(data, match_ids=None) -> pd.DataFrame:
    """One row per agent per match (match_id, seat, rank, fitness_index, grade, archetype, status,
    crafter_score, the five dimensions, the stats, field_size, match_ticks, achievement_mask),
    recomputed from the event logs of ``data`` (a DataDir or a data dir path); only the matches in
    ``match_ids`` when given. Bit i of achievement_mask is rubric.ACHIEVEMENTS[i]."""
    data = as_data(data)
    paths = data.events_files(match_ids)
    ids, files, cnt, worth, header, offsets = _tally_files(paths, match_ids=match_ids, con=data.con)
    cards = rubric.scorecards(cnt, worth, header, offsets)
    names = np.array([ids[i] for i in files], dtype=object)
    return pd.DataFrame({"match_id": np.repeat(names, np.diff(offsets)), **cards})


def achievement_names(mask: int) -> list[str]:
    """The achievements a mask holds, in rubric order (as the seat rows list them)."""
    return [a for i, a in enumerate(rubric.ACHIEVEMENTS) if mask >> i & 1]
