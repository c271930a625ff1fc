"""Security headers on every response, set in this one place (issue 30, "Security"); a response that
already set one keeps its own.

The policy admits code and requests from this origin only (htmx, the arena board and Swagger UI are
served from here) and keeps every page out of other sites' frames (clickjacking). Inline scripts and
styles stay allowed because the pages carry a few (Swagger UI's start-up, the replay player, htmx's
indicator style). Console pages are `no-store`, so a shared or back-button cache never shows a
signed-in page after sign-out. `X-Studio-Head` names the process that answered: several heads serve
one service behind a load balancer.
"""
from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
       "form-action 'self'; frame-ancestors 'none'")
EVERY = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Content-Security-Policy": CSP}
CONSOLE = {"Cache-Control": "no-store"}


def _console_page(path: str) -> bool:
    return (path == "/console" or path.startswith("/console/")) and not path.startswith("/console/static/")


class SecurityHeaders:
    def __init__(self, app: ASGIApp, head: str) -> None:
        self.app = app
        self.every = {**EVERY, "X-Studio-Head": head}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = {**self.every, **CONSOLE} if _console_page(scope["path"]) else self.every

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in extra.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
