"""Request dependencies: the caller (core + Principal from Bearer or x-api-key) and the JSON body.

One dependency per route does all of the auth: FastAPI's per-dependency overhead is larger than the
work (header parsing, one indexed SQLite read), and the token path is the hottest in the service.
It is async so it runs on the event loop instead of costing a threadpool hop on SQLite, whose reads and
per-minute count are local; on PostgreSQL they are network round trips, which `off_loop` takes to a
worker thread so that no request's wait for the database holds every other request on the loop.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Callable

import anyio
from fastapi import Depends, Request
from starlette.datastructures import Headers

from api.limits import MAX_BODY_BYTES, too_large
from orchestrator import auth
from orchestrator.core import Core
from orchestrator.errors import DomainError



@dataclass(frozen=True)
class Caller:
    core: Core
    principal: auth.Principal


def token_from(headers: Headers) -> str | None:
    """Authorization: Bearer <token>, else x-api-key: <token>. Other schemes carry no token."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return headers.get("x-api-key") or None


async def off_loop(core: Core, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) where its store calls belong: at once on SQLite (a local file, cheaper than the thread
    hop), on a worker thread when the store is across the network."""
    if core.store.dialect == "sqlite":
        return fn(*args)
    return await anyio.to_thread.run_sync(fn, *args)


def caller(scope: str | None = None, *, write: bool = False) -> Callable[..., Any]:
    """A route dependency: authenticate, then check scope (and plan for writes) before the body is
    read, so a refused caller learns about its token, not its JSON. The service checks again."""
    async def dependency(request: Request) -> Caller:
        core: Core = request.app.state.core
        # one indexed read and the per-minute count, plus a last-used write at most every 30 s per token
        principal = await off_loop(core, auth.authenticate, core, token_from(request.headers))
        if scope is not None:
            auth.require(principal, scope, write=write)
        return Caller(core, principal)
    return dependency


AnyToken = Annotated[Caller, Depends(caller())]


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def json_body(request: Request) -> Any:
    raw = await request.body()  # the BodyLimit middleware has refused anything over the path's ceiling
    if len(raw) > MAX_BODY_BYTES:
        raise too_large(MAX_BODY_BYTES)
    try:
        text = raw.decode("utf-8")  # the API: bodies are UTF-8 (json.loads(bytes) would take UTF-16 too)
    except UnicodeDecodeError:
        raise DomainError("bad_request", "the body is not UTF-8; send UTF-8 JSON with content-type: "
                          "application/json") from None
    try:
        return json.loads(text, parse_constant=_no_constants)
    except RecursionError:  # nesting deeper than the parser's stack
        raise DomainError("bad_request", "the body nests too deeply to be a run or scenario; send a flat JSON "
                          "object") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise DomainError("bad_request", f"the body is not JSON ({e}); send a JSON object with "
                          "content-type: application/json") from None


BodyDep = Annotated[Any, Depends(json_body)]
