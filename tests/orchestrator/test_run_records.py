"""The run's records refuse what the rules would refuse, and the runs repository reads back what it
wrote: a launch's run as a Run, a fork's record as a RunFork, and a row an earlier version stored
with Infinity read with those values as null and their places named."""
from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from orchestrator.auth import authenticate
from orchestrator.core import Core
from orchestrator.records.fork import RunFork, SeriesFork
from orchestrator.records.run import Run
from orchestrator.runs import lifecycle, service
from orchestrator.runs.views import run_view
from orchestrator.store import runs
from tests.runs.conftest import CONFIG, account, local_body

FIELDS = dict(seq=1, id="run_1", account_id="acc_1", launch_id="run_1", name="r", status="queued",
              scenario_id="svc:custom-base-v1", scenario_hash="h", scripted=True, turns_reserved=10,
              created_at_ms=1, effective={"season_ticks": 5, "env": {}}, roster=[])


def test_a_run_record_refuses_an_infinite_spend_an_unknown_status_and_unknown_fields():
    assert Run(**FIELDS).status == "queued"
    for bad in ({"spend_usd": math.inf}, {"cap_usd": math.nan}, {"spend_usd": -1.0}, {"status": "paused"},
                {"turns_reserved": -1}, {"color": "red"}, {"id": ""}):
        with pytest.raises(ValidationError):
            Run(**{**FIELDS, **bad})
    with pytest.raises(ValidationError):  # frozen: a record is changed by building another
        Run(**FIELDS).status = "running"


def test_a_fork_record_refuses_an_unknown_arm_a_tick_before_the_first_and_a_negative_seed():
    ok = dict(run_id="run_a", match_id="m" * 32, tick=3, continuation_seed=7, arm="control", key=None,
              changed=[1], played=["random", None], mixed=[1])
    assert RunFork(**ok).public() == {"run_id": "run_a", "match_id": "m" * 32, "tick": 3, "continuation_seed": 7,
                                      "arm": "control"}
    assert "archive" not in RunFork(**ok, archive="file:///x").stored()
    for bad in ({"arm": "both"}, {"tick": 0}, {"continuation_seed": -1}, {"changed": [-1]}, {"extra": 1}):
        with pytest.raises(ValidationError):
            RunFork(**{**ok, **bad})
    with pytest.raises(ValidationError):
        SeriesFork(run_id="run_a", tick=1, control="maybe")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def core(request, tmp_path):
    (tmp_path / "data").mkdir()
    store = "" if request.param == "sqlite" else f'[store]\nurl = "{request.getfixturevalue("pg_url")}"\n'
    (tmp_path / "data" / "config.toml").write_text(store + CONFIG)
    core = Core.open(tmp_path / "data")
    yield core
    core.store.close()  # before its database is dropped: an open pool would reconnect for good


def test_a_launched_run_reads_back_as_its_record_and_its_view_is_built_from_it(core):
    principal = authenticate(core, account(core))
    rid = service.launch(core, principal, local_body())["run"]["run_id"]
    run = runs.owned(core.store.conn(), rid, principal.account_id)
    assert isinstance(run, Run) and run.id == rid and run.status == "queued" and run.scripted
    assert run.fork is None and run.unreadable == () and run.roster[0].usage.usd == 0.0
    assert runs.owned(core.store.conn(), rid, "acc_someone_else") is None
    view = run_view(run)
    assert view["run_id"] == rid and view["effective"]["fork"] is None and "note" not in view
    with core.store.write() as c:
        [claimed] = lifecycle.claim(c, True, 5)
    assert claimed.id == rid and claimed.status == "launching" and claimed.work() == run.work()


def test_a_fork_record_is_stored_with_its_run_and_read_back_typed(core):
    principal = authenticate(core, account(core))
    rid = service.launch(core, principal, local_body())["run"]["run_id"]
    record = RunFork(run_id="run_orig", match_id="m" * 32, tick=2, continuation_seed=None, arm="fork",
                     changed=[0], played=[None], mixed=[0])
    run = runs.get(core.store.conn(), rid)
    with core.store.write() as c:
        runs.add(c, id="run_forked", account_id=principal.account_id, launch_id="run_forked", batch_id=None,
                 trial=0, name="f", scenario_id=run.scenario_id, scenario_hash=run.scenario_hash, scripted=True,
                 effective={**run.effective, "fork": record.public()}, roster=run.roster, cap_usd=None,
                 turns_reserved=1, created_at_ms=2, grading=None, grading_status=None, fork=record)
    assert runs.get(core.store.conn(), "run_forked").fork == record


def test_a_row_an_earlier_version_stored_with_infinity_reads_as_null_with_its_places_named(core):
    principal = authenticate(core, account(core))
    rid = service.launch(core, principal, local_body())["run"]["run_id"]
    with core.store.write() as c:  # what json.dumps wrote for an infinite usage, and a spend past any float
        c.execute("UPDATE runs SET roster = replace(roster, '\"usd\": 0.0', '\"usd\": Infinity'), spend_usd = ? "
                  "WHERE id = ?", (float("inf"), rid))
    run = runs.get(core.store.conn(), rid)
    assert run.spend_usd is None and run.roster[0].usage.usd is None
    assert "spend_usd" in run.unreadable and "roster[0].usage.usd" in run.unreadable
    view = run_view(run)
    assert view["spend"]["usd"] is None and "spend.usd" in view["note"] and "roster[0].usage.usd" in view["note"]
