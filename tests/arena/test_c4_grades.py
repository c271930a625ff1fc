"""Connect Four grades checked against bitbully (a test-only AGPL solver) on every move of 20 games, the
archetypes against the counts, and the match page's words for lost positions and column scores."""
import pytest
from bitbully import BitBully, Board

from api.arena_html import arena_page
from engine.arena.games import connect_four
from engine.arena.play import play
from engine.arena.results import BLUNDER_PRONE
from tests.arena.conftest import seats

C4 = "arena:connect-four"
PAIRS = [("local/random", "local/random"), ("local/random", "local/solver"), ("local/solver", "local/random"),
         ("local/solver-2", "local/random"), ("local/random", "local/solver-4")]
GAMES = [(PAIRS[k % len(PAIRS)], 100 + k) for k in range(20)]


@pytest.fixture(scope="module")
def games(tools):
    return [play(C4, seats(*models), seed=seed, tools=tools) for models, seed in GAMES]


def _label(scores: dict[int, int], column: int) -> str:
    """docs/ARENA.md's rule on bitbully's scores: optimal at the best score, blunder when the outcome
    class (win, draw, loss) drops, else inaccuracy."""
    best = max(scores.values())
    def sign(s):
        return (s > 0) - (s < 0)

    if scores[column] == best:
        return "optimal"
    return "blunder" if sign(scores[column]) < sign(best) else "inaccuracy"


def test_every_move_of_20_games_is_graded_as_bitbully_grades_it(games):
    reference = BitBully()
    checked = lost = 0
    for out in games:
        board = Board()
        for m in out["moves"]:
            c = m["column"] - 1
            ref = reference.score_all_moves(board)
            assert m["scores"] == [ref.get(k) for k in range(7)], m
            assert m["label"] == _label(ref, c), m
            # the words say the position was already lost exactly when bitbully scores every column a loss
            already = "position already lost" in connect_four.note(m)
            assert already == (max(ref.values()) < 0), m
            lost += already
            board = board.play_on_copy(c)
            checked += 1
    assert checked >= 20 * 7 and lost > 0
    assert {m["label"] for out in games for m in out["moves"]} == {"optimal", "inaccuracy", "blunder"}


def test_archetypes_agree_with_the_blunder_counts(games):
    seen = set()
    for out in games:
        for a in out["results"]["agents"]:
            blunders = a["dimensions"]["blunders"]
            seen.add(a["archetype"])
            assert (a["archetype"] == "Blunder-prone") == (blunders >= BLUNDER_PRONE), a
            if a["archetype"] == "Precise":
                assert blunders == 0 and a["fitness_index"] >= 90
    # a seat lost from its first move (random second against the solver) blunders at most once: never
    # Blunder-prone, though most of its moves are not optimal
    assert {"Precise", "Erratic", "Blunder-prone"} <= seen


def test_the_page_says_when_a_position_was_already_lost_and_explains_the_column_scores(games):
    # a move from a lost position that let four in a row through at once: it reads 'inaccuracy' by label
    for out in games:
        hits = [m for m in out["moves"] if max(s for s in m["scores"] if s is not None) < 0
                and "lets four in a row through at once" in connect_four.note(m) and m["label"] == "inaccuracy"]
        if hits:
            break
    else:
        pytest.fail("none of the 20 games lets a four through from a lost position")
    game = connect_four.GAME
    rep = {"match_id": "m-c4", "name": "g", "scenario_id": C4, "status": "finished", "seed": 1, "results": out["results"],
           "moves": out["moves"], "graph": game.graph(out["moves"])}
    page = arena_page(rep, {"frames": game.frames(out["moves"])})
    m = hits[0]
    line = (f"{m['ply']}. seat {m['seat']}: column {m['column']} <span class='inaccuracy'>inaccuracy</span> "
            "position already lost: every column loses, and this one sooner than it had to; "
            "lets four in a row through at once (column scores ")
    assert line in page
    assert "<p id='legend'" in page and "Column scores: for each move" in page
    assert "the position was already lost" in page
