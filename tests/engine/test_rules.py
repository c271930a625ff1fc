"""One test (at least) per rule of the world; every refused action changes nothing."""
import numpy as np
import pytest

from engine import rules
from engine.kernels.codes import (
    ACCEPT, BERRIES, EXPIRE, FOOD, FOREST, OFFER, ORE, STARVE, STONE, WATER, WOOD,
)
from engine.kernels.common import pool_at
from tests.engine.conftest import external_match, last_event, place

W = rules.WORLD


def state(m):
    a = m.agents
    return (a.pos.copy(), a.inv.copy(), a.health.copy(), a.satiety.copy(), a.shelter.copy(), a.tool.copy(),
            m.offers.oid.copy())


def same(s1, s2):
    return all((x == y).all() for x, y in zip(s1, s2))


def test_hunger_then_starvation_then_no_more_actions(ext2):
    m = ext2
    m.agents.satiety[0] = 1
    m.agents.inv[0, FOOD] = 0
    m.agents.health[0] = W["starve_damage"]
    m.submit({0: [{"action": "wait"}], 1: [{"action": "eat"}]})
    assert m.agents.satiety[0] == 0 and m.agents.health[0] == 0 and m.agents.alive[0] == 0
    assert last_event(m, 0)["kind"] == STARVE
    n = m.rows
    with pytest.raises(ValueError):
        m.submit({0: [{"action": "wait"}], 9: []})
    m.submit({0: [{"action": "move", "direction": "north"}]})  # the dead do not act
    cols = m.columns()
    assert not ((cols["agent"][n:] == 0) & (cols["kind"][n:] <= 11)).any()
    m.finish()
    assert m.results()["agents"][0]["status"] == "starved"


def test_eating_restores_satiety_and_healing_needs_it(ext2):
    m = ext2
    m.agents.satiety[0] = 30
    m.agents.health[0] = 50
    m.submit({0: [{"action": "eat"}]})
    assert m.agents.satiety[0] == 30 + W["eat_satiety"] - W["hunger_per_tick"]
    assert m.agents.health[0] == 50 + W["heal_per_tick"]
    assert m.agents.inv[0, FOOD] == W["start_food"] - 1


@pytest.mark.parametrize("action,reason", [
    ({"action": "move", "direction": "north"}, "blocked"),
    ({"action": "gather"}, "nothing_here"),
    ({"action": "build"}, "lacks_materials"),
    ({"action": "craft"}, "lacks_materials"),
    ({"action": "offer", "to": 0, "give": "food", "give_qty": 1, "want": "wood", "want_qty": 1}, "bad_target"),
    ({"action": "offer", "to": 1, "give": "ore", "give_qty": 1, "want": "wood", "want_qty": 1}, "lacks_goods"),
    ({"action": "offer", "to": 1, "give": "food", "give_qty": 0, "want": "wood", "want_qty": 1}, "bad_quantity"),
    ({"action": "offer", "to": 1, "give": "food", "give_qty": 1, "want": "food", "want_qty": 1}, "bad_resource"),
    ({"action": "accept", "offer_id": 42}, "no_such_offer"),
    ({"action": "decline", "offer_id": 42}, "no_such_offer"),
    ({"action": "raid", "target": 1}, "out_of_range"),
    ({"action": "raid", "target": 7}, "bad_target"),
    ({"action": "say", "text": "hi", "to": 0}, "bad_target"),
    ({"action": "fly"}, "unknown_action"),
    ({"action": "move", "direction": "up"}, "bad_arguments"),
    ({"action": "raid", "target": "1"}, "bad_arguments"),
])
def test_refused_actions_are_logged_with_reason_and_change_nothing(ext2, action, reason):
    m = ext2
    place(m, 0, 5, 5)
    place(m, 1, 8, 8)  # in offer range, not adjacent
    m.world.terrain[4, 5] = WATER
    before = state(m)
    m._ext[:] = 0
    from engine.actions import encode
    row = encode(action, m.messages)
    # apply just this action, outside the tick loop, so hunger does not blur the comparison
    from engine.kernels.step import apply_action
    apply_action(*m.tables, m.rng, 0, 0, row, m._P)
    ev = last_event(m, 0)
    assert ev["ok"] == 0
    assert rules.REASONS[ev["reason"]] == reason
    assert same(before, state(m))


