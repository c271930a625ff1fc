"""Issue 50 F13: after kill -9 of `studio serve` (the service's process alone, as an operator kills it),
no process of its private Ray survives: `ray::DashboardAgent` and `ray::RuntimeEnvAgent` used to stay
on, reparented to init and deaf to SIGTERM. Only the processes of the service a test started are
looked at (other Rays run on this machine)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil

from orchestrator import reaper
from tests.api.util import free_port, wait_until_up
from tests.faults.test_service import CONFIG, _kill_group, _serve
from tests.waiting import until

AGENTS = {"ray::DashboardAgent", "ray::RuntimeEnvAgent"}
GONE_WITHIN_S = 20


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def _kill(procs: list[psutil.Process]) -> None:
    for p in _alive(procs):
        try:
            p.kill()
        except psutil.Error:
            pass


def test_kill_9_of_the_service_ends_every_ray_process_it_started(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(CONFIG)
    port = free_port()
    proc = _serve(data, port, tmp_path / "serve.log")
    tree: list[psutil.Process] = []
    try:
        wait_until_up(f"http://127.0.0.1:{port}", proc)

        def started():
            procs = psutil.Process(proc.pid).children(recursive=True)
            names = set()
            for p in procs:
                try:
                    names.add(p.name())
                except psutil.Error:
                    pass
            return procs if AGENTS <= names else None
        tree = until(started, 60, every=0.5, what="Ray's agents under the service")
        os.kill(proc.pid, signal.SIGKILL)  # the service alone, not its process group
        proc.wait(timeout=30)
        try:
            until(lambda: not _alive(tree), GONE_WITHIN_S, every=0.2, what="the killed service's Ray to end")
        except AssertionError:
            left = ", ".join(f"{p.pid} {p.name()} (parent {p.ppid()})" for p in _alive(tree))
            raise AssertionError(f"still running {GONE_WITHIN_S} s after kill -9 of the service: {left}") from None
    finally:
        _kill(tree)
        _kill_group(proc, signal.SIGKILL)


def test_the_watcher_ends_marked_processes_that_ignore_sigterm_when_its_owner_is_killed(tmp_path: Path):
    """Without Ray: an owner marks itself, starts a child in its own session that ignores SIGTERM (as
    the agents do), and is killed -9; the child ends, a process without the mark is left alone."""
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import subprocess, sys, time
        from orchestrator import reaper
        reaper.watch()
        deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
        child = subprocess.Popen([sys.executable, "-c", deaf], start_new_session=True)
        print(child.pid, flush=True)
        time.sleep(120)
    """)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 env={**os.environ, reaper.MARK: "someone-else"})
    child = None
    try:
        child = psutil.Process(int(owner.stdout.readline()))
        assert child.environ()[reaper.MARK] != "someone-else"
        owner.kill()
        owner.wait(timeout=10)
        until(lambda: not _alive([child]), GONE_WITHIN_S, every=0.1, what="the marked child to end")
        assert bystander.poll() is None
    finally:
        _kill([child] if child else [])
        owner.kill()
        bystander.kill()
