"""The Python surface: the same tools, the same checks and errors, runs played in-process on Ray;
Studio.connect is the REST client (studio_client), whose refusals carry the same code, status and message."""
import subprocess
import sys
from pathlib import Path

import pytest

from studio_client import StudioError

from api.python import ReadOnly, Studio
from orchestrator.errors import DomainError
from tests.api.util import free_port
from tests.runs.conftest import CONFIG, account, local_body

ROOT = Path(__file__).resolve().parents[2]


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


def test_connect_speaks_to_a_running_server_with_the_same_methods_and_errors(srv):
    token = account(srv.core)
    local = Studio(srv.data_dir, token)  # in-process beside the server: the reference for messages
    with Studio.connect(srv.url, token=token) as remote:
        assert remote.whoami() == local.whoami()
        launched = remote.launch_run(**local_body())
        body = remote.wait(launched["run"]["run_id"], timeout_s=120)
        assert body["run"]["status"] == "finished" and body["results"]["match_ticks"] == 60
        assert local.get_run(id=body["run"]["run_id"])["run"]["run_id"] == body["run"]["run_id"]
        for tool, args in (("get_run", {"id": "run_nope"}), ("validate_scenario", {"name": "x"}),
                           ("launch_run", local_body(roster=[{"model": "local/nope"}]))):
            with pytest.raises(StudioError) as there:
                remote.call(tool, **args)
            with pytest.raises(DomainError) as here:
                local.call(tool, **args)
            assert (there.value.code, there.value.status, there.value.message) == (
                here.value.code, here.value.status, here.value.message)
        with pytest.raises(AttributeError):
            remote.fly()
    with Studio.connect(srv.url, token="dsk_" + "0" * 64) as stranger, pytest.raises(StudioError) as e:
        stranger.whoami()
    assert e.value.code == "token_required"
    with Studio.connect(f"http://127.0.0.1:{free_port()}", token=token) as nobody, \
            pytest.raises(ConnectionError, match="is `studio serve` running"):
        nobody.whoami()


def test_read_only_studio_reads_beside_a_running_server_and_refuses_writes(srv):
    token = account(srv.core)
    with srv.client(token) as c:
        run_id = c.post("/api/v1/runs", json=local_body()).json()["run"]["run_id"]
    with Studio(srv.data_dir, token, read_only=True) as studio:
        assert studio.get_run(id=run_id)["run"]["run_id"] == run_id
        assert [r["run_id"] for r in studio.list_runs()["runs"]] == [run_id]
        with pytest.raises(ReadOnly, match="Studio.connect"):
            studio.launch_run(**local_body())


def test_playing_a_data_dir_a_server_plays_is_refused_in_plain_words(srv):
    # another process, as a notebook beside `studio serve` would be: DuckDB's lock is per process
    script = ("import sys\nfrom api.python import Studio, DataDirBusy\n"
              "try:\n    Studio(sys.argv[1], 'dsk_x', play=True)\n"
              "except DataDirBusy as e:\n    print(e)\n    sys.exit(3)\n")
    done = subprocess.run([sys.executable, "-c", script, str(srv.data_dir)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "already plays the runs" in done.stdout and "Studio.connect" in done.stdout
    assert "Conflicting lock" not in done.stdout + done.stderr
