"""The seats' HTTP transport: httpcore's connection pool on plain asyncio streams, as an httpx transport.

httpx's default transport runs httpcore over anyio, whose cancel scopes and checkpoints cost about a
third of a seat turn's CPU (benchmarks/seats.py); this backend speaks to asyncio streams directly and
leaves pooling, keep-alive, framing and TLS to httpcore, with its errors mapped to httpx's. The connect
hook enforces the address rule (docs/api.md) a second time: unless the credential may reach private
addresses, every address the host resolves to must be public and the socket opens to one of those
checked addresses, so DNS rebinding cannot turn a public name into 127.0.0.1 or the metadata
service. Redirects are never followed: a 3xx is handed back as it came.
"""
from __future__ import annotations

import asyncio
import socket
import ssl

import httpcore
import httpx

from orchestrator import egress

class _AddressRefused(httpcore.ConnectError):
    pass


class AddressRefused(httpx.ConnectError):
    """The base URL's host resolves to an address this seat may not reach (docs/api.md)."""


# most specific first: the first match wins
_EXCEPTIONS = (
    (_AddressRefused, AddressRefused),
    (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException), (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError), (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError), (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError), (httpcore.ProtocolError, httpx.ProtocolError),
)


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self.reader.read(max_bytes)
        except TimeoutError as e:
            raise httpcore.ReadTimeout(str(e)) from e
        except OSError as e:
            raise httpcore.ReadError(str(e)) from e

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            self.writer.write(buffer)
            async with asyncio.timeout(timeout):
                await self.writer.drain()
        except TimeoutError as e:
            raise httpcore.WriteTimeout(str(e)) from e
        except OSError as e:
            raise httpcore.WriteError(str(e)) from e

    async def aclose(self) -> None:
        self.writer.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> "_Stream":
        try:
            async with asyncio.timeout(timeout):
                await self.writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as e:
            raise httpcore.ConnectTimeout(str(e)) from e
        except (OSError, ssl.SSLError) as e:
            raise httpcore.ConnectError(str(e)) from e
        return self

    def get_extra_info(self, info: str):
        if info == "is_readable":  # an idle keep-alive connection the server has closed
            return self.reader.at_eof()
        names = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername", "socket": "socket"}
        return self.writer.get_extra_info(names[info]) if info in names else None


class _Backend(httpcore.AsyncNetworkBackend):
    def __init__(self, private_ok: bool):
        self.private_ok = private_ok

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address=None,
                          socket_options=None) -> _Stream:
        try:
            async with asyncio.timeout(timeout):
                targets = [host] if self.private_ok else await _public_addresses(host, port)
                error = None
                for target in targets:
                    try:
                        # open_connection sets TCP_NODELAY: no 40 ms stalls between a request's header and body
                        reader, writer = await asyncio.open_connection(target, port, limit=1 << 22)
                        return _Stream(reader, writer)
                    except OSError as e:
                        error = e
                raise error
        except TimeoutError as e:
            raise httpcore.ConnectTimeout(str(e)) from e
        except OSError as e:
            raise httpcore.ConnectError(str(e)) from e

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.UnsupportedProtocol("seats connect over TCP only")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _public_addresses(host: str, port: int) -> list[str]:
    """The host's addresses, every one checked public; _AddressRefused naming the rule otherwise."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise httpcore.ConnectError(f"the host {host} does not resolve ({e})") from e
    try:
        return egress.public_only(host, list(dict.fromkeys(info[4][0] for info in infos)))
    except ValueError as e:
        raise _AddressRefused(f"refused to connect: {e}; {egress.RULE}") from None


class SeatTransport(httpx.AsyncBaseTransport):
    """An httpx transport over a pooled httpcore connection pool on asyncio streams. Reads each
    answer whole (seat replies are small) before handing it back. private_ok: connect to whatever the
    host resolves to (the operator vouched for the URL); otherwise public addresses only."""

    def __init__(self, *, max_connections: int, ssl_context: ssl.SSLContext, private_ok: bool = False):
        self.pool = httpcore.AsyncConnectionPool(ssl_context=ssl_context, max_connections=max_connections,
                                                 max_keepalive_connections=max_connections,
                                                 keepalive_expiry=60.0, network_backend=_Backend(private_ok))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        req = httpcore.Request(method=request.method,
                               url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port,
                                                target=url.raw_path),
                               headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        try:
            resp = await self.pool.handle_async_request(req)
            try:
                content = await resp.aread()
            finally:
                await resp.aclose()
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.UnsupportedProtocol,
                httpcore.ProtocolError) as e:
            raise _mapped(e) from e
        return httpx.Response(resp.status, headers=resp.headers, content=content, extensions=resp.extensions)

    async def aclose(self) -> None:
        await self.pool.aclose()


def _mapped(e: Exception) -> httpx.HTTPError:
    for core_exc, httpx_exc in _EXCEPTIONS:
        if isinstance(e, core_exc):
            return httpx_exc(str(e))
    return httpx.TransportError(str(e))
