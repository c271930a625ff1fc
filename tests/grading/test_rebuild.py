"""The state rebuilt from a log is the state the match had, and rollouts score a seat as the rubric does."""
import numpy as np
import pytest

from analytics.archive.format import event_columns, table_meta
from engine.kernels import rollout as K
from engine import rubric
from engine.kernels.codes import A_ALIVE, A_DEATH, A_POLICY, MOVE
from engine.rollouts import RebuildError, Rollouts, config_of, rebuild, rollout_base, rubric_numbers
from engine.rules import WORLD, param_array
from tests.grading.conftest import archived, new_match


def test_snapshots_hold_the_state_the_match_had_before_each_tick():
    m = new_match(41, 60)
    m.run()
    table = archived(m)
    cols, meta = event_columns(table), table_meta(table)
    ticks = [0, 17, 59]
    snap = rebuild(config_of(meta, cols), cols, ticks, [0, 1])
    for s, t in enumerate(ticks):
        live = new_match(41, 60)
        live.run(until=t)
        tb = live.tables
        assert np.array_equal(snap.tiles[s], tb.tiles)
        assert np.array_equal(snap.offers[s], tb.offers) and np.array_equal(snap.ocount[s], tb.ocount)
        assert snap.next_offer[s] == tb.meta[1]
        assert snap.rng[s][0] == live.rng[0]  # the world's stream; a seat fed its log draws nothing of its own
        # every column but a seat's policy and memory (a rebuilt seat is fed its logged actions)
        assert np.array_equal(snap.ag[s][:, :A_POLICY], tb.ag[:, :A_POLICY])
        assert np.array_equal(snap.ag[s][4:, A_POLICY:], tb.ag[4:, A_POLICY:])  # the anchors whole
        assert (snap.ag[s][:4, A_DEATH] == tb.ag[:4, A_DEATH]).all()


def test_a_log_the_engine_does_not_reproduce_is_refused():
    m = new_match(42, 40)
    m.run()
    cols = m.columns()
    meta = table_meta(archived(m))
    moves = np.nonzero((cols["kind"] == MOVE) & (cols["agent"] == 0) & (cols["ok"] == 1))[0]
    cols["a"][moves[3]] = (cols["a"][moves[3]] + 2) % 4  # the seat stepped the other way
    with pytest.raises(RebuildError):
        rebuild(config_of(meta, cols), cols, [5], [0])
    other = dict(meta, seed=meta["seed"] + 1)
    with pytest.raises(RebuildError):
        rebuild(config_of(other, m.columns()), m.columns(), [5], [0])


def test_standing_is_the_rubrics_fitness_index():
    for seed in (43, 44):
        m = new_match(seed, 170, resources={"food": {"max": 0, "regen": 0}})  # no berries: most starve
        m.run()
        results = m.results()
        tb = m.tables
        side = tb.terrain.shape[0]
        entries = results["agents"] + results["anchors"]
        assert any(e["status"] == "starved" for e in entries)
        for e in entries:
            i = e["seat"] if e in results["agents"] else len(results["agents"]) + results["anchors"].index(e)
            k, partners, seen = np.zeros(K.N_K, dtype=np.int64), np.zeros(m.n, dtype=bool), np.zeros((side, side), bool)
            K.count_rows(tb.logi, 0, m.rows, i, k, partners, seen, WORLD["view_radius"])
            value = K.standing(tb.ag, i, m.tick, k, partners, seen, param_array(), rubric_numbers())
            assert value == pytest.approx(e["fitness_index"], abs=0.02)  # the rubric rounds each dimension


def test_rollouts_are_seeded_and_the_logged_turn_reproduces_itself():
    m = new_match(45, 80)
    m.run()
    table = archived(m)
    cols, meta = event_columns(table), table_meta(table)
    snap = rebuild(config_of(meta, cols), cols, [30], [1])
    ro = Rollouts(snap, 10)
    chosen = snap.actions[30, 1][None]
    a = ro.values(30, 1, chosen, 6, rollout_base(1, 2), "honest-trader")
    b = ro.values(30, 1, chosen, 6, rollout_base(1, 2), "honest-trader")
    c = ro.values(30, 1, chosen, 6, rollout_base(1, 2, 1), "honest-trader")
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.std() > 0  # rollouts differ from each other
    # the honest-trader seat's own policy, asked for its turn, takes the turn the log holds
    turns = ro.policy_turns(30, 1, ("honest-trader",))
    assert [tuple(r) for r in turns[0] if r[0] >= 0] == [tuple(r) for r in snap.actions[30, 1] if r[0] >= 0]


def test_standing_projects_the_world_of_now_to_the_seasons_end():
    """A seat alive now counts as alive to the season's end, a dead one loses the ticks it will not
    live: a death within a rollout's horizon costs what it costs at the season's end."""
    m = new_match(43, 150, resources={"food": {"max": 0, "regen": 0}})
    m.run()
    tb = m.tables
    side = tb.terrain.shape[0]
    P, R = param_array(), rubric_numbers()
    dead = [i for i in range(m.n) if tb.ag[i, A_ALIVE] == 0]
    alive = [i for i in range(m.n) if tb.ag[i, A_ALIVE] == 1]
    assert dead and alive
    for i in dead + alive:
        k, partners, seen = np.zeros(K.N_K, dtype=np.int64), np.zeros(m.n, dtype=bool), np.zeros((side, side), bool)
        K.count_rows(tb.logi, 0, m.rows, i, k, partners, seen, WORLD["view_radius"])
        now = K.standing(tb.ag, i, m.tick, k, partners, seen, P, R)
        later = K.standing(tb.ag, i, 300, k, partners, seen, P, R)
        if i in alive:
            assert later == pytest.approx(now)
        else:
            lived = tb.ag[i, A_DEATH] + 1
            lost = rubric.WEIGHTS["survival"] * 100 * 0.7 * lived * (1 / m.tick - 1 / 300)
            assert now - later == pytest.approx(lost)
