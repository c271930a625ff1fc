"""The play wing in-process (no Ray, no recorder): play_job picks the player by the job's kind, and
the model seats of either kind take their keys from the job's data dir."""
from __future__ import annotations

import json
import re

import pytest

from analytics.archive.format import from_ipc
from orchestrator import auth
from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from orchestrator.play import Job, arena, job as jobs, play_job, world
from orchestrator.runs import service
from tests.seats.fake_provider import FakeProvider


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def _principal(core, fake):
    create_account(core, "player@example.com", plan="lab", verified=True)
    keys.set_key(core, provider="router", key="k-in-process", email="player@example.com", base_url=fake.url + "/v1")
    return auth.authenticate(core, mint(core, "player@example.com", scopes=SCOPES)[0])


def _job(core, run_id: str) -> Job:
    """The job the dispatcher would hand a worker, but with the data dir: nothing else holds the keys."""
    row = core.store.one("SELECT * FROM runs WHERE id = ?", (run_id,))
    eff = json.loads(row["effective"])
    return Job(run_id=row["id"], match_id=f"match{row['id']}", data_dir=str(core.data_dir),
               season_ticks=eff["season_ticks"], env=eff["env"], seats=json.loads(row["roster"]),
               meta={"scenario_id": row["scenario_id"], "scenario_hash": row["scenario_hash"],
                     "config_hash": eff["hash"], "batch_id": row["batch_id"]}, account_id=row["account_id"])


def _asked_with_the_stored_key(fake) -> bool:
    return bool(fake.requests) and all(r["headers"]["authorization"] == "Bearer k-in-process" for r in fake.requests)


def test_an_arena_model_seat_plays_in_process(core, fake):
    fake.defaults["test/legal"] = {"text": '{"move": "4"}', "usage": (50, 5)}
    run = service.arena_launch(core, _principal(core, fake), {
        "scenario_id": "arena:connect-four", "env": {"turn_timeout_ms": 5000},
        "roster": [{"model": "test/legal", "format": "json"}, {"model": "local/random"}]})["run"]
    out = play_job(_job(core, run["run_id"]))
    assert out.status == "finished" and out.results["rubric"] == "arena-connect-four-1" and out.game is not None
    answered = out.turns[0]["answered"]
    assert answered == len(fake.requests) and out.usage[0]["input_tokens"] == 50 * answered
    assert out.turns[1] is None and out.usage[1]["agent_turns"] >= 1  # the scripted seat: moves answered
    assert _asked_with_the_stored_key(fake)


def test_a_world_model_seat_plays_in_process(core, fake):
    fake.defaults["test/waits"] = {"calls": [("wait", {})], "usage": (30, 3)}
    run = service.launch(core, _principal(core, fake), {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 12,
        "roster": [{"model": "test/waits"}, {"model": "local/random"}]})["run"]
    out = play_job(_job(core, run["run_id"]))
    assert out.status == "finished" and out.match_ticks == 12 and out.events is not None
    assert out.turns[0]["answered"] == 12 and out.usage[0]["input_tokens"] == 30 * 12
    assert [u["agent_turns"] for u in out.usage] == [12, 12] and out.turns[1] is None
    assert _asked_with_the_stored_key(fake)


def _unrecorded(error: dict, tick: int | None = None) -> None:
    """run.error of a played match whose record failed: the cause in words, no exception's text."""
    said = re.escape(jobs.UNRECORDED).replace(re.escape("{tick}"), str(tick) if tick is not None else "[0-9]+")
    assert error["error"] == "internal_error" and re.fullmatch(said, error["message"]), error


def _broken(*args, **kwargs):
    raise ValueError("a bug's words, at /private/path")


def test_a_played_match_whose_record_fails_keeps_its_transcript_and_says_why(core, fake, monkeypatch):
    """Issue 38: the event log failed to be written (a UnicodeEncodeError in the audit; any error here)
    after every turn was metered: the run fails naming that, and its transcript holds every turn."""
    fake.defaults["test/says"] = {"calls": [("say", {"text": "hello"})], "usage": (30, 3)}
    run = service.launch(core, _principal(core, fake), {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 12,
        "roster": [{"model": "test/says"}, {"model": "local/random"}]})["run"]
    monkeypatch.setattr(world, "log_table", _broken)
    out = play_job(_job(core, run["run_id"]))
    assert out.status == "failed" and out.match_id is None and out.events is None
    _unrecorded(out.error, 12)
    assert [u["agent_turns"] for u in out.usage] == [12, 12] and out.usage[0]["input_tokens"] == 30 * 12
    kept = from_ipc(out.transcript).to_pylist()
    assert [t["tick"] for t in kept] == list(range(12)) and all("hello" in t["reply"] for t in kept)


def test_a_played_match_whose_record_cannot_be_packed_fails_its_run_saying_why(core, fake, monkeypatch):
    """The worker packs a scripted match's seat rows after play (job.for_head): a failure there fails
    the run with the same words, not the exception's."""
    run = service.launch(core, _principal(core, fake), {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 12,
        "roster": [{"model": "local/random"}, {"model": "local/honest-trader"}]})["run"]
    job = _job(core, run["run_id"])
    out = play_job(job, pack=False)
    monkeypatch.setattr(jobs, "seats_ipc", _broken)
    row = jobs.for_head(out, job)
    assert row.status == "failed" and row.match_id is None and row.events is None
    _unrecorded(row.error, 12)


def test_a_played_game_whose_record_fails_says_why_and_keeps_its_answers(core, fake, monkeypatch):
    fake.defaults["test/legal"] = {"text": '{"move": "4"}', "usage": (50, 5)}
    run = service.arena_launch(core, _principal(core, fake), {
        "scenario_id": "arena:connect-four", "env": {"turn_timeout_ms": 5000},
        "roster": [{"model": "test/legal", "format": "json"}, {"model": "local/random"}]})["run"]
    monkeypatch.setattr(arena, "seats_ipc", _broken)
    out = play_job(_job(core, run["run_id"]))
    assert out.status == "failed" and out.game is None and out.seats is None
    _unrecorded(out.error)
    assert len(from_ipc(out.transcript)) == out.turns[0]["answered"] == len(fake.requests)
