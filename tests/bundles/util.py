"""Fetching a run's or a series' bundle over REST and verifying it in a fresh process (`studio verify`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.runs.conftest import wait_terminal


def launched(c: httpx.Client, body: dict, timeout: float = 120) -> dict:
    r = c.post("/api/v1/runs", json=body)
    assert r.status_code == 201, r.text
    out = r.json()
    for run_id in (out["batch"] or {}).get("run_ids") or [out["run"]["run_id"]]:
        ended = wait_terminal(c, run_id, timeout=timeout)
        assert ended["run"]["status"] == "finished", ended["run"]["error"]
    return out


def fetched(c: httpx.Client, id: str) -> bytes:
    kind = "batches" if id.startswith("bat_") else "runs"
    r = c.get(f"/api/v1/{kind}/{id}/bundle")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    assert r.headers["content-disposition"] == f'attachment; filename="{id}.studio-bundle.zip"'
    return r.content


def verified_apart(tmp: Path, data: bytes) -> tuple[int, dict]:
    """`studio verify --json` on the bundle in a process of its own: (exit status, its report)."""
    path = tmp / "bundle.zip"
    path.write_bytes(data)
    p = subprocess.run([sys.executable, "-m", "api.cli", "verify", str(path), "--json"], check=False,
                       capture_output=True,
                       text=True, timeout=600)
    return p.returncode, json.loads(p.stdout.strip().splitlines()[-1])
