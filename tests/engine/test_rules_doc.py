"""engine/RULES.md is the rules document rendered from the tables, and it is current."""
import re

from engine import rules, rules_doc
from engine.actions import ACTION_SPECS


def test_committed_rules_md_is_the_rendered_text():
    committed = rules_doc.PATH.read_text(encoding="utf-8")
    assert committed == rules_doc.render(), "engine/RULES.md is stale: run python -m engine.rules_doc"


def test_rules_md_has_no_placeholders_left():
    assert not re.search(r"[{}]", rules_doc.PATH.read_text(encoding="utf-8"))


def test_seats_read_the_same_text():
    assert rules_doc.rules_text() == rules_doc.render()


def test_every_number_comes_from_the_tables(monkeypatch):
    """Change a number in a table and the document follows."""
    monkeypatch.setitem(rules.WORLD, "say_max_chars", 123)
    monkeypatch.setitem(rules.WORLD, "offer_ttl", 17)
    monkeypatch.setitem(rules.RECIPES["tool"]["uses"], "ore", 7)
    text = " ".join(rules_doc.render().split())  # the file wraps long lines anywhere
    assert "At most 123 characters" in text and "lapses after 17 ticks" in text
    assert rules.uses_text("tool") == "2 wood, 1 stone and 7 ore"
    for name in ACTION_SPECS:
        assert f"- {name}" in text


def test_action_texts_models_read_carry_the_table_numbers():
    W = rules.WORLD
    gather, _ = ACTION_SPECS["gather"]
    assert f"{W['gather_yield'] + W['tool_gather_bonus']} with a tool" in gather
    assert f"from {rules.uses_text('shelter')}" in ACTION_SPECS["build"][0]
    assert f"from {rules.uses_text('tool')}" in ACTION_SPECS["craft"][0]
    assert str(W["tool_gather_bonus"]) in ACTION_SPECS["craft"][0]
    assert f"at most {W['say_max_chars']} characters" in ACTION_SPECS["say"][1][0][2]


def test_rubric_md_states_the_rubrics_own_numbers():
    """docs/RUBRIC.md is prose, but its version, weights, grades and item values are the tables'."""
    from pathlib import Path

    from engine import rubric

    text = (Path(__file__).parents[2] / "docs" / "RUBRIC.md").read_text(encoding="utf-8")
    assert text.startswith(f"# The rubric: {rubric.RUBRIC_VERSION}\n")
    text = " ".join(text.split())  # prose wraps anywhere
    weights = " + ".join(f"{w:.2f} {d}" for d, w in rubric.WEIGHTS.items())
    assert f"fitness_index = {weights}." in text
    assert ", ".join(f"{g} from {floor}" for floor, g in rubric.GRADES if floor > 0) + ", else F" in text
    values = " + ".join(f"{item} {row['value']:g}" for item, row in rules.RECIPES.items())
    assert f"goods at the rules' values + {values})" in text
    assert f"over the {len(rubric.ACHIEVEMENTS)} achievements {', '.join(rubric.ACHIEVEMENTS[:4])}" in text


def test_kernel_tables_are_derived_from_the_rules_tables():
    from engine.kernels.codes import ITEMS, N_RES, P_COST, P_ITEM_VALUE, P_PRICE, TERRAINS

    assert rules.TERRAIN_RES == (-1, 0, 1, 2, 3, 4, -1)
    for t, r in zip(TERRAINS, rules.TERRAIN_RES):
        assert (r < 0 and t in ("grass", "water")) or rules.RESOURCE_TABLE[rules.RESOURCES[r]]["terrain"] == t
    P = rules.param_array()
    assert P.size == P_ITEM_VALUE + len(ITEMS)
    for k, item in enumerate(ITEMS):
        assert P[P_ITEM_VALUE + k] == rules.RECIPES[item]["value"]
        for r, name in enumerate(rules.RESOURCES):
            assert P[P_COST + k * N_RES + r] == rules.RECIPES[item]["uses"].get(name, 0)
    assert [P[P_PRICE + r] for r in range(N_RES)] == [row["price"] for row in rules.RESOURCE_TABLE.values()]
