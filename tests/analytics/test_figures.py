"""Plots drawn from the archive show the archive's numbers."""
import numpy as np
import pytest
from matplotlib.figure import Figure

from analytics.archive.store import Archive
from analytics.compare import leaderboard
from analytics.figures import leaderboard_forest, seat_forest, seat_profile, trajectories, trajectory
from analytics.summary import series_summary
from engine.kernels.codes import SNAPSHOT
from tests.analytics.conftest import direct_seats


def test_seat_forest_draws_each_seats_mean(archive_dir, tmp_path):
    fig = seat_forest(archive_dir, "bat_b", path=tmp_path / "forest.png")
    assert (tmp_path / "forest.png").read_bytes().startswith(b"\x89PNG")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["seat 0 · trader", "seat 1 · raider", "seat 2 · random #1 (anchor)",
                      "seat 3 · greedy-harvester #1 (anchor)"]
    means = series_summary(archive_dir, "bat_b")["seats"]
    points = ax.lines[0].get_xdata()
    assert points == pytest.approx([s["fitness_index"]["estimate"] for s in means])
    # named for people, as the console's series page shows it
    assert ax.get_xlabel() == "mean fitness index (0-100), 95% interval"
    assert ax.get_title().startswith("Fitness index per seat, series bat_b")


def test_leaderboard_forest_has_a_row_per_model(archive_dir):
    fig = leaderboard_forest(leaderboard(archive_dir, batch_id="bat_b", n_resamples=50))
    assert isinstance(fig, Figure) and len(fig.axes[0].get_yticklabels()) == 4


def test_dimension_profile_bars_are_the_seat_means(archive_dir):
    fig = seat_profile(archive_dir, "bat_b", anchors=False)
    rows = direct_seats(archive_dir)
    rows = rows[(rows["batch_id"] == "bat_b") & ~rows["anchor"]]
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    want = [rows[rows["seat"] == s][d].mean() for s in (0, 1) for d in
            ("survival", "economy", "social", "competitiveness", "exploration")]
    assert heights == pytest.approx(want)


def test_trajectories_read_health_and_wealth_from_snapshot_rows(archive_dir, tmp_path):
    cols, _ = Archive.of(archive_dir).read_events("match_bat_a_2", "bat_a")
    snap = cols["kind"] == SNAPSHOT
    table = trajectories(archive_dir, "match_bat_a_2")
    health = table[table["metric"] == "health"]
    assert health["value"].tolist() == cols["c"][snap].astype(float).tolist()
    assert table[table["metric"] == "wealth"]["value"].tolist() == cols["v"][snap].tolist()
    satiety = table[table["metric"] == "satiety"]
    assert satiety["value"].tolist() == cols["d"][snap].astype(float).tolist()
    # the plotted lines move: most agents' satiety changes over the match
    assert (satiety.groupby("agent")["value"].nunique() > 1).mean() >= 0.5
    assert set(health["agent"]) == {"0: trader", "1: raider", "2: random #1", "3: greedy-harvester #1"}
    fig = trajectory(archive_dir, "match_bat_a_2", "wealth", path=tmp_path / "w.png")
    assert len(fig.axes[0].lines) == 4
    assert np.isfinite(fig.axes[0].lines[0].get_ydata()).all()
    with pytest.raises(ValueError):
        trajectory(archive_dir, "match_bat_a_2", "mood")
