"""A notebook that installs only the client reads a running service without any of the server's
packages: in a fresh interpreter whose imports of them fail (and are recorded), the client launches,
waits and reads frames; none of them, nor numba, Ray, DuckDB or FastAPI, was asked for or loaded."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.runs.conftest import account

SERVER_ONLY = ("api", "engine", "analytics", "orchestrator", "tests", "numba", "ray", "duckdb", "fastapi",
               "uvicorn", "mcp", "scipy")
SCRIPT = """
import json, sys
BLOCKED, ASKED = set(sys.argv[3].split(",")), []

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            ASKED.append(name)
            raise ImportError(f"{name} is not installed in a client-only environment")

sys.meta_path.insert(0, Refuse())
from studio_client import Studio, frames

with Studio(sys.argv[1], sys.argv[2]) as studio:
    studio.check()
    run = studio.launch_run(scenario_id="svc:custom-base-v1", season_ticks=20,
                            roster=[{"model": "local/honest-trader"}, {"model": "local/random"}])["run"]
    body = studio.wait(run["run_id"], timeout_s=120)
    cards = frames.scorecards(studio, run["run_id"])
    rows = frames.results(studio, run["run_id"])
    board = frames.leaderboard(studio, "svc:custom-base-v1", resamples=100)
print(json.dumps({"status": body["run"]["status"], "cards": len(cards), "rows": len(rows), "board": len(board),
                  "asked": ASKED, "loaded": sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)}))
"""


def test_the_client_works_without_the_server_packages(shared_srv, tmp_path):
    token = account(shared_srv.core)
    # -I: no current directory or PYTHONPATH on the path, so the checkout's folders are not importable
    done = subprocess.run([sys.executable, "-I", "-c", SCRIPT, shared_srv.url, token, ",".join(SERVER_ONLY)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] == "finished" and out["cards"] >= 2 and out["rows"] >= 2 and out["board"] >= 2
    assert out["asked"] == [] and out["loaded"] == []
