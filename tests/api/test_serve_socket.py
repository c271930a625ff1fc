"""The socket `studio serve` takes before it creates anything (docs/api.md) must serve like
one uvicorn binds itself: its accepted connections get TCP_NODELAY, or every answer waits out a
40 ms delayed ACK."""
import asyncio
import socket

from api.serve import bind


def test_connections_on_the_pre_bound_socket_are_sent_without_delay():
    sock = bind("127.0.0.1", 0)
    nodelay = []

    async def main():
        accepted = asyncio.Event()

        def connected(reader, writer):
            nodelay.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()
            accepted.set()
        server = await asyncio.start_server(connected, sock=sock)
        async with server:
            _, w = await asyncio.open_connection(*sock.getsockname()[:2])
            await asyncio.wait_for(accepted.wait(), 10)
            w.close()
    asyncio.run(main())
    assert sock.proto == socket.IPPROTO_TCP
    assert nodelay and nodelay[0] != 0


def _answer(s: socket.socket) -> bytes:
    """One whole HTTP/1.1 answer off the connection: its head and a body of its content-length (the
    server may send them in separate writes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "the connection closed"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "the connection closed"
        body += chunk
    return head


def test_a_keep_alive_connection_idle_between_requests_is_kept(tmp_path):
    """Issue 50 F8: uvicorn's default closes a connection idle for 5 s, and an agent that asked again on it
    as it closed (after a model's reply, or a slow tick) met a dropped request. `studio serve` keeps one
    idle for KEEP_ALIVE_S."""
    import threading
    import time

    import uvicorn

    from api.app import create_app
    from api.serve import KEEP_ALIVE_S, uvicorn_config
    from tests.api.util import free_port
    from tests.waiting import until

    assert KEEP_ALIVE_S >= 60
    port = free_port()
    server = uvicorn.Server(uvicorn_config(create_app(tmp_path), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        until(lambda: server.started, 30, what="uvicorn starting")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            ask = b"GET /api/v1/library/anchors HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            s.sendall(ask)
            assert _answer(s).startswith(b"HTTP/1.1 401")
            time.sleep(6)  # idle past uvicorn's default keep-alive
            s.sendall(ask)
            assert _answer(s).startswith(b"HTTP/1.1 401")  # the same connection answers
    finally:
        server.should_exit = True
        thread.join(timeout=10)
