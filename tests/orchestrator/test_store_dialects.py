"""The statements the two databases spell differently, run on each with the same rows and the same
answers expected: usage sums walked from the rosters (an earlier version's Infinity read as null), a
series' spend and held money, runs claimed past a skip list with their metered turns settled, graded
decisions read by label, regret and accuracy, and the doctor's scan of stored infinities."""
from __future__ import annotations

import json
import math


from orchestrator.records.roster import Seat
from orchestrator.store import grading, repairs, runs, series

JAN_2026_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
FEB_2026_MS = 1_769_904_000_000  # 2026-02-01T00:00:00Z



def _seat(seat: int, model: str, funding: str, usd, turns: int, tokens: tuple[int, int]) -> Seat:
    return Seat(seat=seat, name=f"s{seat}", model=model, provider="openai", funding=funding, format="json",
                scaffold="", usage={"usd": usd, "agent_turns": turns, "input_tokens": tokens[0],
                                    "output_tokens": tokens[1]})


def _run(c, run_id: str, roster: list[Seat], *, batch: str | None = None, created_ms: int = JAN_2026_MS,
         cap_usd: float | None = None, scripted: bool = False) -> None:
    runs.add(c, id=run_id, account_id="acc", launch_id="l_" + run_id, batch_id=batch, trial=0, name=run_id,
             scenario_id="svc:x", scenario_hash="h", scripted=scripted, effective={}, roster=roster,
             cap_usd=cap_usd, turns_reserved=7, created_at_ms=created_ms, grading=None, grading_status=None)


def _account(c) -> None:
    c.execute("INSERT INTO accounts (id, email, handle, plan, created_at_ms) VALUES ('acc', 'a@x', 'a', 'lab', 0)")


def test_usage_sums_by_run_and_by_model(store):
    from orchestrator.store import usage

    with store.write() as c:
        _account(c)
        _run(c, "run_a", [_seat(0, "m1", "account", 0.5, 3, (10, 20)), _seat(1, "m2", "platform", 0.25, 2, (1, 2))])
        _run(c, "run_b", [_seat(0, "m1", "account", 1.0, 4, (5, 5))], created_ms=FEB_2026_MS)
        _run(c, "run_c", [_seat(0, "m1", "account", 0.0, 0, (0, 0))])
        # what json.dumps wrote for an infinite usage in an earlier version: read as null, counted as 0
        c.execute("UPDATE runs SET roster = ? WHERE id = 'run_c'",
                  ('[{"seat": 0, "model": "m1", "provider": "openai", "funding": "account", '
                   '"usage": {"usd": Infinity, "agent_turns": 1, "input_tokens": 0, "output_tokens": 0}}]',))
    by_run = {r.run_id: r for r in usage.by_run(store.conn(), "acc")}
    assert [r.run_id for r in usage.by_run(store.conn(), "acc")] == ["run_c", "run_b", "run_a"]
    a, b, bad = by_run["run_a"], by_run["run_b"], by_run["run_c"]
    assert (a.month, a.account_usd, a.platform_usd, a.agent_turns, a.intact) == ("2026-01", 0.5, 0.25, 7, True)
    assert (b.month, b.account_usd, b.platform_usd) == ("2026-02", 1.0, 0.0)
    assert (bad.account_usd, bad.intact) == (0.0, False)
    models = {(m.month, m.model, m.funding): m for m in usage.by_model(store.conn(), "acc")}
    jan = models[("2026-01", "m1", "account")]
    assert (jan.agent_turns, jan.input_tokens, jan.output_tokens, jan.usd) == (4, 10, 20, 0.5)
    assert models[("2026-01", "m2", "platform")].usd == 0.25 and models[("2026-02", "m1", "account")].usd == 1.0
    assert all(isinstance(m.usd, float) for m in models.values())


def test_a_series_spend_held_money_and_budget_caps(store):
    with store.write() as c:
        _account(c)
        runs.add_series(c, "bat_1", "acc", 4, "fixed", 1, 0)
        for i, cap in enumerate((1.0, 0.2, None, 5.0)):
            _run(c, f"run_{i}", [], batch="bat_1", cap_usd=cap)
        c.execute("UPDATE runs SET status = 'running', spend_usd = 0.25 WHERE id IN ('run_0', 'run_1')")
        c.execute("UPDATE runs SET status = 'finished', spend_usd = 0.5 WHERE id = 'run_2'")
    got = series.spending(store.conn(), "bat_1")
    # run_0 may spend 0.75 more; run_1 spent past its cap holds nothing; one trial still waits
    assert (got.spent, got.held, got.playing, got.queued) == (1.0, 0.75, 2, 1)
    assert series.spending(store.conn(), "bat_1", leaving=["run_0"]).held == 0
    with store.write() as c:
        series.record_stopping(c, "bat_1", None, 2.0, 0.1, False)
    caps = {r[0]: r[1] for r in store.all("SELECT id, cap_usd FROM runs ORDER BY id")}
    # no trial's cap above the budget; a trial without a cap keeps none
    assert caps == {"run_0": 1.0, "run_1": 0.2, "run_2": None, "run_3": 2.0}
    with store.write() as c:
        c.execute("UPDATE runs SET status = 'cancelled', stop_reason = 'cancelled' WHERE id = 'run_3'")
    seen = series.runs_of(store.conn(), "bat_1")  # what a read of the series sums (a batch's GET)
    assert (sorted(seen.ids), seen.spent_usd, seen.cancelled) == (["run_0", "run_1", "run_2", "run_3"], 1.0, 1)


