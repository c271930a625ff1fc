"""A data dir made by older code opens under today's: its schema is brought to the current version on
start, and a run whose roster seats were stored without `format` or `scaffold` reads with the format a
seat naming none was given (tools) and a scaffold saying it was not recorded, every stored field kept,
through the store and through the API."""
from __future__ import annotations

import json
import sqlite3

import httpx
import pytest

from orchestrator import auth
from orchestrator.core import Core
from orchestrator.store import DB_NAME, MIGRATIONS, runs
from orchestrator.store import roster as stored_roster
from orchestrator.store.database import _statements
from tests.api.util import bearer, serving

pytestmark = pytest.mark.service  # the API's read runs on a real server

OLD_SEATS = [
    {"seat": 0, "name": "trader", "model": "local/honest-trader", "provider": "local", "funding": "free",
     "reasoning": None, "temperature": None, "max_tokens": None, "skills": [], "instructions": None,
     "usage": {"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}},
    {"seat": 1, "name": "harvester", "model": "local/greedy-harvester", "provider": "local", "funding": "free",
     "skills": [], "format": "json",  # a seat that kept its format but not its scaffold keeps the format
     "usage": {"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}},
]


def _old_data_dir(data, version: int = 2) -> None:
    """A studio.db as the first version with runs left it: its schema at `version`, an account, a cancelled run."""
    data.mkdir()
    db = sqlite3.connect(data / DB_NAME, isolation_level=None)
    for script in MIGRATIONS[:version]:
        for statement in _statements(script):
            db.execute(statement)
    db.execute(f"PRAGMA user_version = {version}")
    db.execute("INSERT INTO accounts (id, email, handle, plan, verified, created_at_ms) VALUES "
               "('acc_old', 'old@example.org', 'old', 'lab', 1, 1700000000000)")
    db.execute("INSERT INTO runs (id, account_id, launch_id, trial, name, status, scenario_id, scenario_hash, "
               "scripted, effective, roster, spend_usd, turns_reserved, stop_reason, cancel_requested, "
               "created_at_ms, finished_at_ms) VALUES ('run_old', 'acc_old', 'run_old', 0, 'before', 'cancelled', "
               "'svc:custom-base-v1', 'h', 1, ?, ?, 0, 0, 'cancelled', 1, 1700000000000, 1700000001000)",
               (json.dumps({"env": {"season_ticks": 20}, "seed": 7}), json.dumps(OLD_SEATS)))
    db.close()


def test_an_old_data_dir_opens_and_its_seats_read_with_todays_fields(tmp_path):
    data = tmp_path / "data"
    _old_data_dir(data)
    core = Core.open(data)
    assert core.store.schema_version() == len(MIGRATIONS)
    run = runs.get(core.store.conn(), "run_old")
    first, second = run.roster
    assert (first.format, first.scaffold) == (stored_roster.FORMAT_UNSTORED, stored_roster.SCAFFOLD_UNSTORED)
    assert (second.format, second.scaffold) == ("json", stored_roster.SCAFFOLD_UNSTORED)
    # nothing lost: every field the old seat stored reads back as stored
    for old, seat in zip(OLD_SEATS, run.roster):
        plain = seat.plain()
        assert {k: plain[k] for k in old} == old
    assert runs.account_and_roster(core.store.conn(), "run_old")[1] == run.roster
    token = auth.mint(core, "old@example.org", scopes=auth.SCOPES)[0]
    with serving(core) as url:
        r = httpx.get(f"{url}/api/v1/runs/run_old", headers=bearer(token), timeout=30)
    assert r.status_code == 200, r.text
    seats = r.json()["run"]["roster"]
    assert [(s["name"], s["format"], s["scaffold"]) for s in seats] == [
        ("trader", "tools", "unrecorded"), ("harvester", "json", "unrecorded")]
    # the stored text is not rewritten by a read
    assert json.loads(core.store.one("SELECT roster FROM runs WHERE id = 'run_old'")["roster"]) == OLD_SEATS
