"""Comparisons, IQM and leaderboard over the archive, each against a direct computation."""
import numpy as np
import pytest
from scipy import stats as st

from analytics import choice, iqm, paired
from analytics.compare import (aggregate_over_scenarios, compare_configs, compare_seats, finishing_orders,
                               leaderboard, skill_uplift)
from analytics.ranking import bradley_terry
from tests.analytics.conftest import SEEDS_B, direct_seats


def by_seed(rows, batch_id, seat, metric):
    part = rows[(rows["batch_id"] == batch_id) & (rows["seat"] == seat)]
    return dict(zip(part["seed"], part[metric]))


def test_two_seats_of_a_series_are_paired_per_match(archive_dir):
    got = compare_seats(archive_dir, "bat_b", 0, "raider", metric="economy")
    rows = direct_seats(archive_dir)
    a, b = by_seed(rows, "bat_b", 0, "economy"), by_seed(rows, "bat_b", 1, "economy")
    diff = np.array([a[s] - b[s] for s in sorted(a)])
    low, high = paired.difference_bounds(diff)
    assert got["difference"]["n"] == len(SEEDS_B)
    assert got["difference"]["method"] == choice.METHOD_NAMES[choice.DIFFERENCE_METHOD]
    assert got["difference"]["estimate"] == round(diff.mean(), 2)
    assert (got["difference"]["low"], got["difference"]["high"]) == (round(low[0], 2), round(high[0], 2))
    assert -100.0 <= got["difference"]["low"] <= got["difference"]["high"] <= 100.0
    wins = np.mean([(a[s] > b[s]) + 0.5 * (a[s] == b[s]) for s in a])
    assert got["prob_improvement"]["estimate"] == round(wins, 4)


def test_configurations_pair_on_the_seeds_both_series_played(archive_dir):
    got = compare_configs(archive_dir, "bat_a", "bat_b", 0)
    rows = direct_seats(archive_dir)
    a, b = by_seed(rows, "bat_a", 0, "fitness_index"), by_seed(rows, "bat_b", 0, "fitness_index")
    shared = sorted(set(a) & set(b))
    assert [seed for seed, _spawn in got["paired_on"]] == shared == SEEDS_B  # paired on (seed, spawn_seed)
    want = paired.paired_comparison([a[s] for s in shared], [b[s] for s in shared], bounded=True)
    for key, digits in (("difference", 2), ("prob_improvement", 4)):
        w = getattr(want, key).to_dict()
        assert got[key] == w | {k: round(w[k], digits) for k in ("estimate", "low", "high")}


def test_skill_uplift_is_with_minus_without(archive_dir):
    up = skill_uplift(archive_dir, "bat_a", "bat_b", "trader", metric="won")
    rows = direct_seats(archive_dir)
    rows["won"] = (rows["rank"] == 1).astype(float)
    a, b = by_seed(rows, "bat_a", 0, "won"), by_seed(rows, "bat_b", 0, "won")
    assert up["difference"]["estimate"] == pytest.approx(np.mean([a[s] - b[s] for s in SEEDS_B]))
    down = skill_uplift(archive_dir, "bat_b", "bat_a", "trader", metric="won")
    assert down["difference"]["estimate"] == pytest.approx(-up["difference"]["estimate"])


def test_bad_metric_or_seat_is_refused(archive_dir):
    with pytest.raises(ValueError, match="unknown metric"):
        compare_seats(archive_dir, "bat_b", 0, 1, metric="fitness_index; DROP TABLE seats")
    with pytest.raises(ValueError, match="no rows for seat"):
        compare_seats(archive_dir, "bat_b", 0, 9)


def test_iqm_over_scenarios_is_stratified_by_scenario(archive_dir):
    got = {r["model"]: r for r in aggregate_over_scenarios(archive_dir, batch_id=["bat_a", "bat_c"])}
    rows = direct_seats(archive_dir)
    rows = rows[rows["batch_id"].isin(["bat_a", "bat_c"]) & (rows["model"] == "local/honest-trader")]
    scores = {s: g["fitness_index"].to_numpy() for s, g in rows.groupby("scenario_id")}
    entry = got["local/honest-trader"]
    assert entry["scenarios"] == {"base": 32, "lush": 10}
    assert entry["estimate"] == pytest.approx(st.trim_mean(np.concatenate(list(scores.values())), 0.25))
    want = iqm.aggregate_iqm(scores)
    assert (entry["low"], entry["high"]) == (want.low, want.high)


def test_leaderboard_fits_the_finishing_order_of_each_match(archive_dir):
    board = leaderboard(archive_dir, batch_id="bat_a", n_resamples=200)
    rows = direct_seats(archive_dir)
    rows = rows[rows["batch_id"] == "bat_a"].sort_values(["match_id", "seat"])
    orders = [list(zip(g["model"], g["rank"].astype(float))) for _, g in rows.groupby("match_id", sort=True)]
    want = bradley_terry(orders, n_resamples=200)
    assert board.to_dict() == want.to_dict()
    assert board.n_matches == 32 and len(board.rows) == 4
    assert all(r.low <= r.estimate <= r.high for r in board.rows)


def test_finishing_orders_are_each_matchs_models_and_ranks_ties_included():
    import pandas as pd

    rows = pd.DataFrame({"match_id": ["m2", "m1", "m1", "m2", "m1"], "seat": [1, 2, 0, 0, 1],
                         "model": ["x", "z", "x", "y", "y"], "rank": [1, 2, 1, 1, 2]})
    assert finishing_orders(rows) == [[("x", 1.0), ("y", 2.0), ("z", 2.0)], [("y", 1.0), ("x", 1.0)]]


def test_leaderboard_is_one_games_and_leaves_failed_runs_out(mixed_dir):
    from analytics.compare import leaderboards

    with pytest.raises(ValueError, match="several games \\(world, arena:connect-four\\)"):
        leaderboard(mixed_dir, n_resamples=20)
    c4 = leaderboard(mixed_dir, game="arena:connect-four", n_resamples=20)
    assert {r.model for r in c4.rows} == {"local/solver", "local/random"} and c4.n_matches == 6
    assert c4.rows[0].model == "local/solver" and c4.note is None
    boards = leaderboards(mixed_dir, n_resamples=20)
    assert list(boards) == ["world", "arena:connect-four"]
    assert boards["world"].n_matches == 8 and boards["world"].note == "1 failed run (1 match) left out"
    assert "local/solver" not in {r.model for r in boards["world"].rows}
    with pytest.raises(ValueError, match="unknown game 'go'"):
        leaderboard(mixed_dir, game="go")
