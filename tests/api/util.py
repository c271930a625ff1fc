"""Helpers for the API tests: a uvicorn server in a thread, free ports, auth headers, expired tokens."""
from __future__ import annotations

import os
import socket
import subprocess
import threading
from contextlib import contextmanager
from typing import Iterator

import httpx
import uvicorn

from api.app import create_app
from orchestrator import auth
from orchestrator.clock import ManualClock
from orchestrator.core import Core
from tests import tiers
from tests.waiting import until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(app, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    tiers.refuse("a server")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started or not thread.is_alive(), 20, every=0.02, what="uvicorn starting")
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    return server, thread


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def wait_until_up(url: str, proc, timeout: float = 120, log=None) -> None:
    """Until a `studio serve` process answers GET /api/v1 (it warms its kernels and starts Ray first);
    fails at once, with its log, if the process exits."""
    tiers.refuse("`studio serve`")
    def answers() -> bool:
        assert proc.poll() is None, f"studio serve exited: {log.read_text()[-2000:] if log else ''}"
        try:
            return httpx.get(url + "/api/v1", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False
    until(answers, timeout, every=0.1, what="studio serve answering")


# a minute boundary, in ms: a ManualClock set just after it starts a test at the top of a rate-limit window
MINUTE_START = 1_790_000_040_000 - 1_790_000_040_000 % 60_000 + 60_000


@contextmanager
def serving(core) -> Iterator[str]:
    """A real server on 127.0.0.1 for this Core (a test gives it a ManualClock to set); its URL."""
    port = free_port()
    server, thread = start_server(create_app(core=core), port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def expired_token(core, email: str, name: str = "expired") -> str:
    """A token minted a minute ago that expired a millisecond later: no test waits for an expiry."""
    past = Core.open(core.data_dir, clock=ManualClock(core.clock.now_ms() - 60_000))
    return auth.mint(past, email, name=name, expires_in_ms=1)[0]


def serve_refused(data_dir, *args: str, monkeypatch, capsys) -> subprocess.CompletedProcess:
    """`studio serve` through api.cli.main in this process, for a start it must refuse: its refusals
    come before the kernels, Ray or uvicorn (tests/api/test_cli.py and tests/faults/test_service.py
    start the process itself). One that goes on past its checks fails here instead of serving."""
    import engine.warm

    from api.cli import main

    def went_on():
        raise AssertionError("studio serve went on past its start-up checks")
    monkeypatch.setattr(engine.warm, "warm", went_on)
    umask = os.umask(0o077)  # serve sets the process's umask: this process keeps its own
    os.umask(umask)
    try:
        code = main(["serve", "--data-dir", str(data_dir), *args])
    finally:
        os.umask(umask)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["studio", "serve", *args], code, out, err)