def test_offer_then_accept_settles_both_legs(ext2):
    m = ext2
    place(m, 0, 5, 5)
    place(m, 1, 6, 5)
    m.agents.inv[0, WOOD] = 4
    m.agents.inv[1, ORE] = 2
    total = m.agents.inv.sum(axis=0).copy()
    m.submit({0: [{"action": "offer", "to": 1, "give": "wood", "give_qty": 3, "want": "ore", "want_qty": 1}]})
    oid = last_event(m, 0)["f"]
    m.submit({1: [{"action": "accept", "offer_id": oid}]})
    assert m.agents.inv[0, WOOD] == 1 and m.agents.inv[1, WOOD] == 3
    assert m.agents.inv[0, ORE] == 1 and m.agents.inv[1, ORE] == 1
    assert (m.agents.inv.sum(axis=0) == total).all()
    ev = last_event(m, 1)
    assert ev["kind"] == ACCEPT and ev["ok"] == 1 and ev["f"] == 0


def test_trade_is_atomic_when_offerer_no_longer_holds_goods(ext2):
    m = ext2
    place(m, 0, 5, 5)
    place(m, 1, 6, 5)
    m.agents.inv[0, WOOD] = 3
    m.agents.inv[1, ORE] = 2
    m.submit({0: [{"action": "offer", "to": 1, "give": "wood", "give_qty": 3, "want": "ore", "want_qty": 1}]})
    oid = last_event(m, 0)["f"]
    m.agents.inv[0, WOOD] = 2  # the wood went elsewhere before the accept
    inv_before = m.agents.inv.copy()
    m.submit({1: [{"action": "accept", "offer_id": oid}, {"action": "accept", "offer_id": oid}]})
    assert (m.agents.inv == inv_before).all()
    cols = m.columns()
    accepts = np.nonzero((cols["kind"] == ACCEPT) & (cols["agent"] == 1))[0]
    assert [rules.REASONS[cols["reason"][r]] for r in accepts] == ["offerer_lacks_goods", "no_such_offer"]
    voided = np.nonzero((cols["kind"] == EXPIRE) & (cols["b"] == 2))[0]
    assert len(voided) == 1 and cols["agent"][voided[0]] == 0


def test_accept_refused_when_acceptor_lacks_goods_and_offer_survives(ext2):
    m = ext2
    place(m, 0, 5, 5)
    place(m, 1, 6, 5)
    m.agents.inv[0, WOOD] = 3
    m.submit({0: [{"action": "offer", "to": 1, "give": "wood", "give_qty": 3, "want": "ore", "want_qty": 1}]})
    oid = last_event(m, 0)["f"]
    m.submit({1: [{"action": "accept", "offer_id": oid}]})
    assert rules.REASONS[last_event(m, 1)["reason"]] == "lacks_goods"
    assert oid in m.offers.oid


def test_offers_lapse_after_their_ttl(ext2):
    m = ext2
    place(m, 0, 5, 5)
    place(m, 1, 6, 5)
    m.submit({0: [{"action": "offer", "to": 1, "give": "food", "give_qty": 1, "want": "wood", "want_qty": 1}]})
    for _ in range(W["offer_ttl"]):
        m.submit({})
    cols = m.columns()
    lapsed = np.nonzero(cols["kind"] == EXPIRE)[0]
    assert len(lapsed) == 1 and cols["tick"][lapsed[0]] == W["offer_ttl"] and cols["b"][lapsed[0]] == 0
    assert (m.offers.oid < 0).all()


