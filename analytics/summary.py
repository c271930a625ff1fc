"""Series summaries: per seat, a metric's mean with its interval, win and survival rates, the
crafter score over the series. GET /api/v1/batches/:id returns ``series_summary`` unchanged, so
the output is plain JSON (None where an interval cannot be computed, never NaN).

Scores (0..100) are reported to 2 decimals and rates (0..1) to 4: the statistics run at full
precision, the rounding happens here where the result is built.
"""
from __future__ import annotations

from collections import Counter

import pandas as pd

from analytics import stats
from analytics.data import DIMENSIONS, as_data, plain, where
from engine import rubric

SUMMARY_COLUMNS = ("match_id", "run_id", "batch_id", "scenario_id", "seed", "seat", "anchor", "name", "model",
                   "rank", "status", "fitness_index", "crafter_score", *DIMENSIONS, "achievements")
GROUPINGS = {"seat": ("seat", "name", "model", "anchor"), "model": ("model",)}
SCORE_DIGITS, RATE_DIGITS = 2, 4


def _round(value, digits: int):
    return None if value is None else round(float(value), digits)


def _interval(interval: stats.Interval, digits: int) -> dict:
    out = interval.to_dict()
    for key in ("estimate", "low", "high"):
        out[key] = _round(out[key], digits)
    return out


def _score(rows: pd.DataFrame, metric: str, confidence: float) -> dict:
    return _interval(stats.mean_interval(rows[metric].to_numpy(float), confidence, metric=metric), SCORE_DIGITS)


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


def _decision_accuracy(rows: pd.DataFrame, confidence: float) -> dict | None:
    """Mean decision accuracy over the graded matches, with its interval (the general method: no
    coverage benchmark has chosen one for it yet); None for a seat never graded."""
    graded = rows["decision_accuracy"].dropna().to_numpy(float)
    return _interval(stats.mean_interval(graded, confidence), SCORE_DIGITS) if len(graded) else None


def achievement_rates(achievements: pd.Series) -> dict[str, float]:
    """Percent of matches in which each achievement was unlocked, in rubric order."""
    n = len(achievements)
    counts = Counter(a for row in achievements for a in (row if row is not None else ()))
    return {a: (100.0 * counts[a] / n if n else 0.0) for a in rubric.ACHIEVEMENTS}


def _group_summary(rows: pd.DataFrame, confidence: float) -> dict:
    n = len(rows)
    wins = int((rows["rank"] == 1).sum())  # rank 1 among the whole field, anchors included; ties share it
    alive = int((rows["status"] == "alive").sum())
    rates = achievement_rates(rows["achievements"])
    return {
        "n": n,
        "matches": int(rows["match_id"].nunique()),
        "fitness_index": _score(rows, "fitness_index", confidence),
        # arena games' seat rows carry their own dimensions, not the world's (their columns read as null)
        "dimensions": {d: _score(rows, d, confidence) for d in DIMENSIONS if rows[d].notna().all()},
        "win_rate": _interval(stats.wilson(wins, n, confidence), RATE_DIGITS),
        "survival_rate": _interval(stats.wilson(alive, n, confidence), RATE_DIGITS),
        "mean_rank": _round(rows["rank"].mean(), SCORE_DIGITS) if n else None,
        "crafter_score": _round(rubric.crafter_score(list(rates.values())), SCORE_DIGITS) if n else None,
        "achievement_rates": {a: round(r, SCORE_DIGITS) for a, r in rates.items()},
        "decision_accuracy": _decision_accuracy(rows, confidence),
    }


def series_summary(data, batch_id: str | None = None, *, run_ids=None, scenario_id: str | None = None,
                   by: str = "seat", anchors: bool = True, confidence: float = 0.95, game: str | None = None,
                   exclude_runs=None) -> dict:
    """Summary of the selected seat rows, one entry per seat (by="seat": seat index, name, model,
    anchor) or per model (by="model", for runs with different rosters). ``data``: a DataDir, a data
    dir path, or a DuckDB connection with a ``seats`` view/table (the service's); ``batch_id`` selects
    one series, ``run_ids`` or ``scenario_id`` other rows. ``game`` keeps one game's rows
    (analytics.data.GAME_IDS: a model's chess accuracy never averages with its world fitness);
    ``exclude_runs`` leaves runs out (the report's failed ones)."""
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {sorted(GROUPINGS)}, got {by!r}")
    rows = _seat_rows(data, batch_id=batch_id, run_ids=run_ids, scenario_id=scenario_id, anchors=anchors, game=game,
                      exclude_runs=exclude_runs)
    rows = _with_decisions(data, rows)
    keys = list(GROUPINGS[by])
    groups = []
    if len(rows):
        for key, part in rows.groupby(keys, sort=True, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            entry = {k: plain(v) for k, v in zip(keys, key)}
            groups.append(entry | _group_summary(part, confidence))
    return {
        "batch_id": batch_id,
        # the runs the rows came from, whether selected by series, scenario or id
        "run_ids": sorted({str(r) for r in rows["run_id"]}),
        "by": by,
        "runs": int(rows["run_id"].nunique()),
        "matches": int(rows["match_id"].nunique()),
        "scenario_ids": sorted({str(s) for s in rows["scenario_id"].dropna()}),
        "seeds": int(rows["seed"].nunique()),
        "confidence": confidence,
        "seats" if by == "seat" else "models": groups,
    }

