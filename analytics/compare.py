"""Comparisons over the archive: thin wrappers that pick the right seat rows, pair them, and hand
the numbers to paired.py, iqm.py / ranking.py. Metrics are checked against a fixed list and read from
pandas columns, so no caller text ever becomes part of a SQL statement.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from analytics import choice, iqm, paired
from analytics.data import DIMENSIONS, STATS, as_data, failed_left_out, plain, where
from analytics.ranking import Leaderboard, bradley_terry

# Higher is better for all of these (won and survived are 0/1 per match).
METRICS = ("fitness_index", "crafter_score", *DIMENSIONS, *STATS, "won", "survived")
BY = ("model", "name", "seat")


def _check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(METRICS)}")


def _rows(data, **filters) -> pd.DataFrame:
    rows = as_data(data).seats_df(**filters)
    rows["won"] = (rows["rank"] == 1).astype(float)
    rows["survived"] = (rows["status"] == "alive").astype(float)
    return rows


def _pick(rows: pd.DataFrame, seat: int | str) -> pd.DataFrame:
    """A seat by index (int) or by name (str)."""
    column = "name" if isinstance(seat, str) else "seat"
    picked = rows[rows[column] == seat]
    if picked.empty:
        raise ValueError(f"no rows for seat {seat!r}")
    return picked


# Two series play the same match when both the map seed and the spawn seed agree (a series launched
# with paired_with replays another's seeds trial by trial; a pinned map varies only the spawns).
SEEDS = ["seed", "spawn_seed"]


def _paired(a: pd.DataFrame, b: pd.DataFrame, on: str | list[str], metric: str) -> tuple[np.ndarray, np.ndarray, list]:
    on = [on] if isinstance(on, str) else list(on)
    for side, rows in (("a", a), ("b", b)):
        if rows.duplicated(on).any():
            raise ValueError(f"side {side} has several rows per {'/'.join(on)}; pairing needs one each")
    joined = a[on + [metric]].merge(b[on + [metric]], on=on, suffixes=("_a", "_b")).sort_values(on)
    if joined.empty:
        raise ValueError(f"no shared {'/'.join(on)} between the two sides")
    keys = joined[on[0]].tolist() if len(on) == 1 else [tuple(k) for k in joined[on].itertuples(index=False)]
    return joined[f"{metric}_a"].to_numpy(float), joined[f"{metric}_b"].to_numpy(float), keys


def _rounded(value, digits: int):
    if isinstance(value, dict):
        return {k: v if k in ("n", "method", "confidence") else _rounded(v, digits) for k, v in value.items()}
    return None if value is None else round(float(value), digits)


def _result(comparison: paired.Comparison, metric: str, keys: list, **labels) -> dict:
    """Scores to 2 decimals, the probability of improvement to 4 (rounded here, where the result
    is built; the statistics ran at full precision)."""
    keys = [[plain(x) for x in k] if isinstance(k, tuple) else plain(k) for k in keys]
    c = comparison.to_dict()
    c.update(difference=_rounded(c["difference"], 2), prob_improvement=_rounded(c["prob_improvement"], 4),
             mean_a=_rounded(c["mean_a"], 2), mean_b=_rounded(c["mean_b"], 2))
    return {"metric": metric, **labels, **c, "paired_on": keys}


def compare_seats(data, batch_id: str, seat_a: int | str, seat_b: int | str, metric: str = "fitness_index",
                  confidence: float = 0.95) -> dict:
    """Seat a against seat b inside one series, paired per match (same map, same seed):
    the difference of means (a - b) with its interval (bounded for 0..100 scores, paired.py's
    DIFFERENCE_METHOD) and the probability that a beats b."""
    _check_metric(metric)
    rows = _rows(data, batch_id=batch_id)
    a, b, keys = _paired(_pick(rows, seat_a), _pick(rows, seat_b), "match_id", metric)
    return _result(paired.paired_comparison(a, b, confidence, bounded=metric in choice.BOUNDED), metric, keys,
                   batch_id=batch_id,
                   seat_a=seat_a, seat_b=seat_b)


def compare_configs(data, batch_a: str, batch_b: str, seat: int | str, metric: str = "fitness_index",
                    seat_b: int | str | None = None, confidence: float = 0.95) -> dict:
    """One seat under two configurations (two series) on the seeds both series played."""
    _check_metric(metric)
    a = _pick(_rows(data, batch_id=batch_a), seat)
    b = _pick(_rows(data, batch_id=batch_b), seat if seat_b is None else seat_b)
    x, y, keys = _paired(a, b, SEEDS, metric)
    return _result(paired.paired_comparison(x, y, confidence, bounded=metric in choice.BOUNDED), metric, keys,
                   batch_a=batch_a, batch_b=batch_b,
                   seat=seat)


def skill_uplift(data, series_with: str, series_without: str, seat: int | str, metric: str = "fitness_index",
                 confidence: float = 0.95) -> dict:
    """The same seat with and without a skill (two series on shared seeds): positive means it helps."""
    _check_metric(metric)
    a = _pick(_rows(data, batch_id=series_with), seat)
    b = _pick(_rows(data, batch_id=series_without), seat)
    x, y, keys = _paired(a, b, SEEDS, metric)
    return _result(paired.skill_uplift(x, y, confidence, bounded=metric in choice.BOUNDED), metric, keys,
                   series_with=series_with, series_without=series_without, seat=seat)


def aggregate_over_scenarios(data, *, metric: str = "fitness_index", by: str = "model", batch_id=None,
                             run_ids=None, anchors: bool = True, confidence: float = 0.95) -> list[dict]:
    """Per model (or name, or seat): IQM of the metric over every scenario's runs, with the
    stratified bootstrap interval (runs resampled within each scenario), best first."""
    _check_metric(metric)
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}")
    rows = _rows(data, batch_id=batch_id, run_ids=run_ids, anchors=anchors)
    out = []
    for key, part in rows.groupby(by, sort=True):
        scores = {str(s): g[metric].to_numpy(float) for s, g in part.groupby("scenario_id", sort=True)}
        interval = iqm.aggregate_iqm(scores, confidence)
        out.append({by: plain(key), **interval.to_dict(), "scenarios": {s: int(v.size) for s, v in scores.items()}})
    return sorted(out, key=lambda r: -r["estimate"])


def finishing_orders(rows: pd.DataFrame, by: str = "model") -> list[list[tuple]]:
    """Each match's (model, rank) pairs, the input of ranking.bradley_terry."""
    rows = rows.sort_values(["match_id", "seat"], kind="stable")
    labels, ranks = rows[by].to_numpy(), rows["rank"].to_numpy(float)
    cuts = np.flatnonzero(rows["match_id"].to_numpy()[1:] != rows["match_id"].to_numpy()[:-1]) + 1
    return [list(zip(lab.tolist(), rk.tolist())) for lab, rk in zip(np.split(labels, cuts), np.split(ranks, cuts))]


