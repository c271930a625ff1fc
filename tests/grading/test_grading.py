"""world-rollouts-1 on small matches: the decisions it grades, the rows it writes, its determinism,
grading in parts, and the sanity of its verdicts (docs/RUBRIC.md, Decision grading)."""
import pytest

from analytics.grading import GRADER, decisions_of, grade_match, merge
from analytics.grading.scale import BLUNDER, INACCURACY, MISTAKE, accuracy, label
from tests.grading.conftest import archived, new_match

TURN_FIELDS = ["tick", "seat", "chosen", "value", "best", "best_value", "regret", "accuracy", "label"]
SUMMARY_FIELDS = ["grader", "graded", "accuracy", "mean_regret", "inaccuracies", "mistakes", "blunders"]


@pytest.fixture(scope="module")
def graded():
    m = new_match(51, 40)
    m.run()
    table = archived(m)
    return table, grade_match(table, None, [0, 3], horizon=8, rollouts=4)


def test_every_turn_of_a_living_seat_is_a_decision():
    m = new_match(52, 170, resources={"food": {"max": 0, "regen": 0}})  # no berries: seats starve
    m.run()
    table = archived(m)
    died = {i: int(m.agents.death_tick[i]) for i in range(4) if m.agents.alive[i] == 0}
    assert died
    found = decisions_of(table, [0, 1, 2, 3])
    for seat in range(4):
        ticks = [t for t, s in found if s == seat]
        assert ticks == list(range(died.get(seat, 169) + 1))


def test_rows_and_summaries_are_the_contracts(graded):
    table, g = graded
    assert g["grader"] == GRADER and g["horizon_ticks"] == 8 and g["rollouts"] == 4
    assert len(g["turns"]) == 80
    for t in g["turns"]:
        assert list(t) == TURN_FIELDS
        assert t["regret"] >= 0 and t["best_value"] >= t["value"]
        assert t["regret"] == pytest.approx(t["best_value"] - t["value"], abs=2e-3)
        assert t["label"] == label(t["regret"]) and t["accuracy"] == pytest.approx(accuracy(t["regret"]), abs=0.01)
        assert t["chosen"] and all("action" in a for a in t["chosen"] + t["best"])
    for seat in (0, 3):
        s = g["seats"][seat]
        assert list(s) == SUMMARY_FIELDS and s["graded"] == 40
        mine = [t for t in g["turns"] if t["seat"] == seat]
        assert s["blunders"] == sum(t["label"] == "blunder" for t in mine)
        assert s["accuracy"] == pytest.approx(sum(t["accuracy"] for t in mine) / 40, abs=0.01)


def test_same_run_same_grades_and_parts_merge_to_the_whole(graded):
    table, g = graded
    assert grade_match(table, None, [0, 3], horizon=8, rollouts=4) == g
    todo = decisions_of(table, [0, 3])
    parts = [grade_match(table, None, [0, 3], decisions=todo[k::3], horizon=8, rollouts=4) for k in range(3)]
    assert merge(parts, [0, 3]) == g
    other = grade_match(table, None, [0, 3], rollout_seed=7, horizon=8, rollouts=4)
    assert [t["value"] for t in other["turns"]] != [t["value"] for t in g["turns"]]


def test_labels_follow_the_thresholds():
    assert label(0.0) is None and label(INACCURACY - 1e-9) is None
    assert label(INACCURACY) == "inaccuracy" and label(MISTAKE) == "mistake" and label(BLUNDER) == "blunder"
    assert accuracy(0) == 100 and accuracy(MISTAKE) > accuracy(BLUNDER) > 0


def waiting_seat(seed: int, ticks: int):
    """A seat played from outside that holds its food and only ever waits; the ticks its health fell."""
    m = new_match(seed, ticks, seats=["test/waiter", "local/honest-trader"])
    fell = []
    while not m.done:
        health = int(m.agents.health[0])
        alive = m.agents.alive[0] == 1
        m.submit({0: [{"action": "wait"}]} if alive else {})
        if alive and m.agents.health[0] < health:
            fell.append(m.tick - 1)
    return archived(m), fell


def test_waiting_while_health_falls_from_hunger_is_a_mistake_or_worse():
    for seed in (53, 54):
        table, fell = waiting_seat(seed, 90)
        assert len(fell) >= 15 and int(table_inventory_food(table)) > 0
        g = grade_match(table, None, [0])
        labels = {t["tick"]: t["label"] for t in g["turns"]}
        # Every hungry wait: the lost health is still missing where the rollouts stop, the seat fed by
        # the greedy-harvester continuation from the next tick on (docs/RUBRIC.md, Decision grading)
        assert all(labels[t] in ("mistake", "blunder") for t in fell), [labels[t] for t in fell]
        assert labels[fell[-1]] == "blunder"  # the wait it starved on


def table_inventory_food(table) -> int:
    from analytics.archive.format import event_columns
    from engine.kernels.codes import STOCK

    cols = event_columns(table)
    row = [r for r in range(len(cols["kind"])) if cols["kind"][r] == STOCK and cols["agent"][r] == 0][0]
    return cols["c"][row]
