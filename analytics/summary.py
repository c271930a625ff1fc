"""Series summaries: per seat, a metric's mean with its interval, win and survival rates, the
crafter score over the series. GET /api/v1/batches/:id returns ``series_summary`` unchanged, so
the output is plain JSON (None where an interval cannot be computed, never NaN).

Scores (0..100) are reported to 2 decimals and rates (0..1) to 4: the statistics run at full
precision, the rounding happens here where the result is built.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analytics import stats
from analytics.data import DIMENSIONS, as_data, plain, where
from engine import rubric

SUMMARY_COLUMNS = ("match_id", "run_id", "batch_id", "scenario_id", "seed", "seat", "anchor", "name", "model",
                   "rank", "status", "fitness_index", "crafter_score", *DIMENSIONS, "achievements")
GROUPINGS = {"seat": ("seat", "name", "model", "anchor"), "model": ("model",)}
SCORE_DIGITS, RATE_DIGITS = 2, 4
_ACHIEVEMENTS = pd.Index(rubric.ACHIEVEMENTS, dtype=object)


def _round(value, digits: int):
    return None if value is None else round(float(value), digits)


def _interval(interval: stats.Interval, digits: int) -> dict:
    out = interval.to_dict()
    for key in ("estimate", "low", "high"):
        out[key] = _round(out[key], digits)
    return out


def _seat_rows(data, *, batch_id=None, run_ids=None, scenario_id=None, anchors=True, game=None,
               exclude_runs=None) -> pd.DataFrame:
    """The seat rows of a series, only the columns a summary reads (all a bare seats table needs)."""
    clause, params = where(batch_id=batch_id, run_ids=run_ids, scenario_id=scenario_id, anchors=anchors, game=game,
                           exclude_runs=exclude_runs)
    # The column list is this module's constant; only the filter values are bound.
    return as_data(data).query(f"SELECT {', '.join(SUMMARY_COLUMNS)} FROM seats{clause} ORDER BY match_id, seat",
                               params)


def _with_decisions(data, rows: pd.DataFrame) -> pd.DataFrame:
    """Each seat row's mean decision accuracy (NaN where the seat was not graded), from the source's
    ``decisions`` table (match_id, seat, accuracy: the service registers its graded seats) when it
    has one."""
    d = as_data(data)
    has = len(rows) and d.query("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'decisions'")[
        "n"].iloc[0]
    if not has:
        return rows.assign(decision_accuracy=float("nan"))
    graded = d.query("SELECT match_id, seat, accuracy AS decision_accuracy FROM decisions")
    return rows.merge(graded, on=["match_id", "seat"], how="left")


def table_rows(seats: pa.Table, decisions: pa.Table | None = None, batch_id: str | None = None) -> pd.DataFrame:
    """The rows summarize reads, as _seat_rows and _with_decisions give them from a DuckDB source whose
    ``seats`` and ``decisions`` tables are these (the service's), without one: a connection costs more
    than the rest of a series' summary."""
    if batch_id is not None:
        seats = seats.filter(pc.equal(seats["batch_id"], batch_id))
    rows = seats.select(list(SUMMARY_COLUMNS)).sort_by([("match_id", "ascending"), ("seat", "ascending")]).to_pandas()
    if decisions is None or not len(rows) or not decisions.num_rows:
        return rows.assign(decision_accuracy=float("nan"))
    graded = decisions.select(["match_id", "seat", "accuracy"]).rename_columns(["match_id", "seat", "decision_accuracy"])
    return rows.merge(graded.to_pandas(), on=["match_id", "seat"], how="left")


def achievement_rates(achievements: pd.Series) -> dict[str, float]:
    """Percent of matches in which each achievement was unlocked, in rubric order."""
    n = len(achievements)
    counts = Counter(a for row in achievements for a in (row if row is not None else ()))
    return {a: (100.0 * counts[a] / n if n else 0.0) for a in rubric.ACHIEVEMENTS}


def _unlocked(achievements: np.ndarray, at: list[np.ndarray]) -> np.ndarray:
    """Per group (rows) and rubric achievement (columns, in rubric order): how many of the group's
    rows list it, as achievement_rates counts them, for every group at once."""
    lengths = np.array([0 if a is None else len(a) for a in achievements], dtype=np.intp)
    listed = [a for a in achievements if a is not None and len(a)]
    flat = np.concatenate([np.asarray(a, dtype=object) for a in listed]) if listed else np.empty(0, dtype=object)
    code = _ACHIEVEMENTS.get_indexer(flat)  # -1: not a rubric achievement
    group_of = np.empty(len(achievements), dtype=np.intp)
    for g, where_ in enumerate(at):
        group_of[where_] = g
    group_of = np.repeat(group_of, lengths)
    k = len(rubric.ACHIEVEMENTS)
    known = code >= 0
    return np.bincount(group_of[known] * k + code[known], minlength=len(at) * k).reshape(len(at), k)


def _scores(rows: pd.DataFrame, at: list[np.ndarray], confidence: float) -> dict[tuple[str, int], dict]:
    """(metric, group) -> the group's fitness_index and dimension intervals, every one in a single call
    (stats.mean_intervals: the same numbers as one call each, at a fraction of the cost)."""
    wanted, samples = [], []
    for metric in ("fitness_index", *DIMENSIONS):
        values = rows[metric].to_numpy(dtype=float)
        # arena games' seat rows carry their own dimensions, not the world's (their columns read as null)
        known = rows[metric].notna().to_numpy() if metric in DIMENSIONS else None
        for g, where_ in enumerate(at):
            if known is None or known[where_].all():
                wanted.append((metric, g))
                samples.append(values[where_])
    found = stats.mean_intervals(samples, confidence, metric=[m for m, _ in wanted])
    return {key: _interval(iv, SCORE_DIGITS) for key, iv in zip(wanted, found)}


def _group_summaries(rows: pd.DataFrame, at: list[np.ndarray], confidence: float) -> list[dict]:
    """Each group's summary; at: each group's row positions, in row order."""
    def column(name: str, **how) -> np.ndarray:
        return rows[name].to_numpy(**how)

    groups = range(len(at))
    scores = _scores(rows, at, confidence)
    accuracy = column("decision_accuracy", dtype=float)
    graded = {g: a for g in groups if len(a := accuracy[at[g]][~np.isnan(accuracy[at[g]])])}
    # over the graded matches, with the general method: no coverage benchmark has chosen one for it yet
    found = stats.mean_intervals(graded.values(), confidence)
    accuracy = {g: _interval(iv, SCORE_DIGITS) for g, iv in zip(graded, found)}
    # rank 1 among the whole field, anchors included; ties share it
    won = (rows["rank"] == 1).to_numpy(dtype=bool, na_value=False)
    alive = (rows["status"] == "alive").to_numpy(dtype=bool, na_value=False)
    rank = column("rank", dtype=float, na_value=np.nan)
    matches, unlocked = column("match_id"), _unlocked(column("achievements"), at).tolist()
    out = []
    for g in groups:
        n = len(at[g])
        rates = {a: 100.0 * k / n for a, k in zip(rubric.ACHIEVEMENTS, unlocked[g])}
        ranked = rank[at[g]][~np.isnan(rank[at[g]])]
        out.append({
            "n": n,
            "matches": len(set(matches[at[g]])),
            "fitness_index": scores["fitness_index", g],
            "dimensions": {d: scores[d, g] for d in DIMENSIONS if (d, g) in scores},
            "win_rate": _interval(stats.wilson(int(won[at[g]].sum()), n, confidence), RATE_DIGITS),
            "survival_rate": _interval(stats.wilson(int(alive[at[g]].sum()), n, confidence), RATE_DIGITS),
            # ranks are whole numbers, so their sum is exact and this is pandas' mean to the last bit
            "mean_rank": _round(ranked.sum() / len(ranked) if len(ranked) else np.nan, SCORE_DIGITS),
            "crafter_score": _round(rubric.crafter_score(list(rates.values())), SCORE_DIGITS),
            "achievement_rates": {a: round(r, SCORE_DIGITS) for a, r in rates.items()},
            "decision_accuracy": accuracy.get(g),
        })
    return out


def series_summary(data, batch_id: str | None = None, *, run_ids=None, scenario_id: str | None = None,
                   by: str = "seat", anchors: bool = True, confidence: float = 0.95, game: str | None = None,
                   exclude_runs=None) -> dict:
    """Summary of the selected seat rows, one entry per seat (by="seat": seat index, name, model,
    anchor) or per model (by="model", for runs with different rosters). ``data``: a DataDir, a data
    dir path, or a DuckDB connection with a ``seats`` view/table (the service's); ``batch_id`` selects
    one series, ``run_ids`` or ``scenario_id`` other rows. ``game`` keeps one game's rows
    (one of the GAME_IDS: a model's chess accuracy never averages with its world fitness);
    ``exclude_runs`` leaves runs out (the report's failed ones)."""
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {sorted(GROUPINGS)}, got {by!r}")
    rows = _seat_rows(data, batch_id=batch_id, run_ids=run_ids, scenario_id=scenario_id, anchors=anchors, game=game,
                      exclude_runs=exclude_runs)
    return summarize(_with_decisions(data, rows), batch_id, by=by, confidence=confidence)


def summarize(rows: pd.DataFrame, batch_id: str | None = None, *, by: str = "seat", confidence: float = 0.95) -> dict:
    """series_summary of these seat rows: SUMMARY_COLUMNS and decision_accuracy, ordered by match and
    seat (the service's come from table_rows)."""
    if not len(rows):
        return empty(batch_id, by=by, confidence=confidence)
    keys = list(GROUPINGS[by])
    parts = rows.groupby(keys, sort=True, dropna=False).indices  # in the groups' sorted order
    keyed = [key if isinstance(key, tuple) else (key,) for key in parts]
    summaries = _group_summaries(rows, list(parts.values()), confidence)
    groups = [{k: plain(v) for k, v in zip(keys, key)} | summary for key, summary in zip(keyed, summaries)]
    return {
        "batch_id": batch_id,
        # the runs the rows came from, whether selected by series, scenario or id
        "run_ids": sorted({str(r) for r in rows["run_id"].unique()}),
        "by": by,
        "runs": int(rows["run_id"].nunique()),
        "matches": int(rows["match_id"].nunique()),
        "scenario_ids": sorted({str(s) for s in rows["scenario_id"].dropna().unique()}),
        "seeds": int(rows["seed"].nunique()),
        "confidence": confidence,
        "seats" if by == "seat" else "models": groups,
    }


def empty(batch_id: str | None = None, *, by: str = "seat", confidence: float = 0.95) -> dict:
    """The summary of no rows: a series none of whose runs has ended yet."""
    return {"batch_id": batch_id, "run_ids": [], "by": by, "runs": 0, "matches": 0, "scenario_ids": [], "seeds": 0,
            "confidence": confidence, "seats" if by == "seat" else "models": []}
