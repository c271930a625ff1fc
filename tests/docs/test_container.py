"""The container files: they set up and start the service with the README's own commands, keep the data
dir on a volume, and build when a Docker daemon is at hand (this machine has only the client)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    rows = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(r.split(None, 1)[0].upper(), r.split(None, 1)[1] if " " in r else "") for r in rows]


def test_the_image_installs_and_serves_with_the_readme_commands():
    steps = _instructions()
    runs = " && ".join(arg for op, arg in steps if op == "RUN")
    assert "make install" in runs
    # the system parts the Makefile would otherwise install or ask for
    for package in ("python3", "python3-venv", "make", "stockfish", "chromium"):
        assert re.search(rf"\b{package}\b", runs), package
    cmd = [arg for op, arg in steps if op == "CMD"]
    assert cmd and '"make", "serve"' in cmd[-1] and "HOST=0.0.0.0" in cmd[-1]
    assert ("EXPOSE", "8000") in steps
    # the data dir the service writes is the volume's
    env = dict(arg.split("=", 1) for op, arg in steps if op == "ENV")
    assert ("VOLUME", env["STUDIO_DATA_DIR"]) in steps
    # Debian bookworm's python3 is 3.11, the oldest the project supports
    assert steps[0] == ("FROM", "debian:bookworm-slim")
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text()


def test_make_serve_takes_host_and_port():
    out = subprocess.run(["make", "-n", "serve", "HOST=0.0.0.0", "PORT=8123", "-o", ".venv/.installed"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "studio serve --host 0.0.0.0 --port 8123" in out


def test_compose_keeps_the_data_dir_on_a_volume():
    compose = (ROOT / "compose.yaml").read_text()
    data_dir = dict(arg.split("=", 1) for op, arg in _instructions() if op == "ENV")["STUDIO_DATA_DIR"]
    assert re.search(rf"-\s*studio-data:{re.escape(data_dir)}\s*$", compose, re.M)
    assert re.search(r"^volumes:\s*\n\s+studio-data:", compose, re.M)
    assert re.search(r'-\s*"127\.0\.0\.1:8000:8000"', compose)
    assert "shm_size" in compose
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "studio-data", ".git"} <= set(ignored)


def _daemon() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


@pytest.mark.skipif(not _daemon(), reason="no Docker daemon on this machine: the files are checked above")
def test_the_image_builds():
    subprocess.run(["docker", "build", "-q", "-t", "scenario-studio-test", "."], cwd=ROOT, check=True, timeout=1800)
