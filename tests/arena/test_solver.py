"""The Connect Four solver against published results and bitbully (a test-only AGPL reference)."""
import random

import pytest
from bitbully import BitBully, Board

from engine.arena.solver import Solver, book_score, shallow_column_scores
from engine.arena.connect4 import from_grid


@pytest.fixture(scope="module")
def solver(tools):
    return tools.solver()


def test_first_player_wins_from_the_empty_board_by_the_centre(solver):
    # Allis (1988) and Pons: the first player wins, and only the centre column keeps the win
    scores = solver.scores([])
    assert scores == [-2, -1, 0, 1, 0, -1, -2]
    assert solver.score([]) == 1


def test_a_full_centre_column_is_not_playable(solver):
    assert solver.scores([3] * 6) == [-1, 0, 1, None, 1, 0, -1]


def _random_position(rng, plies):
    b, cols = Board(), []
    while len(cols) < plies:
        c = rng.randrange(7)
        if not b.is_legal_move(c):
            continue
        nxt = b.play_on_copy(c)
        if nxt.has_win():
            return None
        b, cols = nxt, cols + [c]
    return b, cols


@pytest.mark.parametrize("plies", [1, 3, 8, 11, 13, 18, 24, 30])
def test_every_column_score_matches_bitbully(solver, plies):
    reference = BitBully()
    rng = random.Random(plies)
    checked = 0
    while checked < 4:
        found = _random_position(rng, plies)
        if found is None:
            continue
        board, cols = found
        ref = reference.score_all_moves(board)
        assert solver.scores(cols) == [ref.get(c) for c in range(7)], cols
        checked += 1


def test_book_distances_convert_to_the_solvers_scores():
    # bitbully-databases' own examples: 71 (first player wins in 29 plies), -88 (loses in 12)
    bare = Solver(use_book=False)
    with_book = Solver()
    win_in_29 = [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0, 0], [0, 1, 0, 2, 0, 0, 0], [0, 2, 0, 1, 0, 2, 0],
                 [0, 1, 0, 2, 0, 1, 0], [0, 2, 0, 1, 0, 2, 0]]
    loss_in_12 = [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0, 0], [0, 0, 2, 2, 0, 0, 0],
                  [0, 1, 2, 1, 0, 0, 0], [0, 1, 1, 2, 0, 2, 2]]
    for grid, expected in ((win_in_29, 22 - 21), (loss_in_12, -(22 - 12))):
        pos, mask, plies = from_grid(grid)
        assert plies == 12
        assert book_score(pos, mask, with_book.book_keys, with_book.book_vals) == expected
        assert bare.score_position(pos, mask, plies) == expected


def test_depth_limited_search_sees_a_win_in_one_and_avoids_a_loss_in_one():
    # X (to move) has three on the bottom row: column 4 (index 3) wins at once
    assert shallow_column_scores([0, 0, 1, 1, 2, 2], 1)[3] == 1
    # O to move must block column 4, every other column loses at depth 2
    scores = shallow_column_scores([0, 6, 1, 6, 2], 2)
    assert scores[3] >= 0 and all(s == -1 for c, s in enumerate(scores) if c != 3)


# Pascal Pons' published test sets (Test_L3_R1 end game, Test_L2_R1/R2 middle game, Test_L1_R2 early):
# move sequences in columns 1..7 and the exact score of the side to move.
PONS = [("2252576253462244111563365343671351441", -1), ("23163416124767223154467471272416755633", 0),
        ("5554224333234511764415115", 4), ("2737772244262123677516643354", 0), ("274552224131661", 0),
        ("555317266147361", -1), ("32751571231557", -3), ("75734233473735", 0)]


@pytest.mark.parametrize("moves,score", PONS)
def test_published_positions_get_their_published_scores(solver, moves, score):
    cols = [int(c) - 1 for c in moves]
    assert solver.score(cols) == score
    playable = [s for s in solver.scores(cols) if s is not None]
    assert max(playable) == score  # the best column's score is the position's
