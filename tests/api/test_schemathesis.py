"""schemathesis over the OpenAPI document against the live server: no 5xx, every answer as documented.

Runs the schemathesis CLI (all checks, all phases) for a fixed number of cases per operation from a fixed
seed, so a failure in CI is the same failure here (a time budget made the cases depend on the machine's
speed: CI once met a case no run here had drawn). STUDIO_SCHEMATHESIS_SEED and _EXAMPLES explore further.
The CLI is used rather than the pytest plugin because the plugin's live-server fixture path does not work
on this pytest.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from orchestrator import accounts, auth

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = os.environ.get("STUDIO_SCHEMATHESIS_EXAMPLES", "25")
SEED = os.environ.get("STUDIO_SCHEMATHESIS_SEED", "20")


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_openapi_document_holds_against_the_live_server(store, request, tmp_path):
    live = request.getfixturevalue("live" if store == "sqlite" else "live_pg")
    email = "schemathesis@example.org"
    accounts.create_account(live.core, email, plan="lab")
    token, _ = auth.mint(live.core, email, scopes=auth.SCOPES)
    cmd = [str(Path(sys.executable).with_name("schemathesis")), "run", f"{live.url}/api/v1/openapi.json",
           "--checks", "all", "--max-examples", EXAMPLES, "--seed", SEED, "--no-color",
           "-H", f"Authorization: Bearer {token}", "--report", "junit", "--report-dir", str(tmp_path)]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.api.schemathesis_hooks",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    doc = httpx.get(f"{live.url}/api/v1/openapi.json", timeout=30).json()
    n = sum(len(ops) for ops in doc["paths"].values())
    assert f"{n}/{n}" in r.stdout, r.stdout[-3000:]  # every operation was selected and tested
