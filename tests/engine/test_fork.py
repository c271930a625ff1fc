"""Forks (engine/fork.py): the played match rebuilt to the start of tick k and played on from there."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import events
from engine.fork import fork
from engine.match import AgentSpec
from engine.replay import logged_actions
from engine.rollouts import RebuildError
from tests.engine.conftest import external_match, make_match

POLICIES = ("local/honest-trader", "local/greedy-harvester", "local/aggressive-raider", "local/random")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), spawn=st.integers(0, 2**31), ticks=st.integers(12, 45),
       at=st.floats(0, 1), seats=st.lists(st.sampled_from(POLICIES), min_size=1, max_size=4))
def test_a_fork_that_changes_nothing_replays_the_original_byte_for_byte(seed, spawn, ticks, at, seats):
    original = make_match(ticks, seed, spawn, seats=seats)
    original.run()
    cols = original.columns()
    k = 1 + int(at * (ticks - 2))
    m = fork(original.config, cols, k)
    assert m.tick == m.start_tick == k
    m.run()
    assert events.equal(cols, m.columns())
    assert m.results() == original.results()


def test_a_fork_keeps_the_prefix_and_plays_its_changed_seat_from_tick_k():
    original = make_match(60, 3, 4, seats=("local/greedy-harvester", "local/honest-trader"))
    original.run()
    cols = original.columns()
    m = fork(original.config, cols, 30, {0: AgentSpec("random", "local/random", "random")})
    m.run()
    got = m.columns()
    before = cols["tick"] < 30
    assert all(np.array_equal(got[c][: before.sum()], cols[c][before]) for c in events.COLUMNS)
    assert not events.equal(cols, got)
    mine = (got["agent"] == 0) & (got["tick"] >= 30) & (got["kind"] <= 10)
    assert mine.any()
    assert m.results()["agents"][0]["model"] == "local/random"
    assert m.results()["agents"][0]["name"] == "random"


def test_a_continuation_seed_draws_new_dice_the_same_way_every_time():
    original = make_match(50, 8, 9, seats=("local/random", "local/aggressive-raider"))
    original.run()
    cols = original.columns()
    a, b, c = (fork(original.config, cols, 20, continuation_seed=s) for s in (5, 5, 6))
    for m in (a, b, c):
        m.run()
    assert events.equal(a.columns(), b.columns())
    assert not events.equal(a.columns(), original.columns())
    assert not events.equal(a.columns(), c.columns())
    rows = int((cols["tick"] < 20).sum())
    assert np.array_equal(a.columns()["kind"][:rows], cols["kind"][:rows])


def test_seats_played_from_outside_go_on_from_their_logged_state():
    original = external_match(n=2, ticks=30)
    rng = np.random.default_rng(1)
    while not original.done:
        original.submit({i: [{"action": "move", "direction": ["north", "east", "south", "west"][rng.integers(4)]},
                             {"action": "gather"}] for i in original.external})
    cols = original.columns()
    acts = logged_actions(cols, original.n, original.apt, 30)
    m = fork(original.config, cols, 11)
    while not m.done:
        m.submit({i: list(acts[m.tick, i]) for i in m.external})
    assert events.equal(cols, m.columns())


def test_a_tick_outside_the_played_ticks_or_a_log_that_does_not_replay_is_refused():
    original = make_match(20, 1, 2)
    original.run()
    cols = original.columns()
    for tick in (0, 20, 25):
        with pytest.raises(RebuildError):
            fork(original.config, cols, tick)
    cols["a"][np.nonzero(cols["kind"] == 1)[0][2]] += 1  # a move logged another way than it was played
    with pytest.raises(RebuildError):
        fork(original.config, cols, 5)


def test_a_continuation_forks_log_replays_and_forks_again_with_its_reseeds():
    from engine.replay import replay

    original = make_match(40, 12, 13, seats=("local/greedy-harvester", "local/random"))
    original.run()
    first = fork(original.config, original.columns(), 15, continuation_seed=99)
    first.run()
    assert first.config.reseeds == [(15, 99)]
    cols = first.columns()
    assert events.equal(cols, replay(first.config, cols).columns())
    again = fork(first.config, cols, 25)  # the original's streams: its reseed at 15 stays
    again.run()
    assert events.equal(cols, again.columns())
    other = fork(first.config, cols, 25, continuation_seed=7)
    assert other.config.reseeds == [(15, 99), (25, 7)]
    other.run()
    assert events.equal(other.columns(), replay(other.config, other.columns()).columns())
