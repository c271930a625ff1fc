"""Turns and grading behind their repositories (orchestrator.store.turns, orchestrator.store.grading): the
one reply encoding and its decoder, round trips through a real store, and records that refuse what
the rules would."""
from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from orchestrator.grading import read, states
from orchestrator.records.grading import Decision, OpenGrading
from orchestrator.records.turn import Call, RecordedTurn, Said
from orchestrator.runs import lifecycle, service
from orchestrator.seats import keys
from orchestrator.seats.player import raw_reply
from orchestrator.seats.reply import Reply
from orchestrator.store import grading, turns


def _run(core, principal) -> str:
    p, email, _ = principal()
    keys.set_key(core, provider="router", key="k-router", email=email, base_url="https://openrouter.ai/api/v1")
    run_id = service.launch(core, p, {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": [
        {"model": "openai/gpt-4o-mini"}, {"model": "local/random", "name": "Rand"}]})["run"]["run_id"]
    with core.store.write() as c:
        assert len(lifecycle.claim(c, False, 1)) == 1  # launching, as a dispatcher claims it
    return run_id


@pytest.mark.parametrize("reply", [
    Reply(text="I gather wood"),
    Reply([("gather", {"resource": "wood"}, "c1")]),
    Reply([("move", '{"direction": "north"}', "c1"), ("eat", {}, "c2")], "first north, then eat"),
])
def test_a_reply_is_stored_one_way_and_read_back_as_it_came(reply):
    stored = raw_reply(reply)
    said = Said.decode(stored)
    assert said.text == reply.text
    assert [(c.name, c.arguments) for c in said.calls] == [(n, a) for n, a, _ in reply.calls]
    assert Said.decode(said.encode()) == said


def test_the_decoder_reads_what_earlier_versions_wrote_and_leaves_text_alone():
    # an arena seat's calls as earlier versions kept them
    assert Said.decode('move({"move": "e2e4"})').calls == (Call(name="move", arguments={"move": "e2e4"}),)
    assert [c.arguments for c in Said.decode('move({"move": "4"})move({"move": "5"})').calls] == [
        {"move": "4"}, {"move": "5"}]
    # text that only looks like it, a json-format seat's object, an agent's body: text
    for text in ("move(e4)", "move({\"move\": \"e4\"}) please", '{"action": "gather"}', "[1, 2]", "e4"):
        assert Said.decode(text) == Said(text=text)
    calls = json.dumps([{"name": "gather", "arguments": {}}])
    assert Said.decode(calls, calls=False) == Said(text=calls)  # a seat without tools wrote it as text
    assert Said.decode(None) == Said() and Said.decode("") == Said()


def test_recorded_turns_round_trip_and_replay_with_the_roster_totals(core, principal):
    run_id = _run(core, principal)
    row = {"tick": 0, "seat": 0, "reply": "wait", "actions": "[]", "refused": [], "latency_ms": 1.0}
    report = {"usage": {"agent_turns": 1, "input_tokens": 10, "output_tokens": 2, "usd": 0.001},
              "turns": {"answered": 1, "invalid": 0, "timed_out": 0, "provider_errors": 0, "retries": 0}}
    with core.store.write() as c:
        assert lifecycle.recorded(c, run_id, 0, 0, row, [{"act": {"action": "wait"}}], {"m": 1}, report)
        turns.add(c, run_id, 1, 0, dict(row, tick=1), [{"wait": "timeout"}], None)
        turns.add(c, run_id, 1, 0, dict(row, tick=1, reply="again"), [{"wait": "timeout"}], None)  # a retry
    c = core.store.conn()
    got = turns.recorded(c, run_id)
    assert [(t.tick, t.seat, t.play, t.memory) for t in got] == [
        (0, 0, [{"act": {"action": "wait"}}], {"m": 1}), (1, 0, [{"wait": "timeout"}], None)]
    assert got[1].turn["reply"] == "again" and turns.transcript(c, run_id)[1]["reply"] == "again"
    replay = turns.replay(c, run_id).plain()
    assert [t["tick"] for t in replay["turns"]] == [0, 1] and replay["seats"] == {0: report}
    assert turns.kept(c, run_id)
    with core.store.write() as w:
        turns.forget(w, [run_id])
    assert not turns.kept(c, run_id) and turns.replay(c, "run_none").plain()["turns"] == []


