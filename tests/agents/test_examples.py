"""examples/: the REST agent and the MCP agent (official client) run as their own processes against a
real server, each playing a 20-tick season to results; the notebook's cells play a series of 4 trials
with Studio.play_seat."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.conftest import world_body
from tests.runs.conftest import wait_terminal

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("example", ["rest_agent.py", "mcp_agent.py"])
def test_an_example_agent_plays_a_season_to_results(srv, lab, token, example):
    r = lab.post("/api/v1/runs", json=world_body(20))
    assert r.status_code == 201, r.text
    run_id = r.json()["run"]["run_id"]
    env = dict(os.environ, STUDIO_URL=srv.url, STUDIO_TOKEN=token,
               PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = subprocess.run([sys.executable, str(EXAMPLES / example), run_id, "0"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["status"] == "ended"
    body = wait_terminal(lab, run_id)
    assert body["run"]["status"] == "finished" and body["results"]["match_ticks"] == 20
    seat = body["run"]["roster"][0]
    assert seat["turns"]["answered"] == 20 and seat["turns"]["timed_out"] == 0
    assert body["results"]["agents"][0]["model"] == "my-agent v0.1"


def test_the_notebook_plays_a_series_of_four_trials_with_play_seat(srv, token, monkeypatch):
    monkeypatch.setenv("STUDIO_URL", srv.url)
    monkeypatch.setenv("STUDIO_TOKEN", token)
    namespace: dict = {"__name__": "__main__"}
    for k, cell in enumerate(re.split(r"^# %%.*$", (EXAMPLES / "agent_series.py").read_text(), flags=re.M)):
        exec(compile(cell, f"agent_series.py cell {k}", "exec"), namespace)
    played = namespace["played"]
    assert len(played) == 4
    assert all(p["run"]["status"] == "finished" and p["results"]["match_ticks"] == 20 for p in played)
    assert all(p["run"]["roster"][0]["turns"]["answered"] == 20 for p in played)
    assert namespace["summary"]["seats"][0]["n"] == 4
    namespace["studio"].close()
