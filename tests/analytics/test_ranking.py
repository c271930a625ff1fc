"""Bradley-Terry leaderboard: hand cases, an independent MM fit, recovery of known strengths."""

import numpy as np
import pytest

from analytics.ranking import bradley_terry, match_win_matrices, tie_groups


def plackett_luce_matches(strengths, n_matches, seats, rng):
    """Finishing orders from an exponential race, whose pairwise marginals are
    exactly Bradley-Terry: P(i ahead of j) = w_i / (w_i + w_j)."""
    names = [f"m{i}" for i in range(len(strengths))]
    matches = []
    for _ in range(n_matches):
        players = rng.choice(len(strengths), size=seats, replace=False)
        finish = rng.exponential(1.0 / np.exp(strengths[players]))
        ranks = np.argsort(np.argsort(finish)) + 1
        matches.append([(names[p], int(r)) for p, r in zip(players, ranks)])
    return names, matches


def hunter_mm(wins, iterations=5000, tol=1e-10):
    """Unregularised MM (Hunter 2004), written independently of the module."""
    k = wins.shape[0]
    games = wins + wins.T
    w = np.ones(k)
    for _ in range(iterations):
        denom = (games / (w[:, None] + w[None, :])).sum(axis=1)
        new = wins.sum(axis=1) / denom
        new /= np.exp(np.log(new).mean())
        if np.abs(new - w).max() < tol:
            break
        w = new
    return np.log(new)


def by_model(board):
    return {row.model: row for row in board.rows}


def test_win_matrix_counts_finishing_order_and_half_ties():
    # One match: A first, B and C tied second, A's second seat last.
    model_idx = np.array([[0, 1, 2, 0]])
    ranks = np.array([[1.0, 2.0, 2.0, 3.0]])
    wins = match_win_matrices(model_idx, ranks, 3).reshape(3, 3)
    expected = np.array(
        [
            # A beats B and C with its first seat, loses to both with its last one.
            [0.0, 1.0, 1.0],
            [1.0, 0.0, 0.5],
            [1.0, 0.5, 0.0],
        ]
    )
    np.testing.assert_array_equal(wins, expected)


def test_a_model_that_always_wins_ranks_first_and_stays_finite():
    matches = [[("champ", 1), ("b", 2), ("c", 3)], [("champ", 1), ("c", 2), ("b", 3)]] * 10
    board = bradley_terry(matches, n_resamples=200)
    top = board.rows[0]
    assert top.model == "champ"
    assert np.isfinite([top.estimate, top.low, top.high]).all()
    assert top.group == 1 and top.rank == 1
    assert all(row.group > 1 for row in board.rows[1:])
    assert sum(row.estimate for row in board.rows) == pytest.approx(0.0, abs=1e-9)


def test_symmetric_round_robin_gives_equal_strengths_and_one_tie_group():
    names = ["a", "b", "c", "d"]
    matches = []
    for i in range(4):
        for j in range(4):
            if i != j:  # every ordered pair once: each pair splits its games
                matches.append([(names[i], 1), (names[j], 2)])
    board = bradley_terry(matches, n_resamples=300)
    estimates = [row.estimate for row in board.rows]
    assert estimates == pytest.approx([0.0] * 4, abs=1e-6)
    assert {row.group for row in board.rows} == {1}
    assert all(row.tied_with_leader for row in board.rows)


def test_shared_ranks_count_half_each_way():
    board = bradley_terry([[("x", 1), ("y", 1)]] * 5, n_resamples=50)
    assert [row.estimate for row in board.rows] == pytest.approx([0.0, 0.0], abs=1e-9)


def test_point_estimate_agrees_with_an_independent_mm_fit():
    rng = np.random.default_rng(2)
    truth = np.array([0.8, 0.3, 0.0, -0.4, -0.7])
    names, matches = plackett_luce_matches(truth, 300, 3, rng)
    board = bradley_terry(matches, n_resamples=10, regularisation=1e-6)

    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((5, 5))
    for match in matches:
        for m1, r1 in match:
            for m2, r2 in match:
                if r1 < r2:
                    wins[index[m1], index[m2]] += 1
    reference = hunter_mm(wins)
    got = np.array([by_model(board)[name].estimate for name in names])
    np.testing.assert_allclose(got, reference, atol=1e-3)