def leaderboard(data, *, batch_id=None, run_ids=None, scenario_id=None, game: str | None = None, by: str = "model",
                anchors: bool = True, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> Leaderboard:
    """Bradley-Terry strengths from the finishing order inside each selected match, with
    bootstrap intervals over matches; overlapping intervals form tie groups.

    One game at a time (``game``, one of the data dir's GAME_IDS): world agents, chess engines and
    Connect Four solvers never meet, so one board over several games ranks strangers; a selection
    holding several is refused (``leaderboards`` gives one board each). Failed runs (the archive's run
    views) are left out and counted in the board's ``note``."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}")
    data = as_data(data)
    failed = data.failed_run_ids()
    filters = {"batch_id": batch_id, "run_ids": run_ids, "scenario_id": scenario_id, "anchors": anchors, "game": game}
    games = data.games(**filters, exclude_runs=failed)
    if len(games) > 1:
        raise ValueError(f"the selected matches are of several games ({', '.join(games)}), whose players never "
                         "meet: pick one with game=, or use leaderboards() for one board each")
    clause, params = where(**filters, exclude_runs=failed)
    rows = data.query(f"SELECT match_id, seat, name, model, rank FROM seats{clause}", params)
    if rows.empty:
        raise ValueError("no matches selected")
    board = bradley_terry(finishing_orders(rows, by), n_resamples=n_resamples, confidence=confidence, seed=seed)
    return replace(board, note=failed_left_out(data, failed, **filters)["note"])


def leaderboards(data, *, batch_id=None, run_ids=None, scenario_id=None, by: str = "model", anchors: bool = True,
                 n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> dict[str, Leaderboard]:
    """One leaderboard per game the selection holds (game id -> board), failed runs left out."""
    data = as_data(data)
    selected = {"batch_id": batch_id, "run_ids": run_ids, "scenario_id": scenario_id, "anchors": anchors}
    return {g: leaderboard(data, **selected, game=g, by=by, n_resamples=n_resamples, confidence=confidence, seed=seed)
            for g in data.games(**selected, exclude_runs=data.failed_run_ids())}
