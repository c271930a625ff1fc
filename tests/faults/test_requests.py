"""Request-level faults: huge bodies, a crash mid-request, a held write lock."""
from __future__ import annotations

import socket
import sqlite3
import time

import httpx
import pytest

from api.app import create_app
from orchestrator import accounts, auth
from orchestrator.core import Core
from tests.api.util import bearer, free_port, serving, start_server


@pytest.fixture
def server(tmp_path):
    core = Core.open(tmp_path / "data")
    app = create_app(core=core)

    @app.get("/api/v1/crash-for-test", include_in_schema=False)
    def crash():
        raise RuntimeError("a bug")
    port = free_port()
    srv, thread = start_server(app, port)
    accounts.create_account(core, "f@example.org", plan="lab", verified=True)
    token, _ = auth.mint(core, "f@example.org", scopes=("scenarios:read", "scenarios:write", "runs:read",
                                                         "runs:write"))
    yield core, f"http://127.0.0.1:{port}", token, port
    srv.should_exit = True
    thread.join(timeout=10)


def _raw(port: int, head: bytes, body_chunks=(), read=True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        try:
            for chunk in body_chunks:
                s.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: it stopped reading
        out = b""
        while read:
            try:
                got = s.recv(65536)
            except ConnectionResetError:
                break
            if not got:
                break
            out += got
            if b"\r\n\r\n" in out and b'"message"' in out:
                break
        return out


def test_a_huge_content_length_is_refused_before_the_body_is_read(server):
    core, url, token, port = server
    started = time.monotonic()
    head = (f"POST /api/v1/scenarios HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 300000000\r\n\r\n").encode()
    out = _raw(port, head, [b"{" + b" " * 65536])
    assert time.monotonic() - started < 5
    assert out.startswith(b"HTTP/1.1 400") and b'"error":"bad_request"' in out and b"at most 65536" in out


def test_a_chunked_body_is_cut_off_at_the_ceiling(server):
    core, url, token, port = server
    head = (f"POST /api/v1/scenarios HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    chunk = b" " * 16384
    frames = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 64  # 1 MiB offered
    out = _raw(port, head, frames)
    assert out.startswith(b"HTTP/1.1 400") and b"at most 65536" in out


def test_mcp_refuses_a_huge_body_with_the_envelope(server):
    core, url, token, port = server
    r = httpx.post(url + "/mcp/studio", content=b"x" * (300 * 1024), headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream"})
    assert r.status_code == 400 and r.json()["error"] == "bad_request" and "262144" in r.json()["message"]


def test_utf16_bodies_are_refused(server):
    core, url, token, port = server
    body = '{"name": "x"}'.encode("utf-16")
    r = httpx.post(url + "/api/v1/skills", content=body, headers={**bearer(token), "content-type": "application/json"})
    assert r.status_code == 400 and "UTF-8" in r.json()["message"]


def test_the_connection_survives_an_unhandled_error(server):
    core, url, token, port = server
    with httpx.Client(base_url=url) as c:
        r = c.get("/api/v1/crash-for-test")
        assert r.status_code == 500 and r.json()["error"] == "internal_error"
        assert c.get("/api/v1").status_code == 200  # the same keep-alive connection
        assert len(c._transport._pool.connections) == 1


def test_a_held_write_lock_stalls_no_read(tmp_path):
    """Reads answer at once; a write waits out the store's busy wait (`[store] busy_timeout_s`, 4 s
    here, 10 by default), then is refused with 503 and written once the lock is gone."""
    data = tmp_path / "held"
    data.mkdir()
    (data / "config.toml").write_text("[store]\nbusy_timeout_s = 4\n")
    core = Core.open(data)
    accounts.create_account(core, "f@example.org", plan="lab", verified=True)
    fresh, _ = auth.mint(core, "f@example.org", scopes=("runs:read", "scenarios:read", "scenarios:write"))
    other = sqlite3.connect(core.store.path, isolation_level=None, check_same_thread=False)
    with serving(core) as url:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock, past the busy timeout
        try:
            with httpx.Client(base_url=url, timeout=30) as c:
                for path in ("/api/v1", "/api/v1/me", "/api/v1/runs"):  # a new token: its first use is noted
                    started = time.monotonic()
                    r = c.get(path, headers=bearer(fresh))
                    assert r.status_code == 200 and time.monotonic() - started < 3.0, (path, r.text)
                started = time.monotonic()
                r = c.post("/api/v1/skills", json={"name": "held", "text": "written while locked"},
                           headers=bearer(fresh))
                assert 4.0 <= time.monotonic() - started < 9.0  # the configured wait, not the default 10 s
                # not a server fault: nothing changed, and the client is told when to try again
                assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
                assert int(r.headers["retry-after"]) > 0 and "store refused" in r.json()["message"]
        finally:
            other.execute("ROLLBACK")
            other.close()
        with httpx.Client(base_url=url) as c:
            r = c.post("/api/v1/skills", json={"name": "held", "text": "written after the lock"},
                       headers=bearer(fresh))
            assert r.status_code == 201
    core.last_used.flush()
    used = [t for t in auth.list_tokens(core, "f@example.org") if t["prefix"] == fresh[:12]][0]
    assert used["last_used_at_ms"] is not None  # written once the lock was gone