def test_open_offer_limit(ext2):
    m = ext2
    place(m, 0, 5, 5)
    place(m, 1, 6, 5)
    m.agents.inv[0, FOOD] = 10
    offer = {"action": "offer", "to": 1, "give": "food", "give_qty": 1, "want": "wood", "want_qty": 1}
    m.submit({0: [offer, offer]})
    m.submit({0: [offer, offer]})
    cols = m.columns()
    rows = np.nonzero((cols["kind"] == OFFER) & (cols["agent"] == 0))[0]
    assert list(cols["ok"][rows]) == [1, 1, 1, 0]
    assert rules.REASONS[cols["reason"][rows[-1]]] == "too_many_offers"


def _raid_outcomes(shelter: int, tool: int, trials: int = 300):
    wins = 0
    for seed in range(trials):
        m = external_match(seed=seed, spawn_seed=seed)
        place(m, 0, 5, 5)
        place(m, 1, 6, 6)
        m.agents.inv[1] = [9, 6, 3, 3, 1]
        m.agents.shelter[1] = shelter
        m.agents.tool[0] = tool
        total = m.agents.inv.sum(axis=0).copy()
        sat = int(m.agents.satiety[0])
        m.submit({0: [{"action": "raid", "target": 1}]})
        ev = [e for e in [last_event(m, 0)]][0]
        assert (m.agents.inv.sum(axis=0) == total).all()  # goods move, never appear or vanish
        lost = sat - int(m.agents.satiety[0]) - W["hunger_per_tick"]
        if ev["f"] == 1:
            wins += 1
            assert list(m.agents.inv[0]) == [3, 2, 3 + 1, 1, 0]
            assert lost == W["raid_effort_satiety"]
        else:
            assert list(m.agents.inv[1]) == [9, 6, 3, 3, 1]
            assert lost == W["raid_effort_satiety"] + W["raid_fail_satiety"]
    return wins / trials


def test_raids_succeed_or_fail_and_shelters_and_tools_move_the_odds():
    plain = _raid_outcomes(shelter=0, tool=0)
    sheltered = _raid_outcomes(shelter=1, tool=0)
    armed = _raid_outcomes(shelter=0, tool=1)
    assert 0.4 < plain < 0.6
    assert sheltered < plain - 0.12
    assert armed > plain + 0.07


def test_gather_takes_from_pool_and_pool_regrows_to_its_cap(ext2):
    m = ext2
    x, y = 5, 5
    place(m, 0, x, y)
    place(m, 1, 20, 20)
    m.world.terrain[y, x] = FOREST
    cap = rules.RESOURCE_TABLE["wood"]["max"]
    regen = rules.RESOURCE_TABLE["wood"]["regen"]
    m.world.cap[y, x], m.world.regen[y, x], m.world.pool[y, x], m.world.touched[y, x] = cap, regen, cap, 0
    m.submit({0: [{"action": "gather"}, {"action": "gather"}]})
    assert m.agents.inv[0, WOOD] == 2
    assert pool_at(m.tables.tiles, x, y, 0) == pytest.approx(cap - 2)
    assert pool_at(m.tables.tiles, x, y, 10) == pytest.approx(cap - 2 + 10 * regen)
    assert pool_at(m.tables.tiles, x, y, 100000) == cap  # never above the pool size


def test_tool_adds_to_each_gather(ext2):
    m = ext2
    place(m, 0, 5, 5)
    m.world.terrain[5, 5] = FOREST
    m.world.cap[5, 5] = m.world.pool[5, 5] = 6.0
    m.agents.tool[0] = 1
    m.submit({0: [{"action": "gather"}]})
    assert m.agents.inv[0, WOOD] == W["gather_yield"] + W["tool_gather_bonus"]


@pytest.mark.parametrize("field", ["max", "regen"])
def test_multiplier_zero_removes_pool_or_growth(field):
    m = external_match(resources={"food": {field: 0}}, ticks=200)
    food_tiles = m.world.terrain == BERRIES
    assert food_tiles.any()
    if field == "max":
        assert (m.world.cap[food_tiles] == 0).all() and (m.world.pool[food_tiles] == 0).all()
    else:
        assert (m.world.regen[food_tiles] == 0).all() and (m.world.cap[food_tiles] > 0).all()
        y, x = np.argwhere(food_tiles)[0]
        place(m, 0, x, y)
        m.world.terrain[y, x] = BERRIES
        for _ in range(int(rules.RESOURCE_TABLE["food"]["max"])):
            m.submit({0: [{"action": "gather"}]})
        for _ in range(50):
            m.submit({})
        assert pool_at(m.tables.tiles, x, y, m.tick) == 0
        m.submit({0: [{"action": "gather"}]})
        assert rules.REASONS[last_event(m, 0)["reason"]] == "nothing_here"


