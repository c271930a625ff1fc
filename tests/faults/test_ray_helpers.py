"""Issue 50 F13, the watcher alone: an owner that is killed -9 takes the processes carrying its mark
with it, even those deaf to SIGTERM, and no others. kill -9 of a real `studio serve`, whose Ray's
agents the watcher ends, is tests/faults/test_service.py's kill -9 test (a start of the service and
its Ray is a long wait, shared there with the run it must not lose)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil

from orchestrator import reaper
from tests.faults.test_service import GONE_WITHIN_S, _alive, _kill
from tests.waiting import until


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
        # until its exec, a child's /proc environ is the one its parent started with, without the mark
        until(lambda: reaper.MARK in child.environ(), 10, every=0.05, what="the child's exec")
        assert child.environ()[reaper.MARK] != "someone-else"
        owner.kill()
        owner.wait(timeout=10)
        until(lambda: not _alive([child]), GONE_WITHIN_S, every=0.1, what="the marked child to end")
        assert bystander.poll() is None
    finally:
        _kill([child] if child else [])
        owner.kill()
        bystander.kill()
