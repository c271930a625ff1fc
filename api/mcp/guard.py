"""The transport guard in front of /mcp/studio (docs/api.md).

A request whose header carries a token that is malformed, unknown, revoked or expired is refused here,
before any JSON-RPC method runs, with a JSON-RPC error naming token_required. A request with no token
passes: tools then take the api_key argument. A good header token's Principal is handed to the tools
through scope["state"], so a call does one token lookup, not two.
"""
from __future__ import annotations

import json

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from api.deps import off_loop, token_from
from api.mcp.server import PRINCIPAL_KEY, rpc_code
from orchestrator import auth
from orchestrator.core import Core
from orchestrator.errors import DomainError

MAX_PEEK_BYTES = 1024 * 1024  # a refused request's body is read only to echo its JSON-RPC id


class Guard:
    def __init__(self, core: Core, app: ASGIApp):
        self.core = core
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            # Stateless and JSON-only: there is no session to stream to (GET) or end (DELETE). The SDK
            # would hold a GET open forever; the spec lets a server answer 405 instead.
            error = DomainError("method_not_allowed", f"{scope['method']} is not allowed on {scope['path']}; "
                                "allowed: POST (MCP Streamable HTTP, JSON responses, no sessions)")
            await JSONResponse(error.envelope(), status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        token = token_from(Headers(scope=scope))
        if token is not None:
            try:
                # verify, not authenticate: the per-token ceiling counts tool calls (one per REST request's
                # worth of work), not every JSON-RPC message of the exchange.
                principal = await off_loop(self.core, auth.verify, self.core, token)
            except DomainError as e:
                client = scope.get("client")
                await self._refuse(await off_loop(self.core, self.core.address_limiter.refuse,
                                                  client[0] if client else None, e), scope, receive, send)
                return
            scope.setdefault("state", {})[PRINCIPAL_KEY] = principal
        await self.app(scope, receive, send)

    async def _refuse(self, error: DomainError, scope: Scope, receive: Receive, send: Send) -> None:
        body = {"jsonrpc": "2.0", "id": await _request_id(receive),
                "error": {"code": rpc_code(error), "message": f"{error.code}: {error.message}",
                          "data": error.envelope()}}
        headers = {"WWW-Authenticate": 'Bearer realm="studio"'} if error.status == 401 else {}
        if error.retry_after_s is not None:
            headers["Retry-After"] = str(error.retry_after_s)
        # The status is REST's (401, or 429 past the per-address ceiling); the SDK client reads a JSON-RPC
        # error body at any status, so the caller sees the code and message.
        await JSONResponse(body, status_code=error.status, headers=headers)(scope, receive, send)


async def _request_id(receive: Receive) -> str | int | None:
    raw, more = b"", True
    while more and len(raw) <= MAX_PEEK_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return None
        raw += message.get("body", b"")
        more = message.get("more_body", False)
    try:
        request = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    rid = request.get("id") if isinstance(request, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