def test_multipliers_scale_the_base_definition():
    m = external_match(resources={"stone": {"max": 2.5, "regen": 0.5}})
    rock = m.world.terrain == 2
    assert np.allclose(m.world.cap[rock], 2.5 * rules.RESOURCE_TABLE["stone"]["max"])
    assert np.allclose(m.world.regen[rock], 0.5 * rules.RESOURCE_TABLE["stone"]["regen"])


def test_build_and_craft_consume_materials_once(ext2):
    m = ext2
    place(m, 0, 5, 5)
    m.agents.inv[0, WOOD], m.agents.inv[0, STONE], m.agents.inv[0, ORE] = 20, 20, 20
    m.submit({0: [{"action": "build"}, {"action": "craft"}]})
    m.submit({0: [{"action": "build"}, {"action": "craft"}]})
    assert m.agents.shelter[0] == 1 and m.agents.tool[0] == 1
    shelter, tool = rules.RECIPES["shelter"]["uses"], rules.RECIPES["tool"]["uses"]
    assert m.agents.inv[0, WOOD] == 20 - shelter["wood"] - tool["wood"]
    assert m.agents.inv[0, STONE] == 20 - shelter["stone"] - tool["stone"]
    assert m.agents.inv[0, ORE] == 20 - tool["ore"]
    assert rules.REASONS[last_event(m, 0)["reason"]] == "already_owned"


def test_say_reaches_others_in_their_next_observation(ext2):
    m = ext2
    m.submit({0: [{"action": "say", "text": "trade wood?"}]})
    obs = m.observe(1)
    assert obs["messages"] == [{"from": 0, "text": "trade wood?"}]
    assert m.observe(0)["messages"] == []


@pytest.mark.parametrize("limit", [W["say_max_chars"], 5])
def test_say_is_cut_at_the_tables_limit(ext2, monkeypatch, limit):
    monkeypatch.setitem(W, "say_max_chars", limit)
    ext2.submit({0: [{"action": "say", "text": "y" * 400}]})
    assert ext2.observe(1)["messages"] == [{"from": 0, "text": "y" * limit}]


@pytest.mark.parametrize("action,reason", [
    ({"action": "say", "text": "hi", "to": 2**32 + 1}, "bad_arguments"),  # would alias agent 1 in int32
    ({"action": "raid", "target": 2**70}, "bad_arguments"),
    ({"action": ["move"]}, "unknown_action"),
    ({"action": {"name": "move"}}, "unknown_action"),
])
def test_model_replies_out_of_range_or_of_the_wrong_type_are_refused_and_replay_the_same(ext2, action, reason):
    from engine import events
    from engine.replay import replay

    m = ext2
    m.submit({0: [action, {"action": "wait"}]})
    ev = [e for e in [last_event(m, 0)]]
    rows = m.columns()
    first = np.nonzero(rows["agent"] == 0)[0]
    kinds = [(int(rows["kind"][r]), int(rows["ok"][r]), rules.REASONS[rows["reason"][r]]) for r in first[1:]]
    assert kinds[0][1] == 0 and kinds[0][2] == reason and ev
    m.finish("cancelled")
    assert events.equal(m.columns(), replay(m.config, m.columns()).columns())


def test_empty_slots_do_not_shift_actions_against_a_replay(ext2):
    from engine import events
    from engine.actions import EMPTY_ROW, encode
    from engine.replay import replay

    m = ext2
    m.submit({0: [EMPTY_ROW.copy(), encode({"action": "move", "direction": "east"}, m.messages)],
              1: [{"action": "move", "direction": "west"}]})
    m.finish("cancelled")
    assert events.equal(m.columns(), replay(m.config, m.columns()).columns())
