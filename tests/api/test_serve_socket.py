"""The socket `studio serve` takes before it creates anything (CONTRACT.md section 15) must serve like
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