def test_an_arena_transcript_kept_numbers_the_asks_and_infinity_reads_as_null(core, principal):
    run_id = _run(core, principal)
    rows = [{"tick": 0, "seat": 0, "reply": "a"}, {"tick": 0, "seat": 0, "reply": "b"}, {"tick": 1, "seat": 0}]
    with core.store.write() as c:
        turns.keep(c, run_id, rows)
        c.execute("UPDATE run_turns SET turn = ? WHERE run_id = ? AND tick = 1",
                  ('{"tick": 1, "seat": 0, "latency_ms": Infinity}', run_id))
    kept = turns.transcript(core.store.conn(), run_id)
    assert [t.get("reply") for t in kept] == ["a", "b", None] and kept[2]["latency_ms"] is None


def test_records_refuse_what_the_rules_would():
    with pytest.raises(ValidationError):
        RecordedTurn(tick=-1, seat=0, turn={}, play=[])
    with pytest.raises(ValidationError):
        Decision(tick=1, seat=0, regret=float("inf"))
    with pytest.raises(ValidationError):
        OpenGrading(run_id="r", account_id="a", status="done", match_id=None, batch_id=None, scored=True, starts=0)
    with pytest.raises(ValidationError):
        Said(text="x", extra=1)


def _decision(tick: int, seat: int, regret: float, label=None) -> dict:
    return {"tick": tick, "seat": seat, "chosen": [{"action": "wait"}], "value": 1.0, "best": [{"action": "gather"}],
            "best_value": 1.0 + regret, "regret": regret, "accuracy": 90.0, "label": label, "blind_regret": 0.5}


def test_grading_round_trip_through_its_repository(core, principal):
    run_id = _run(core, principal)
    c = core.store.conn()
    with core.store.write() as w:
        w.execute("UPDATE runs SET grading_status = 'pending', status = 'finished', match_id = 'm_1', "
                  "results = ? WHERE id = ?", (json.dumps({"agents": [{"seat": 0}, {"seat": 1}]}), run_id))
    (pending,) = grading.open_of_ended(c, ("finished",))
    assert (pending.run_id, pending.scored, pending.plan.mode, pending.plan.fork_tick) == (run_id, True, "auto", 0)
    assert [s.model for s in pending.plan.roster] == ["openai/gpt-4o-mini", "local/random"]
    with core.store.write() as w:
        assert states.move(w, "start", run_id, started=True) and not states.move(w, "start", run_id)
        assert states.move(w, "counted", run_id, total=3, graded=0)
        grading.add(w, run_id, [_decision(0, 0, 0.1), _decision(0, 1, 2.0, "blunder"), _decision(1, 1, 0.8, "mistake")])
        assert states.move(w, "part", run_id, recount=True)
    assert grading.graded_keys(c, run_id) == {(0, 0), (0, 1), (1, 1)} and grading.starts(c, run_id) == 1
    page = grading.page(c, run_id, seat=1, limit=1, offset=1)
    assert [(d.tick, d.seat) for d in page] == [(1, 1)] and "blind_regret" not in page[0].published()
    assert [(m["tick"], m["label"]) for m in read.marked(core, run_id)] == [(0, "blunder"), (1, "mistake")]
    assert set(read.labels(core, run_id, [(1, 1), (0, 0)])) == {(1, 1), (0, 0)}
    with core.store.write() as w:
        summaries = {0: {"graded": 1, "accuracy": 99.0}, 1: {"graded": 2, "accuracy": 50.0}}
        grading.set_summaries(w, run_id, summaries)
        grading.results_gain(w, run_id, summaries)
        assert states.move(w, "done", run_id, recount=True)
    row = core.store.one("SELECT grading_status, graded, grading_total, results FROM runs WHERE id = ?", (run_id,))
    assert (row["grading_status"], row["graded"], row["grading_total"]) == ("done", 3, 3)
    assert [a["decisions"]["accuracy"] for a in json.loads(row["results"])["agents"]] == [99.0, 50.0]
    assert [(s.name, s.summary["accuracy"], s.regret) for s in grading.seats(c, run_id)] == [
        ("gpt-4o-mini", 99.0, [(0, 0.1)]), ("Rand", 50.0, [(0, 2.0), (1, 0.8)])]
    table = read.graded_seats(core, ["m_1", "m_none"])
    assert table.to_pylist() == [{"match_id": "m_1", "seat": 0, "accuracy": 99.0},
                                 {"match_id": "m_1", "seat": 1, "accuracy": 50.0}]
