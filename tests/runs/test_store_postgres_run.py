"""The service core on PostgreSQL end to end: an account, a token, a saved scenario and a scripted run
launched through the run service, played by the dispatcher on real Ray with every transition written
to PostgreSQL, and read back ended with its results. No studio.db is made in the data dir."""
from __future__ import annotations

import pytest

from orchestrator import accounts, auth, scenarios
from orchestrator.runs import service
from tests.runs.conftest import ALL_SCOPES, CONFIG, start
from tests.waiting import until

pytestmark = pytest.mark.postgres


def test_a_scripted_run_is_launched_played_and_read_back_on_postgresql(tmp_path, pg_url):
    server = start(tmp_path / "data", config=f'[store]\nurl = "{pg_url}"\n' + CONFIG)
    try:
        core = server.app.state.core
        assert core.store.dialect == "postgresql" and server.core.store.dialect == "postgresql"
        accounts.create_account(core, "pg-run@example.org", plan="lab", verified=True)
        token, _ = auth.mint(server.core, "pg-run@example.org", scopes=ALL_SCOPES)  # as the CLI would, another Core
        principal = auth.authenticate(core, token)
        created, saved = scenarios.create(core, principal, {"name": "On PostgreSQL", "env": {"seed": 5}})
        assert created
        body = {"scenario_id": saved["scenario"]["id"], "season_ticks": 30,
                "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]}
        run_id = service.launch(core, principal, body)["run"]["run_id"]

        def ended():
            run = service.get_run(core, principal, run_id)["run"]
            return run if run["status"] in ("finished", "failed", "cancelled") else None
        run = until(ended, 180, what=f"the end of run {run_id} on PostgreSQL")
        assert run["status"] == "finished", run
        listed = service.list_runs(server.core, principal)
        assert [r["run_id"] for r in listed["runs"]] == [run_id]
        assert service.get_run(server.core, principal, run_id)["run"]["status"] == "finished"
        assert not (tmp_path / "data" / "studio.db").exists()
    finally:
        server.stop()
