"""Same inputs, same log, byte for byte; the two ways of playing are one engine."""
from engine import events
from engine.replay import replay
from tests.engine.conftest import make_match


def test_same_seeds_give_identical_log_and_results():
    a, b = make_match(), make_match()
    a.run()
    b.run()
    assert events.equal(a.columns(), b.columns())
    assert a.results() == b.results()


def test_different_map_seed_differs():
    a, b = make_match(seed=1), make_match(seed=2)
    a.run()
    b.run()
    assert not (a.world.terrain == b.world.terrain).all()
    assert not events.equal(a.columns(), b.columns())


def test_spawn_seed_moves_roster_but_not_map():
    a, b = make_match(spawn_seed=1), make_match(spawn_seed=2)
    assert (a.world.terrain == b.world.terrain).all()
    assert not (a.agents.pos == b.agents.pos).all()


def test_tick_by_tick_equals_compiled_season():
    a, b = make_match(ticks=120), make_match(ticks=120)
    a.run()
    while not b.done:
        b.submit({})
    assert events.equal(a.columns(), b.columns())


def test_chunked_run_equals_whole_run():
    a, b = make_match(ticks=200), make_match(ticks=200)
    a.run()
    for stop in (7, 50, 51, 130, 200):
        b.run(until=stop)
    assert events.equal(a.columns(), b.columns())


def test_replaying_logged_actions_reproduces_the_log_exactly():
    a = make_match(ticks=250, seats=("local/honest-trader", "local/greedy-harvester", "local/random"))
    a.run()
    b = replay(a.config, a.columns())
    assert events.equal(a.columns(), b.columns())
    assert a.results() == b.results()


def test_replay_of_a_stopped_match_stops_at_the_same_tick():
    a = make_match(ticks=300)
    a.run(until=90)
    a.finish("cancelled")
    b = replay(a.config, a.columns())
    assert b.stop_reason == "cancelled"
    assert events.equal(a.columns(), b.columns())
    assert a.results()["match_ticks"] == 90
