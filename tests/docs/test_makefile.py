"""The Makefile's system packages (Chromium, Stockfish) and its notebook: apt-get waits for the apt lock
(bounded) and a failure shows apt's own error, not a hint that hides it; without root make says the line
to run and the line to serve without them; `make notebook` opens examples/ with the service's data dir."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCKED = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"


def make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=env)


def test_apt_get_waits_for_the_lock_a_bounded_time():
    out = make("-s", "--eval", "show-apt: ; @echo $(APT_GET)", "show-apt").stdout
    assert "-o DPkg::Lock::Timeout=120" in out


def test_a_failed_apt_get_is_reported_with_its_own_error(tmp_path):
    # apt-get as it answers while another apt holds the lock past the wait: its message on stderr, exit 100
    apt = tmp_path / "apt-get"
    apt.write_text(f"#!/bin/sh\necho '{LOCKED}' >&2\nexit 100\n")
    apt.chmod(0o755)
    done = make("system", f"APT={apt}", "CHROMIUM=/nonexistent/chromium", "STOCKFISH=/nonexistent/stockfish")
    assert done.returncode != 0
    assert LOCKED in done.stderr  # apt's own words reach the reader
    assert "apt-get failed (exit 100" in done.stderr and "chromium stockfish is not installed" in done.stderr
    assert "install Chromium for the browser tests" not in done.stdout + done.stderr


def test_without_root_make_says_what_needs_root_and_how_to_do_without():
    done = make("system", "APT=", "CHROMIUM=/nonexistent/chromium")
    assert done.returncode != 0
    assert "sudo apt-get install -y chromium" in done.stderr and "make serve SYSTEM_PACKAGES=no" in done.stderr
    serve = make("-n", "serve", "SYSTEM_PACKAGES=no", "APT=", "CHROMIUM=/nonexistent/chromium",
                 "-o", ".venv/.installed").stdout
    assert "studio serve" in serve and "apt-get" not in serve


def test_nothing_missing_needs_nothing():
    done = make("system", "APT=", f"CHROMIUM={sys.executable}", f"STOCKFISH={sys.executable}")
    assert done.returncode == 0 and done.stderr == ""


def test_make_notebook_opens_examples_with_the_services_data_dir():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("jupyterlab") for d in extras["notebook"])
    env = {k: v for k, v in os.environ.items() if k != "STUDIO_DATA_DIR"}
    out = make("-n", "notebook", "-o", ".venv/.notebook", "-o", ".venv/.installed", env=env).stdout
    assert f"STUDIO_DATA_DIR={ROOT}/studio-data" in out and "jupyter lab --notebook-dir=examples" in out
    out = make("-n", "notebook", "STUDIO_DATA_DIR=/srv/data", "-o", ".venv/.notebook", "-o", ".venv/.installed").stdout
    assert "STUDIO_DATA_DIR=/srv/data " in out
