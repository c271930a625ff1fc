"""The Python surface: the same tools, the same checks and errors, runs played in-process on Ray."""
import pytest

from api.python import Studio
from orchestrator.errors import DomainError
from tests.runs.conftest import CONFIG, account


def test_python_surface_authors_launches_and_reads(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    from orchestrator.core import Core
    token = account(Core.open(tmp_path))
    with Studio(tmp_path, token, play=True, workers=2) as studio:
        assert studio.whoami()["plan"]["id"] == "lab"
        scen = studio.create_scenario(name="lean", season_ticks=40, env={"anchors": ["random"]})["scenario"]
        assert studio.get_scenario(id=scen["id"])["scenario"]["hash"] == scen["hash"]
        with pytest.raises(DomainError) as e:
            studio.validate_scenario(name="x")
        assert e.value.code == "bad_scenario" and "name" in e.value.message
        est = studio.estimate_run(scenario_id=scen["id"], roster=[{"model": "local/honest-trader"}], trials=3)
        assert est["batch"]["agent_turns"] == 120
        launched = studio.launch_run(scenario_id=scen["id"], roster=[{"model": "local/honest-trader"}], trials=3)
        bodies = [studio.wait(rid) for rid in launched["batch"]["run_ids"]]
        assert all(b["run"]["status"] == "finished" and b["results"]["match_ticks"] == 40 for b in bodies)
        summary = studio.get_batch(id=launched["batch"]["batch_id"])["batch"]["summary"]
        assert summary["seats"][0]["n"] == 3
        with pytest.raises(DomainError) as e:
            studio.get_run(id="run_nope")
        assert e.value.code == "unknown_run" and e.value.status == 404
        with pytest.raises(AttributeError):
            studio.fly()
