"""The body ceiling, enforced before any route runs: a Content-Length over it is refused without
reading a byte, and a body sent without one (chunked) is read only up to the ceiling. What passes is
handed on whole, so routes (REST and the MCP endpoint alike) never see more than the ceiling.
"""
from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.errors import DomainError

MAX_BODY_BYTES = 64 * 1024
# Tool arguments are at most a 64 KiB body (the tools check it with REST's message) plus JSON-RPC's
# envelope and escaping.
MAX_MCP_BYTES = 256 * 1024


def ceiling(path: str) -> int:
    return MAX_MCP_BYTES if path.startswith("/mcp/") else MAX_BODY_BYTES


def too_large(limit: int) -> DomainError:
    return DomainError("bad_request", f"the body is larger than {limit} bytes; send at most {limit}")


class BodyLimit:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = ceiling(scope["path"])
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await self._refuse(limit, scope, receive, send)
            return
        body, first_other = bytearray(), None
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: the app sees that
                first_other = message
                break
            body += message.get("body", b"")
            if len(body) > limit:
                await self._refuse(limit, scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                if first_other is not None:
                    return first_other
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()
        await self.app(scope, replay, send)

    async def _refuse(self, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
        # The rest of the body stays unread; the server closes the connection after this answer.
        err = too_large(limit)
        await JSONResponse(err.envelope(), status_code=err.status, headers={"Connection": "close"})(
            scope, receive, send)
