"""world-rollouts-1 on small matches: the decisions it grades, the rows it writes, its determinism,
grading in parts, and the sanity of its verdicts (docs/RUBRIC.md, Decision grading)."""
import pytest

from analytics.grading import GRADER, TURN_FIELDS, decisions_of, grade_match, merge, published
from analytics.grading.scale import BLUNDER, INACCURACY, MISTAKE, accuracy, label, seat_accuracy
from tests.grading.conftest import POLICY_SEATS, archived, new_match

ROW_FIELDS = [*TURN_FIELDS, "blind_regret"]
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
        assert list(t) == ROW_FIELDS and list(published(t)) == list(TURN_FIELDS)
        assert t["regret"] >= 0 and t["best_value"] >= t["value"] and t["blind_regret"] >= 0
        assert t["regret"] == pytest.approx(t["best_value"] - t["value"], abs=2e-3)
        assert t["label"] == label(t["regret"]) and t["accuracy"] == pytest.approx(accuracy(t["regret"]), abs=0.01)
        assert t["chosen"] and all("action" in a for a in t["chosen"] + t["best"])
    for seat in (0, 3):
        s = g["seats"][seat]
        assert list(s) == SUMMARY_FIELDS and s["graded"] == 40
        mine = [t for t in g["turns"] if t["seat"] == seat]
        assert s["blunders"] == sum(t["label"] == "blunder" for t in mine)
        blind = sum(t["blind_regret"] for t in mine)
        assert s["accuracy"] == pytest.approx(100 * blind / (blind + sum(t["regret"] for t in mine)), abs=0.01)


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


def test_a_seats_accuracy_compares_its_losses_with_blind_picks():
    row = {"regret": 0.0, "blind_regret": 0.0, "accuracy": 100.0}
    assert seat_accuracy([row] * 5) == 100  # no decision could lose anything
    # losing what blind picks would have lost is 50, whatever the scale of the decisions
    even = [{"regret": 0.5, "blind_regret": 0.5, "accuracy": accuracy(0.5)}] * 10
    assert seat_accuracy(even) == 50 and seat_accuracy([{**t, "regret": 0} for t in even]) == 100
    # many turns where little could be lost do not hide the one that cost most of what was to lose
    trivial = [{"regret": 0.01, "blind_regret": 0.02, "accuracy": accuracy(0.01)}] * 99
    costly = {"regret": 3.0, "blind_regret": 1.0, "accuracy": accuracy(3.0)}
    plain = sum(t["accuracy"] for t in [*trivial, costly]) / 100
    assert seat_accuracy([*trivial, costly]) == pytest.approx(100 * 2.98 / (2.98 + 3.99))
    assert seat_accuracy([*trivial, costly]) < 50 < plain
    assert seat_accuracy([{"regret": 0.3, "accuracy": accuracy(0.3)}]) == accuracy(0.3)  # a row from before


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


def test_a_hungry_wait_near_death_is_a_mistake():
    # the seat that waits among the four policies (benchmarks/grading_validation.py's waiter, seed 500):
    # at tick 70 it holds 3 food at health 45 and satiety 0. Graded with the greedy-harvester
    # continuation from the next tick on, a meal there moved where the seat walked next, and the
    # wait was valued above the meal (regret 0). Its own next turns are waits, and the rollouts now
    # play them first: the wait costs health the meal would have kept (docs/RUBRIC.md).
    m = new_match(500, 120, seats=["test/waiter", *POLICY_SEATS], spawn_seed=500 + 7919)
    while not m.done:
        if m.tick == 70:
            assert (m.agents.health[0], m.agents.satiety[0], int(table_food(m))) == (45, 0, 3)
        m.submit({0: [{"action": "wait"}]} if m.agents.alive[0] == 1 else {})
    g = grade_match(archived(m), None, [0], decisions=[(70, 0)])
    (turn,) = g["turns"]
    assert turn["chosen"] == [{"action": "wait"}] and {a["action"] for a in turn["best"]} == {"eat"}
    assert turn["label"] in ("mistake", "blunder"), turn


def table_food(m) -> int:
    from engine.rules import RESOURCES

    return m.agents.inv[0, RESOURCES.index("food")]