def test_claims_skip_what_they_are_told_and_an_end_settles_the_metered_turns(store):
    with store.write() as c:
        _account(c)
        for i in range(4):
            _run(c, f"run_{i}", [_seat(0, "m", "account", 0.0, 0, (0, 0)), _seat(1, "m", "account", 0.0, 0, (0, 0))])
        claimed = runs.claim(c, ("queued",), "launching", False, 2, skip=("run_0",))
    assert [r.id for r in claimed] == ["run_1", "run_2"]
    roster = [_seat(0, "m", "account", 0.1, 3, (0, 0)), _seat(1, "m", "account", 0.1, 2, (0, 0))]
    with store.write() as c:
        assert runs.move(c, "run_1", ("launching",), {"status": "running", "roster": roster,
                                                      "live_tick": runs.at_least("live_tick", 5)})
        assert runs.move(c, "run_1", ("running",), {"live_tick": runs.at_least("live_tick", 3)})
        assert runs.move(c, "run_1", ("running",), {"status": "finished", "turns_settled": runs.METERED_TURNS,
                                                    "finished_at_ms": 9})
        assert not runs.move(c, "run_1", ("running",), {"status": "failed"})
    row = store.one("SELECT status, live_tick, turns_settled FROM runs WHERE id = 'run_1'")
    assert (row["status"], row["live_tick"], row["turns_settled"]) == ("finished", 5, 5)
    assert isinstance(row["turns_settled"], int)


def _decision(tick: int, seat: int, regret: float, label: str | None = None, accuracy: float | None = None) -> dict:
    return {"tick": tick, "seat": seat, "chosen": "a", "value": 1.0, "best": "b", "best_value": 1.0 + regret,
            "regret": regret, "accuracy": accuracy, "label": label}


def test_graded_decisions_read_by_label_regret_and_accuracy(store):
    with store.write() as c:
        _account(c)
        _run(c, "run_g", [_seat(0, "m", "account", 0.0, 0, (0, 0)).model_copy(update={"name": "north"}),
                          _seat(1, "m", "account", 0.0, 0, (0, 0)).model_copy(update={"name": "south"})])
        c.execute("UPDATE runs SET match_id = 'm_g', grading_status = 'running', grading_starts = 2 WHERE id = 'run_g'")
        grading.add(c, "run_g", [_decision(1, 0, 0.0), _decision(2, 0, 0.5, "mistake"), _decision(1, 1, 0.25)])
        grading.set_summaries(c, "run_g", {0: {"accuracy": 0.75}, 1: {"accuracy": 1}, 2: None})
        assert grading.restart(c, ("running",), "pending") == 1
    assert [(d.tick, d.seat, d.label) for d in grading.labelled(store.conn(), "run_g")] == [(2, 0, "mistake")]
    seats = grading.seats(store.conn(), "run_g")
    assert [(s.seat, s.name, s.regret) for s in seats] == [(0, "north", [(1, 0.0), (2, 0.5)]), (1, "south", [(1, 0.25)])]
    assert sorted(grading.accuracies(store.conn(), ["m_g"])) == [("m_g", 0, 0.75), ("m_g", 1, 1)]
    assert tuple(store.one("SELECT grading_status, grading_starts FROM runs")) == ("pending", 1)


def test_the_doctor_finds_infinities_in_every_money_column(store):
    with store.write() as c:
        _account(c)
        _run(c, "run_i", [_seat(0, "m", "account", 0.0, 0, (0, 0))], cap_usd=1.0)
        c.execute("UPDATE runs SET cap_usd = ? WHERE id = 'run_i'", (math.inf,))
        c.execute("INSERT INTO provider_keys (owner, provider, ciphertext, balance_usd, created_at_ms) "
                  "VALUES ('acc', 'openai', ?, ?, 0)", (b"x", math.inf))
    found = {(f.where, f.what) for f in repairs.findings(store.conn())}
    assert found == {("runs run_i", "cap_usd"), ("provider_keys acc/openai", "balance_usd")}
    with store.write() as c:
        repairs.repair(c)
    assert repairs.findings(store.conn()) == []
    assert store.one("SELECT balance_usd FROM provider_keys")[0] is None
    assert json.loads(store.one("SELECT roster FROM runs")[0])[0]["usage"]["usd"] == 0.0
