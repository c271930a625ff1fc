"""Helpers for the API tests: a uvicorn server in a thread, free ports, auth headers."""
from __future__ import annotations

import socket
import threading
import time

import httpx
import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(app, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    return server, thread


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def wait_until_up(url: str, proc, timeout: float = 120, log=None) -> None:
    """Until a `studio serve` process answers GET /api/v1 (it warms its kernels and starts Ray first);
    fails at once, with its log, if the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"studio serve exited: {log.read_text()[-2000:] if log else ''}"
        try:
            if httpx.get(url + "/api/v1", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"studio serve did not answer within {timeout:.0f} s")
