import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analytics.plots import DIMENSIONS, dimension_profile, forest_plot, trajectory_plot
from analytics.ranking import bradley_terry
from analytics.stats import mean_interval

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 1000


def test_forest_plot_draws_one_row_per_label_top_down(tmp_path):
    rows = [
        {"label": "seat-a", "estimate": 1.0, "low": 0.5, "high": 1.5},
        {"label": "seat-b", "estimate": 0.2, "low": -0.3, "high": 0.6},
        {"label": "seat-c", "estimate": 0.0, "low": None, "high": None},  # one trial: no bar
    ]
    fig = forest_plot(rows, reference=0.0, path=tmp_path / "forest.png")
    assert isinstance(fig, Figure)
    assert_png(tmp_path / "forest.png")
    ax = fig.axes[0]
    ticks = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())), reverse=True)
    assert [label for _, label in ticks] == ["seat-a", "seat-b", "seat-c"]
    intervals = ax.collections[0].get_segments()
    assert len(intervals) == 2
    np.testing.assert_allclose(intervals[0][:, 0], [0.5, 1.5])
    points = ax.lines[0]
    np.testing.assert_allclose(points.get_xdata(), [1.0, 0.2, 0.0])


def test_forest_plot_takes_leaderboard_rows_and_frames():
    board = bradley_terry([[("a", 1), ("b", 2), ("c", 3)], [("b", 1), ("a", 2), ("c", 3)]] * 3, n_resamples=20)
    fig = forest_plot(board.rows)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [r.model for r in board.rows]
    frame = pd.DataFrame({"label": ["x", "y"], "estimate": [1, 2], "low": [0, 1], "high": [2, 3]})
    assert len(forest_plot(frame).axes[0].get_yticklabels()) == 2
    interval = mean_interval([1.0, 2.0, 4.0])
    fig = forest_plot([{"label": "mean", **interval.to_dict()}])
    assert len(fig.axes[0].collections[0].get_segments()) == 1


def test_forest_plot_refuses_rows_without_label():
    with pytest.raises(ValueError, match="label"):
        forest_plot([{"estimate": 1.0, "low": 0.0, "high": 2.0}])
    with pytest.raises(ValueError):
        forest_plot([])


def profile_frame():
    return pd.DataFrame(
        {
            "seat": ["alpha", "beta", "gamma"],
            "survival": [80, 60, 100],
            "economy": [40, 70, 0],
            "social": [55, 20, 30],
            "competitiveness": [65, 90, 10],
            "exploration": [30, 35, 95],
        }
    )


def test_dimension_profile_has_five_bars_per_seat(tmp_path):
    fig = dimension_profile(profile_frame(), path=tmp_path / "profile.png")
    assert_png(tmp_path / "profile.png")
    ax = fig.axes[0]
    assert len(ax.containers) == 3
    assert all(len(bars) == 5 for bars in ax.containers)
    assert [b.get_height() for b in ax.containers[2]] == [100, 0, 30, 10, 95]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(DIMENSIONS)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["alpha", "beta", "gamma"]


def test_dimension_profile_of_one_seat_from_a_dict():
    fig = dimension_profile(dict(zip(DIMENSIONS, [10, 20, 30, 40, 50])))
    assert len(fig.axes[0].containers) == 1
    assert len(fig.axes[0].patches) == 5


def test_dimension_profile_refuses_out_of_range_and_missing_columns():
    bad = profile_frame()
    bad.loc[0, "economy"] = 140
    with pytest.raises(ValueError, match="0..100"):
        dimension_profile(bad)
    with pytest.raises(ValueError, match="exploration"):
        dimension_profile(profile_frame().drop(columns="exploration"))


def trajectories():
    ticks = np.arange(50)
    rows = []
    for agent, slope in [("ann", 1.0), ("bob", -0.5), ("cy", 0.2)]:
        for metric, scale in [("health", 1.0), ("wealth", 10.0)]:
            for tick in ticks[::-1]:  # reversed: the plot must sort by tick
                rows.append({"tick": tick, "agent": agent, "metric": metric, "value": scale * slope * tick})
    return pd.DataFrame(rows)


def test_trajectory_plot_one_line_per_agent_for_the_chosen_metric(tmp_path):
    fig = trajectory_plot(trajectories(), "wealth", path=tmp_path / "wealth.png")
    assert_png(tmp_path / "wealth.png")
    ax = fig.axes[0]
    assert len(ax.lines) == 3
    ann = ax.lines[0]
    assert ann.get_label() == "ann"
    np.testing.assert_array_equal(ann.get_xdata(), np.arange(50))
    np.testing.assert_allclose(ann.get_ydata(), 10.0 * np.arange(50))
    assert ax.get_ylabel() == "wealth"


def test_trajectory_plot_without_metric_column_and_errors():
    df = trajectories()
    df = df[df.metric == "health"].drop(columns="metric")
    assert len(trajectory_plot(df, "health").axes[0].lines) == 3
    with pytest.raises(ValueError, match="no rows"):
        trajectory_plot(trajectories(), "mana")
    with pytest.raises(ValueError, match="columns"):
        trajectory_plot(df.drop(columns="agent"), "health")


def test_dimension_profile_keeps_its_legend_clear_of_the_dimension_names():
    """The notebook's profile of a series (two seats and four anchors) drew its legend over the x labels."""
    frame = pd.concat([profile_frame()] * 2, ignore_index=True)
    frame["seat"] = ["seat 0 · me", "seat 1 · rival", "seat 2 · honest-trader #1", "seat 3 · greedy-harvester #1",
                     "seat 4 · aggressive-raider #1", "seat 5 · random #1"]  # as analytics.figures labels them
    fig = dimension_profile(frame)
    canvas = FigureCanvasAgg(fig)  # as the notebook's inline backend draws it
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    names = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
    legend = (ax.get_legend() or fig.legends[0]).get_window_extent(renderer)
    assert not any(name.overlaps(legend) for name in names)
    assert not any(a.overlaps(b) for i, a in enumerate(names) for b in names[i + 1:])
    assert fig.bbox.contains(legend.x0, legend.y0) and fig.bbox.contains(legend.x1, legend.y1)  # not cut off
