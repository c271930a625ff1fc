"""Plots for notebooks and reports.

Figures are built with matplotlib.figure.Figure directly, never pyplot: no GUI
backend is touched (Agg renders the PNG), and nothing accumulates in pyplot's
global figure registry when a long-running service draws many plots. Jupyter
still displays a returned Figure inline.

Every function returns the Figure and writes a PNG when given ``path``.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from os import PathLike
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure

from engine.rubric import DIMENSIONS

# Labels a row may carry, in order of preference: plain rows, leaderboard rows, seat summaries.
_LABEL_KEYS = ("label", "model", "seat", "agent")


def _save(fig: Figure, path: str | PathLike | None) -> Figure:
    if path is not None:
        fig.savefig(path, format="png", dpi=120)
    return fig


def _as_records(rows) -> list[Mapping]:
    if isinstance(rows, pd.DataFrame):
        return rows.to_dict("records")
    records = []
    for row in rows:
        if is_dataclass(row):
            row = asdict(row)
        elif not isinstance(row, Mapping):
            row = vars(row)
        records.append(row)
    return records


def _label(row: Mapping) -> str:
    for key in _LABEL_KEYS:
        if key in row:
            return str(row[key])
    raise ValueError(f"row has none of the label fields {_LABEL_KEYS}: {sorted(row)}")


def _number(value) -> float:
    """None (an interval that could not be computed) becomes NaN, which matplotlib skips."""
    return np.nan if value is None else float(value)


def metric_label(metric: str) -> str:
    """A metric's name as a plot shows it to people: 'fitness index', never the field name fitness_index."""
    return metric.replace("_", " ")


def forest_plot(
    rows: Iterable | pd.DataFrame,
    *,
    title: str | None = None,
    xlabel: str = "estimate",
    reference: float | None = None,
    path: str | PathLike | None = None,
) -> Figure:
    """Interval plot, one row per seat or model, first row at the top.

    ``rows`` are mappings, dataclasses (stats.Interval rows with a label,
    ranking.Strength) or a DataFrame with label/estimate/low/high. Rows whose
    bounds are None are drawn as a bare point. ``reference`` draws a dashed
    vertical line (0 for differences, 0.5 for probability of improvement).
    """
    records = _as_records(rows)
    if not records:
        raise ValueError("no rows to plot")
    labels = [_label(r) for r in records]
    estimate = np.array([_number(r["estimate"]) for r in records])
    low = np.array([_number(r.get("low")) for r in records])
    high = np.array([_number(r.get("high")) for r in records])
    y = np.arange(len(records))[::-1]

    fig = Figure(figsize=(6.4, 1.2 + 0.35 * len(records)), layout="constrained")
    ax = fig.add_subplot()
    has_interval = np.isfinite(low) & np.isfinite(high)
    ax.hlines(y[has_interval], low[has_interval], high[has_interval], color="C0", linewidth=2)
    ax.plot(estimate, y, "o", color="C0", markersize=5, linestyle="none")
    if reference is not None:
        ax.axvline(reference, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, len(records) - 0.3)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)


