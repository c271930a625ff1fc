"""Property-based: random seeds and random action streams never crash and keep the invariants."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import rules
from engine.actions import ACTION_SPECS
from engine.kernels.codes import N_ACTIONS
from engine.kernels.common import pool_at
from tests.engine.conftest import external_match, make_match

names = list(ACTION_SPECS) + ["fly"]
arg = st.one_of(st.integers(-3, 12), st.sampled_from(rules.RESOURCES + rules.DIRECTIONS), st.text(max_size=5),
                st.none(), st.booleans())
action = st.builds(lambda n, kv: {"action": n, **kv}, st.sampled_from(names),
                   st.dictionaries(st.sampled_from(["direction", "to", "give", "give_qty", "want", "want_qty",
                                                    "offer_id", "target", "text"]), arg, max_size=5))


def check_invariants(m):
    a, w = m.agents, m.world
    assert (a.inv >= 0).all() and (a.inv <= rules.WORLD["carry_max"]).all()
    assert (a.health >= 0).all() and (a.health <= rules.WORLD["health_max"]).all()
    assert (a.satiety >= 0).all() and (a.satiety <= rules.WORLD["satiety_max"]).all()
    assert ((a.alive == 1) == (a.health > 0)).all()
    H, W = w.terrain.shape
    assert ((a.pos[:, 0] >= 0) & (a.pos[:, 0] < W) & (a.pos[:, 1] >= 0) & (a.pos[:, 1] < H)).all()
    assert (w.terrain[a.pos[:, 1], a.pos[:, 0]] != 6).all()
    for y, x in zip(*np.nonzero(w.cap)):
        p = pool_at(m.tables.tiles, x, y, m.tick)
        assert -1e-9 <= p <= w.cap[y, x] + 1e-9


def dead_never_act(m):
    cols = m.columns()
    death = {int(i): t for i, t in enumerate(m.agents.death_tick) if t >= 0}
    acts = cols["kind"] <= N_ACTIONS
    for i, t in death.items():
        assert not (acts & (cols["agent"] == i) & (cols["tick"] > t)).any()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, rules.SEED_MAX), spawn=st.integers(0, rules.SEED_MAX), ticks=st.integers(10, 400),
       food=st.sampled_from([0, 0.5, 1, 3]))
def test_scripted_seasons_keep_invariants(seed, spawn, ticks, food):
    m = make_match(ticks=ticks, seed=seed, spawn_seed=spawn,
                   seats=("local/random", "local/aggressive-raider", "local/honest-trader"),
                   resources={"food": {"max": food, "regen": food}})
    m.run(until=ticks // 2)
    check_invariants(m)
    m.run()
    check_invariants(m)
    dead_never_act(m)
    r = m.results()
    assert r["match_ticks"] == ticks


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), stream=st.lists(st.lists(action, max_size=3), min_size=1, max_size=40))
def test_random_action_streams_keep_invariants(seed, stream):
    m = external_match(n=3, ticks=60, seed=seed, spawn_seed=seed + 1, apt=2)
    for k, acts in enumerate(stream):
        if m.done:
            break
        m.submit({k % 3: acts, (k + 1) % 3: acts[::-1]})
        check_invariants(m)
    dead_never_act(m)
