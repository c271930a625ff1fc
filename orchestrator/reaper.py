"""Ray's helper processes end with the service that started them, however it ends (kill -9 included).

A private local Ray's raylet and GCS die with their driver, but the agents the raylet starts
(`ray::DashboardAgent`, `ray::RuntimeEnvAgent`) are left behind when it is killed: they see their
parent go, then hang on the dead GCS, ignoring SIGTERM. So the driver marks its environment with a
fresh id before Ray starts (every process Ray starts inherits it) and starts this module as a small
watcher holding the read end of a pipe. The pipe reaches its end when the driver exits, by any
signal; the watcher then kills (SIGKILL) every process of this user that carries the id, and exits.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import psutil

MARK = "STUDIO_RAY_OWNER"  # in the environment of every process of one service's private Ray
ROUNDS, ROUND_S = 5, 0.2  # a process started while the first round was killing is found by the next


def marked(mark: str) -> list[psutil.Process]:
    """This user's processes, other than this one, whose environment carries the mark."""
    found = []
    for p in psutil.process_iter():
        if p.pid == os.getpid():
            continue
        try:
            if p.uids().real == os.getuid() and p.environ().get(MARK) == mark:
                found.append(p)
        except (psutil.Error, OSError):  # gone, a zombie, or not ours to read
            continue
    return found


def reap(mark: str) -> int:
    """SIGKILL every process carrying the mark, until a round finds none. How many were killed."""
    killed = 0
    for _ in range(ROUNDS):
        procs = marked(mark)
        if not procs:
            break
        for p in procs:
            try:
                p.kill()
                killed += 1
            except psutil.Error:
                pass
        time.sleep(ROUND_S)
    return killed


_watching: str | None = None  # this process's mark, once its watcher runs


def watch() -> None:
    """Mark this process's environment (before Ray starts, so Ray's processes inherit it) and start the
    watcher that reaps them once this process has ended; once per process (a mark inherited from a
    parent process is replaced: that one is the parent's to reap)."""
    global _watching
    if _watching is not None and os.environ.get(MARK) == _watching:
        return
    mark = _watching = uuid.uuid4().hex
    os.environ[MARK] = mark
    # Ray's processes name themselves (ray::DashboardAgent) over their argv; without this the title may
    # also overwrite the block /proc/<pid>/environ reads, and the mark with it
    os.environ["SPT_NOENV"] = "1"
    read, write = os.pipe()
    env = {k: v for k, v in os.environ.items() if k != MARK}
    subprocess.Popen([sys.executable, "-m", "orchestrator.reaper", mark], stdin=read, env=env, close_fds=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)  # a Ctrl-C or a group's SIGTERM meant for the service spares it
    os.close(read)
    os.set_inheritable(write, False)  # held by this process alone: its exit is the pipe's end


def main(mark: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.read(0, 4096):  # nothing is ever written: this returns b"" once the service has ended
        pass
    reap(mark)


if __name__ == "__main__":
    main(sys.argv[1])