def test_intervals_are_percentiles_of_a_bootstrap_over_whole_matches():
    # Re-done by hand: draw whole matches the way the module documents (one
    # rng.integers block), refit each resample with the independent MM, take
    # the 2.5% and 97.5% quantiles.
    rng = np.random.default_rng(6)
    names, matches = plackett_luce_matches(np.array([0.6, 0.0, -0.6]), 150, 3, rng)
    board = bradley_terry(matches, n_resamples=40, seed=8, regularisation=1e-6)

    index = {name: i for i, name in enumerate(names)}
    per_match = np.zeros((len(matches), 3, 3))
    for m, match in enumerate(matches):
        for m1, r1 in match:
            for m2, r2 in match:
                if r1 < r2:
                    per_match[m, index[m1], index[m2]] += 1
    draws = np.random.default_rng(8).integers(0, len(matches), (40, len(matches)))
    boot = np.array([hunter_mm(per_match[d].sum(axis=0)) for d in draws])
    low, high = np.quantile(boot, [0.025, 0.975], axis=0)
    rows = by_model(board)
    np.testing.assert_allclose([rows[n].low for n in names], low, atol=2e-3)
    np.testing.assert_allclose([rows[n].high for n in names], high, atol=2e-3)


def test_recovers_known_strengths_from_simulated_matches():
    rng = np.random.default_rng(4)
    truth = np.array([1.0, 0.5, 0.1, -0.2, -0.6, -0.8])
    truth -= truth.mean()
    names, matches = plackett_luce_matches(truth, 1500, 4, rng)
    board = bradley_terry(matches, n_resamples=200)
    rows = by_model(board)
    got = np.array([rows[name].estimate for name in names])
    np.testing.assert_allclose(got, truth, atol=0.12)
    assert [row.model for row in board.rows][:2] == ["m0", "m1"]
    covered = sum(rows[n].low <= t <= rows[n].high for n, t in zip(names, truth))
    assert covered >= 5


def test_separated_models_fall_into_separate_groups():
    rng = np.random.default_rng(9)
    truth = np.array([3.0, 3.0, 0.0, -3.0])
    names, matches = plackett_luce_matches(truth, 800, 4, rng)
    board = bradley_terry(matches, n_resamples=200)
    groups = {row.model: row.group for row in board.rows}
    assert groups["m0"] == groups["m1"] == 1
    assert groups["m2"] == 2
    assert groups["m3"] == 3
    tied = {row.model: row.tied_with_leader for row in board.rows}
    assert tied == {"m0": True, "m1": True, "m2": False, "m3": False}


def test_tie_groups_anchor_on_the_group_leader():
    # B reaches A's low end: tied. C does not: it starts group 2, and D joins C.
    # B and C overlap each other too, but the chain must not tie C to A.
    groups = tie_groups(
        estimates=[5.0, 4.0, 3.0, 1.0],
        lows=[4.0, 3.5, 2.0, 0.0],
        highs=[6.0, 5.0, 3.8, 2.5],
    )
    assert groups == [1, 1, 2, 2]


def test_tie_groups_refuse_unsorted_estimates():
    with pytest.raises(ValueError):
        tie_groups([1.0, 2.0], [0.0, 1.0], [2.0, 3.0])


def test_same_seed_same_intervals_and_different_seed_moves_them():
    rng = np.random.default_rng(1)
    _, matches = plackett_luce_matches(np.array([0.5, 0.0, -0.5]), 60, 3, rng)
    first = bradley_terry(matches, n_resamples=100, seed=1)
    assert bradley_terry(matches, n_resamples=100, seed=1) == first
    assert bradley_terry(matches, n_resamples=100, seed=2) != first


def test_counts_matches_played_and_handles_single_model():
    board = bradley_terry([[("a", 1), ("b", 2)], [("a", 1), ("c", 2)]], n_resamples=20)
    assert by_model(board)["a"].n == 2 and by_model(board)["b"].n == 1
    alone = bradley_terry([[("solo", 1)]], n_resamples=20)
    assert [(r.model, r.estimate, r.low, r.high) for r in alone.rows] == [("solo", 0.0, 0.0, 0.0)]


def test_refuses_bad_input():
    with pytest.raises(ValueError):
        bradley_terry([])
    with pytest.raises(ValueError):
        bradley_terry([[("a", 1), ("b", float("nan"))]])


def test_frame_has_one_row_per_model_in_rank_order():
    board = bradley_terry([[("a", 1), ("b", 2), ("c", 3)]] * 4, n_resamples=20)
    frame = board.to_frame()
    assert list(frame["model"]) == ["a", "b", "c"]
    assert list(frame["rank"]) == [1, 2, 3]
