"""The seat's HTTP client: one pooled httpx.AsyncClient per seat, on its event loop, that connects to public
addresses only unless the credential allows private ones."""
from __future__ import annotations

import ssl
from functools import lru_cache
from importlib import metadata

import certifi
import httpx

from orchestrator.seats.transport import SeatTransport


def _user_agent() -> str:
    try:
        return f"ScenarioStudio/{metadata.version('scenario-studio')}"
    except metadata.PackageNotFoundError:
        return "ScenarioStudio"


USER_AGENT = _user_agent()


@lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    # loading the CA bundle costs ~15 ms; every client shares one context
    return ssl.create_default_context(cafile=certifi.where())


class PooledClient(httpx.AsyncClient):
    """An httpx.AsyncClient whose pooled transport (`pool`, keep-alive across ticks) the seat path
    calls directly: a turn needs none of the client's per-request machinery (auth flows, redirects,
    cookies, URL merging). The transport is SeatTransport: httpcore's
    pool on asyncio streams. Closing the client closes the pool."""

    def __init__(self, max_connections: int = 8, timeout_s: float = 60.0, ssl_context: ssl.SSLContext | None = None,
                 private_ok: bool = False):
        self.pool = SeatTransport(max_connections=max_connections, ssl_context=ssl_context or _tls(),
                                  private_ok=private_ok)
        super().__init__(transport=self.pool, timeout=httpx.Timeout(timeout_s))


def new_client(max_connections: int = 8, ssl_context: ssl.SSLContext | None = None, *,
               private_ok: bool = False) -> PooledClient:
    """A pooled client. Give each seat its own: httpcore's pool does work proportional to its open
    connections on every request, so one pool shared by a hundred concurrent seats costs more than
    the requests themselves. It connects to public addresses only unless private_ok (the credential's
    own permission, docs/api.md)."""
    return PooledClient(max_connections, ssl_context=ssl_context, private_ok=private_ok)
