"""Plots drawn from the archive: thin wrappers that query the views and call the plots module."""
from __future__ import annotations

from os import PathLike

import pandas as pd
from matplotlib.figure import Figure

from analytics import plots
from analytics.data import DIMENSIONS, as_data
from analytics.ranking import Leaderboard
from analytics.summary import series_summary

# Snapshot rows (every 10th tick per living agent, docs/EVENTS.md): c is health, v is net worth.
# health sits at its cap for every agent that eats, so satiety and net worth are the lines that move
TRAJECTORY_COLUMNS = {"health": "c", "satiety": "d", "wealth": "v"}


def _seat_label(row: dict) -> str:
    # as the console and the public pages name a seat: its 0-based index (the API's `seat`), then who
    return f"seat {row['seat']} · {row['name']}" + (" (anchor)" if row.get("anchor") else "")


def seat_forest(data_or_summary, batch_id: str | None = None, metric: str = "fitness_index", *,
                path: str | PathLike | None = None) -> Figure:
    """Each seat's mean ``metric`` (fitness_index or a dimension) with its 95% interval."""
    summary = data_or_summary if isinstance(data_or_summary, dict) else series_summary(data_or_summary, batch_id)
    rows = []
    for seat in summary["seats"]:
        interval = seat[metric] if metric == "fitness_index" else seat["dimensions"][metric]
        rows.append({"label": _seat_label(seat), **interval})
    name = plots.metric_label(metric)
    title = f"{name.capitalize()} per seat, series {summary['batch_id']} ({summary['runs']} runs)"
    return plots.forest_plot(rows, title=title, xlabel=f"mean {name} (0-100), 95% interval", path=path)


def leaderboard_forest(board: Leaderboard, *, path: str | PathLike | None = None) -> Figure:
    """Bradley-Terry log-strengths with their bootstrap intervals, strongest at the top."""
    return plots.forest_plot(board.rows, title=f"Leaderboard over {board.n_matches} matches",
                             xlabel="log-strength (0 = average)", reference=0.0, path=path)


def seat_profile(data, batch_id: str, *, anchors: bool = True, path: str | PathLike | None = None) -> Figure:
    """Mean score on each dimension per seat over the series."""
    rows = as_data(data).seats_df(batch_id=batch_id, anchors=anchors)
    if rows.empty:
        raise ValueError(f"no seat rows for series {batch_id!r}")
    means = rows.groupby(["seat", "name"], sort=True)[list(DIMENSIONS)].mean().reset_index()
    means["label"] = [_seat_label({"seat": s, "name": n}) for s, n in zip(means["seat"], means["name"])]
    return plots.dimension_profile(means.drop(columns=["seat", "name"]), title=f"Dimension profile, series {batch_id}",
                                   path=path)


def trajectories(data, match_id: str) -> pd.DataFrame:
    """Long table tick, agent (seat: name), metric (health, satiety, wealth), value from the snapshot rows."""
    source = as_data(data)
    snaps = source.events_df(match_id, kinds=["snapshot"])
    if snaps.empty:
        raise ValueError(f"no snapshot rows for match {match_id!r}")
    names = source.query("SELECT seat, name FROM seats WHERE match_id = ?", [match_id])
    label = {int(s): f"{s}: {n}" for s, n in zip(names["seat"], names["name"])}
    agents = [label.get(int(a), str(a)) for a in snaps["agent"]]
    frames = [pd.DataFrame({"tick": snaps["tick"], "agent": agents, "metric": metric,
                            "value": snaps[col].astype(float)}) for metric, col in TRAJECTORY_COLUMNS.items()]
    return pd.concat(frames, ignore_index=True)


def trajectory(data, match_id: str, metric: str = "health", *, path: str | PathLike | None = None) -> Figure:
    """Per-tick health, satiety or wealth (net worth) of every agent in one match."""
    if metric not in TRAJECTORY_COLUMNS:
        raise ValueError(f"metric must be one of {', '.join(TRAJECTORY_COLUMNS)}")
    return plots.trajectory_plot(trajectories(data, match_id), metric, title=f"{metric}, match {match_id}", path=path)
