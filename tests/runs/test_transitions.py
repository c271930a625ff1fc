"""The guarded transitions of orchestrator.runs.lifecycle, on a real store."""
import logging
import threading
from collections import Counter
from pathlib import Path

import pytest

from orchestrator import statuses
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs import lifecycle
from orchestrator.store import runs
from tests.runs.conftest import CONFIG, account


def _core(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.toml").write_text(CONFIG)
    return Core.open(tmp_path / "data")


def _queued_run(core, tmp_path):
    from orchestrator.runs import service
    from orchestrator.auth import authenticate
    from tests.runs.conftest import local_body

    principal = authenticate(core, account(core))
    return service.launch(core, principal, local_body())["run"]["run_id"]


def _report(usd: float, agent_turns: int, answered: int) -> dict:
    """A seat's totals as its worker reports them (the roster's usage and turn counts, every field)."""
    return {"usage": {"agent_turns": agent_turns, "input_tokens": 0, "output_tokens": 0, "usd": usd},
            "turns": {"answered": answered, "invalid": 0, "timed_out": 0, "provider_errors": 0, "retries": 0}}


def _status(core, rid):
    return core.store.one("SELECT status FROM runs WHERE id = ?", (rid,))["status"]


def test_illegal_transitions_are_logged_no_ops(tmp_path, caplog):
    core = _core(tmp_path)
    rid = _queued_run(core, tmp_path)
    caplog.set_level(logging.INFO, logger="studio.lifecycle")
    with core.store.write() as c:
        assert lifecycle.began(c, rid, 1) is False  # queued runs cannot start before they are claimed
        assert lifecycle.fail(c, rid, "x", 1) is False
    assert _status(core, rid) == "queued" and "no transition to running from queued" in caplog.text
    with core.store.write() as c:
        assert [r.id for r in lifecycle.claim(c, True, 5)] == [rid]
        assert lifecycle.handed(c, rid, "m1") and lifecycle.began(c, rid, 5)
        assert lifecycle.cancel_queued(c, rid, 1) is False  # a running run is cancelled by its worker
        o = {"status": "finished", "stop_reason": "season_end", "results": None, "usage": [{"agent_turns": 3}],
             "spend_usd": 0.0, "match_ticks": 3, "error": None, "match_id": "m1", "started_at_ms": None}
        assert lifecycle.ended(c, rid, o, [], 1)
        assert lifecycle.ended(c, rid, o, [], 1) is False  # a replayed write changes nothing twice
        assert lifecycle.requeue(c, rid) is False
    row = core.store.one("SELECT * FROM runs WHERE id = ?", (rid,))
    assert row["status"] == "finished" and row["started_at_ms"] == 5 and row["turns_settled"] == 3


def test_lost_runs_requeue_scripted_and_unstarted_fail_playing_model_runs(tmp_path):
    core = _core(tmp_path)
    a, b, m1, m2 = (_queued_run(core, tmp_path) for _ in range(4))
    with core.store.write() as c:
        c.execute("UPDATE runs SET scripted = 0 WHERE id IN (?, ?)", (m1, m2))  # as if model seats
        lifecycle.claim(c, True, 5), lifecycle.claim(c, False, 5)
        for r in (a, m1):
            lifecycle.began(c, r, 1)
        lifecycle.ask_cancel(c, b)
        got = {r.id: lifecycle.lost(c, r, "gone", 1) for r in lifecycle.in_world(c)}
    assert got == {a: "queued", b: "cancelled", m1: "failed", m2: "queued"}
    assert [_status(core, r) for r in (a, b, m1, m2)] == ["queued", "cancelled", "failed", "queued"]


def test_a_lost_model_run_resumes_until_it_has_resumed_too_often(tmp_path):
    core = _core(tmp_path)
    rid = _queued_run(core, tmp_path)
    with core.store.write() as c:
        c.execute("UPDATE runs SET scripted = 0 WHERE id = ?", (rid,))
        assert lifecycle.recorded(c, rid, 0, 0, {"tick": 0}, [], None, _report(1.0, 1, 1)) is False  # queued
    went = []
    for k in range(lifecycle.MAX_RESUMES + 1):
        with core.store.write() as c:
            lifecycle.claim(c, False, 1)
            lifecycle.handed(c, rid, f"m{k}")
            lifecycle.began(c, rid, 1)
            assert lifecycle.recorded(c, rid, 0, 0, {"tick": 0}, [], None,
                                      _report(1.0, 1, 1))
            [row] = lifecycle.in_world(c, [rid])
            went.append(lifecycle.lost(c, row, "gone", 1, resumable=True))
    assert went == ["queued"] * lifecycle.MAX_RESUMES + ["failed"]
    row = core.store.one("SELECT * FROM runs WHERE id = ?", (rid,))
    assert row["resumes"] == lifecycle.MAX_RESUMES and row["spend_usd"] == 1.0
    assert [t.tick for t in lifecycle.turns_recorded(core.store.conn(), rid)] == [0]
    # a shutdown's stop is no fault: it does not count
    rid2 = _queued_run(core, tmp_path)
    with core.store.write() as c:
        c.execute("UPDATE runs SET scripted = 0 WHERE id = ?", (rid2,))
        lifecycle.claim(c, False, 1), lifecycle.handed(c, rid2, "n"), lifecycle.began(c, rid2, 1)
        [row] = lifecycle.in_world(c, [rid2])
        assert lifecycle.lost(c, row, "stop", 1, resumable=True, counted=False) == "queued"
    assert core.store.one("SELECT resumes FROM runs WHERE id = ?", (rid2,))["resumes"] == 0


def test_a_claim_for_a_chunk_takes_only_the_runs_of_the_series_named(tmp_path):
    from orchestrator.auth import authenticate
    from orchestrator.runs import service
    from tests.runs.conftest import local_body

    core = _core(tmp_path)
    principal = authenticate(core, account(core))
    first = service.launch(core, principal, local_body(trials=3))["batch"]
    single = service.launch(core, principal, local_body())["run"]["run_id"]
    second = service.launch(core, principal, local_body(trials=2))["batch"]
    with core.store.write() as c:
        got = lifecycle.claim(c, True, 10, (second["batch_id"],))
    assert [r.id for r in got] == second["run_ids"]  # oldest first, nothing of the others
    assert {_status(core, r) for r in first["run_ids"] + [single]} == {"queued"}
    with core.store.write() as c:
        assert [r.id for r in lifecycle.claim(c, True, 10)] == first["run_ids"] + [single]


def test_a_claim_never_takes_runs_of_a_held_series(tmp_path):
    from orchestrator.auth import authenticate
    from orchestrator.runs import service
    from tests.runs.conftest import local_body

    core = _core(tmp_path)
    principal = authenticate(core, account(core))
    held = service.launch(core, principal, local_body(trials=2))["batch"]
    single = service.launch(core, principal, local_body())["run"]["run_id"]
    with core.store.write() as c:
        assert [r.id for r in lifecycle.claim(c, True, 10, held=(held["batch_id"],))] == [single]
    assert {_status(core, r) for r in held["run_ids"]} == {"queued"}


# every transition of the table, called as its caller calls it
CALLS = {
    "claim": lambda c, rid: bool(lifecycle.claim(c, True, 5)),
    "handed": lambda c, rid: lifecycle.handed(c, rid, "m2"),
    "began": lambda c, rid: lifecycle.began(c, rid, 7),
    "tick": lambda c, rid: lifecycle.tick(c, rid, 3),
    "metered": lambda c, rid: lifecycle.metered(c, rid, 3, {0: _report(0.25, 3, 3)}),
    "recorded": lambda c, rid: lifecycle.recorded(c, rid, 2, 0, {"tick": 2, "seat": 0}, [{"wait": "timeout"}], None,
                                                  _report(0.5, 3, 2)),
    "resume": lambda c, rid: lifecycle.resume(c, rid),
    "ask_cancel": lambda c, rid: lifecycle.ask_cancel(c, rid),
    "requeue": lambda c, rid: lifecycle.requeue(c, rid),
    "ended": lambda c, rid: lifecycle.ended(c, rid, {
        "status": "finished", "stop_reason": "season_end", "results": None, "usage": [{"agent_turns": 3}],
        "spend_usd": 0.0, "match_ticks": 3, "error": None, "match_id": "m2", "started_at_ms": None}, [], 9),
    "fail": lambda c, rid: lifecycle.fail(c, rid, "x", 9),
    "cancel_queued": lambda c, rid: lifecycle.cancel_queued(c, rid, 9),
    "cancel_unplayed": lambda c, rid: lifecycle.cancel_unplayed(c, rid, 9),
    "series_stopped": lambda c, rid: lifecycle.series_stopped(c, rid, 9),
}


def _run_in(tmp_path, status: str):
    """A fresh data dir holding one run, brought to `status` by the lifecycle's own transitions."""
    core = _core(tmp_path)
    rid = _queued_run(core, tmp_path)
    with core.store.write() as c:
        if status == "cancelled":
            lifecycle.cancel_queued(c, rid, 1)
        elif status != "queued":
            assert lifecycle.claim(c, True, 1)
        if status in ("running", "finished", "failed"):
            assert lifecycle.handed(c, rid, "m1") and lifecycle.began(c, rid, 1)
        if status == "finished":
            CALLS["ended"](c, rid)
        if status == "failed":
            lifecycle.fail(c, rid, "gone", 1)
    assert _status(core, rid) == status
    return core, rid


def test_every_transition_of_the_table_has_a_function():
    assert set(CALLS) == set(lifecycle.TRANSITIONS)


@pytest.mark.parametrize("status", statuses.STATUSES)
@pytest.mark.parametrize("name", list(lifecycle.TRANSITIONS))
def test_each_transition_moves_exactly_the_runs_in_the_states_it_leaves(tmp_path, name, status):
    t = lifecycle.TRANSITIONS[name]
    core, rid = _run_in(tmp_path, status)
    before = dict(core.store.one("SELECT * FROM runs WHERE id = ?", (rid,)))
    with core.store.write() as c:
        moved = CALLS[name](c, rid)
    after = dict(core.store.one("SELECT * FROM runs WHERE id = ?", (rid,)))
    if status in t.leaves:
        assert moved and after != before
        assert after["status"] in (t.to or (status,))
    else:  # refused: the run is exactly as it was
        assert not moved and after == before


@pytest.mark.parametrize("status", statuses.STATUSES)
def test_a_cancel_does_what_the_rule_says_in_each_status(tmp_path, status):
    core, rid = _run_in(tmp_path, status)
    before = dict(core.store.one("SELECT * FROM runs WHERE id = ?", (rid,)))
    if status == "launching":  # claimed, not yet with a worker: the cancel could race the hand-over
        with pytest.raises(DomainError) as refused, core.store.write() as c:
            lifecycle.cancel(c, rid, 9)
        assert refused.value.code == "run_launching"
        with core.store.write() as c:
            lifecycle.handed(c, rid, "m1")
    with core.store.write() as c:
        assert lifecycle.cancel(c, rid, 9) == status
    after = dict(core.store.one("SELECT * FROM runs WHERE id = ?", (rid,)))
    run = runs.get(core.store.conn(), rid)
    if status == "queued":
        assert after["status"] == "cancelled" and after["finished_at_ms"] == 9 and lifecycle.stopped_by_cancel(run)
    elif status in statuses.IN_WORLD:  # its worker stops it at the next tick boundary
        assert after["status"] == status and after["cancel_requested"] == 1 and lifecycle.stopped_by_cancel(run)
    else:
        assert after == before and lifecycle.stopped_by_cancel(run) == (status == "cancelled")


@pytest.mark.parametrize("statuses, want", [
    (["queued", "queued"], "queued"),
    (["queued", "launching"], "running"),
    (["queued", "finished"], "running"),  # one trial ended: the series has begun
    (["running", "failed"], "running"),
    (["cancelled", "cancelled"], "cancelled"),
    (["failed", "failed"], "failed"),
    (["failed", "cancelled"], "finished"),
    (["finished", "failed"], "finished"),
])
def test_a_series_status_follows_its_runs(statuses, want):
    assert lifecycle.series_status(Counter(statuses)) == want


def test_runs_md_carries_the_transitions_table():
    text = (Path(__file__).parents[2] / "docs" / "RUNS.md").read_text(encoding="utf-8")
    assert lifecycle.table() in text, "docs/RUNS.md's transitions table differs from lifecycle.table()"


def test_a_waiter_wakes_when_the_end_lands_and_only_for_its_run():
    ends = lifecycle.Ends()
    with ends.watch("run_a") as a, ends.watch("run_b") as b:
        threading.Timer(0.05, ends.landed, (["run_a"],)).start()
        assert a.wait(5) and not b.is_set()
    ends.landed(["run_a"])  # nobody watches any more: nothing held
    assert ends._waiting == {}


def test_an_ended_record_is_stored_as_the_run_reads_it(tmp_path):
    """A worker hands the head its run's columns (the play wing's for_head), results and roster in the
    runs repository's own encoding; the run reads back what the worker made."""
    from orchestrator.records.roster import plain
    from orchestrator.records.run import Ended

    core = _core(tmp_path)
    rid = _queued_run(core, tmp_path)
    results = {"rubric": "r", "match_ticks": 3, "field_size": 1,
               "agents": [{"seat": 0, "name": "a", "dimensions": {"foraging": 0.25}, "achievements": ["x"]}]}
    with core.store.write() as c:
        lifecycle.claim(c, True, 5)
        lifecycle.handed(c, rid, "m1")
        usage = {"agent_turns": 3, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}
        roster = [dict(s, usage=usage) for s in plain(runs.run_of(runs.stored(c, [rid])[0]).roster)]
        manifest = {"node_id": "n", "pid": 7, "files": {"seats/bat/m1.staged": 10}}
        assert lifecycle.ended_many(c, [Ended(rid, "finished", "season_end", 3, "m1", runs.results_text(results),
                                              runs.roster_text(roster), 0.0, 3,
                                              None, 4, manifest)], 9) == {rid}
    run = runs.run_of(runs.stored(core.store.conn(), [rid])[0])
    assert run.status == "finished" and run.results == results and run.archived == manifest and run.error is None
    assert plain(run.roster) == roster and run.turns_settled == 3
    # a page of runs (GET /runs) shows no results, so it leaves the largest column unread
    (listed,), _ = runs.page(core.store.conn(), run.account_id, 10)
    assert listed.id == rid and listed.results is None and listed.model_copy(update={"results": results}) == run
