"""A run's result bundle fetched over REST, and `studio verify --json` on it in a process of its own
(no service, key or network needed): what benchmarks/realmodel.py ends with and benchmarks/bundle.py
times, tested on the provider double (tests/bundles/test_realmodel_path.py)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx


def fetch(c: httpx.Client, id: str, where: Path) -> Path:
    """The bundle of a run (run_...) or a series (bat_...), written to `where`/<id>.studio-bundle.zip."""
    kind = "batches" if id.startswith("bat_") else "runs"
    r = c.get(f"/api/v1/{kind}/{id}/bundle", timeout=600)
    if r.status_code != 200:
        raise RuntimeError(f"GET /api/v1/{kind}/{id}/bundle answered {r.status_code}: {r.text[:300]}")
    path = where / f"{id}.studio-bundle.zip"
    path.write_bytes(r.content)
    return path


def verify_apart(path: Path, timeout_s: float = 1800) -> tuple[int, dict, float]:
    """(exit status, the JSON report, wall seconds) of `studio verify FILE --json` in a fresh process."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "api.cli", "verify", str(path), "--json"], check=False,
                       capture_output=True,
                       text=True, timeout=timeout_s, cwd=Path(__file__).resolve().parents[2])
    wall = time.perf_counter() - t0
    lines = p.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines else {"error": p.stderr[-2000:]}
    return p.returncode, report, wall
