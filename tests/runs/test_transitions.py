"""The guarded transitions of orchestrator.runs.lifecycle, on a real store."""
import logging

from orchestrator.core import Core
from orchestrator.runs import lifecycle
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
        assert [r["id"] for r in lifecycle.claim(c, True, 5)] == [rid]
        assert lifecycle.handed(c, rid, "m1") and lifecycle.began(c, rid, 5)
        assert lifecycle.cancel_queued(c, rid, 1) is False  # a running run is cancelled by its worker
        o = {"status": "finished", "stop_reason": "season_end", "results": None, "usage": [{"agent_turns": 3}],
             "spend_usd": 0.0, "match_ticks": 3, "error": None, "match_id": "m1", "started_at_ms": None}
        assert lifecycle.ended(c, rid, o, "[]", 1)
        assert lifecycle.ended(c, rid, o, "[]", 1) is False  # a replayed write changes nothing twice
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
        got = {r["id"]: lifecycle.lost(c, r, "gone", 1) for r in lifecycle.in_world(c)}
    assert got == {a: "queued", b: "cancelled", m1: "failed", m2: "queued"}
    assert [_status(core, r) for r in (a, b, m1, m2)] == ["queued", "cancelled", "failed", "queued"]


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
    assert [r["id"] for r in got] == second["run_ids"]  # oldest first, nothing of the others
    assert {_status(core, r) for r in first["run_ids"] + [single]} == {"queued"}
    with core.store.write() as c:
        assert [r["id"] for r in lifecycle.claim(c, True, 10)] == first["run_ids"] + [single]