def dimension_profile(
    df: pd.DataFrame | pd.Series | Mapping[str, float],
    *,
    title: str | None = None,
    path: str | PathLike | None = None,
) -> Figure:
    """Scores on the five dimensions (0..100) as grouped bars, one colour per seat.

    ``df`` has one row per seat and a column per dimension; the seat's name comes
    from a ``seat``/``agent``/``label``/``model`` column or else the index. A
    Series or dict is one seat.
    """
    if isinstance(df, Mapping):
        df = pd.Series(df)
    if isinstance(df, pd.Series):
        df = df.to_frame().T
    missing = [d for d in DIMENSIONS if d not in df.columns]
    if missing:
        raise ValueError(f"missing dimension columns: {missing}")
    if df.empty:
        raise ValueError("no seats to plot")
    values = df[list(DIMENSIONS)].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    if np.any((finite < 0) | (finite > 100)):
        # Scores are defined on 0..100; anything else is an upstream bug, not a plot.
        raise ValueError("dimension scores must lie in 0..100")
    label_key = next((k for k in ("seat", "agent", "label", "model") if k in df.columns), None)
    names = [str(v) for v in (df[label_key] if label_key else df.index)]

    fig = Figure(figsize=(7.2, 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(DIMENSIONS))
    width = 0.8 / len(names)
    for i, (name, row) in enumerate(zip(names, values)):
        ax.bar(x - 0.4 + width * (i + 0.5), row, width, label=name)
    ax.set_xticks(x, DIMENSIONS)
    ax.set_ylim(0, 100)
    ax.set_ylabel("score (0..100)")
    ax.grid(axis="y", alpha=0.3)
    if len(names) > 1:
        # below the plot as a figure legend, which constrained layout makes room for: an axes legend
        # anchored there was laid out as if absent, squeezing the axes until the dimension names overlapped
        fig.legend(fontsize="small", ncol=min(len(names), 3), loc="outside lower center")
    if title:
        ax.set_title(title)
    return _save(fig, path)


def trajectory_plot(
    df: pd.DataFrame,
    metric: str,
    *,
    title: str | None = None,
    path: str | PathLike | None = None,
) -> Figure:
    """Per-tick series, one line per agent, from columns tick, agent, value.

    If ``df`` also has a ``metric`` column (several series in long form, e.g.
    health and wealth), only the rows for ``metric`` are drawn; otherwise
    ``metric`` only names the axis.
    """
    needed = {"tick", "agent", "value"}
    if not needed <= set(df.columns):
        raise ValueError(f"need columns {sorted(needed)}, got {list(df.columns)}")
    if "metric" in df.columns:
        df = df[df["metric"] == metric]
    if df.empty:
        raise ValueError(f"no rows for metric {metric!r}")

    fig = Figure(figsize=(7.2, 3.8), layout="constrained")
    ax = fig.add_subplot()
    palette = colormaps["tab20"].colors
    for i, (agent, series) in enumerate(df.sort_values("tick").groupby("agent", sort=True)):
        # 20 distinct colours, then the same colours dashed: matches seat up to 24 agents.
        ax.plot(
            series["tick"].to_numpy(),
            series["value"].to_numpy(),
            label=str(agent),
            linewidth=1.2,
            color=palette[i % len(palette)],
            linestyle="-" if i < len(palette) else "--",
        )
    ax.set_xlabel("tick")
    ax.set_ylabel(metric)
    ax.grid(alpha=0.3)
    n_agents = df["agent"].nunique()
    ax.legend(fontsize="small", ncol=1 if n_agents <= 12 else 2, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(title if title else metric)
    return _save(fig, path)


def sequence_plot(
    paths: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    metric: str = "fitness_index",
    half_width: float | None = None,
    title: str | None = None,
    path: str | PathLike | None = None,
) -> Figure:
    """Confidence sequences trial by trial: per label, the band from its low to
    its high bound after each scored trial, narrowing as trials come in. half_width: the target, drawn
    as the band's width the series stops at."""
    if not paths:
        raise ValueError("no sequences to plot")
    fig = Figure(figsize=(7.2, 3.6), layout="constrained")
    ax = fig.add_subplot()
    palette = colormaps["tab10"].colors
    for i, (label, (low, high)) in enumerate(paths.items()):
        lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        n = np.arange(1, lo.size + 1)
        colour = palette[i % len(palette)]
        ax.fill_between(n, lo, hi, step="post", alpha=0.18, color=colour, linewidth=0)
        ax.step(n, lo, where="post", color=colour, linewidth=1.2, label=label)
        ax.step(n, hi, where="post", color=colour, linewidth=1.2)
    ax.set_ylim(0, 100)
    ax.set_xlabel("trials scored (in the order they ended)")
    ax.set_ylabel(f"{metric_label(metric)} (0-100): 95% confidence sequence")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper right")
    target = f"; stops at ±{half_width:g}" if half_width is not None else ""
    ax.set_title(title if title else f"Mean {metric_label(metric)}, valid at every trial at once{target}")
    return _save(fig, path)
