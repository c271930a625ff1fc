"""The one place where failures become the error envelope {error, message} (docs/api.md, "Bodies and errors")."""
from __future__ import annotations

import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from analytics.archive.damage import Damaged
from api.deps import off_loop
from orchestrator.errors import DomainError
from orchestrator.runs import match_log
from orchestrator.store import OperationalError, Unstorable, unavailable

log = logging.getLogger("studio.api")


def client_address(request: Request) -> str | None:
    return request.client.host if request.client else None


def envelope(error: DomainError, headers: dict | None = None) -> JSONResponse:
    headers = dict(headers or {})
    if error.retry_after_s is not None:
        headers["Retry-After"] = str(error.retry_after_s)
    return JSONResponse(error.envelope(), status_code=error.status, headers=headers)


async def _domain(request: Request, exc: DomainError) -> JSONResponse:
    # Refusals (401/403) count against the client address; past its ceiling they become 429.
    core = request.app.state.core
    return envelope(await off_loop(core, core.address_limiter.refuse, client_address(request), exc))


async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    if exc.status_code == 404:
        err = DomainError("not_found", f"no route {request.method} {request.url.path}; GET /api/v1 lists the endpoints")
    elif exc.status_code == 405:
        allow = _allowed(request) or (exc.headers or {}).get("Allow", "")
        err = DomainError("method_not_allowed", f"{request.method} is not allowed on {request.url.path}; "
                          f"allowed: {allow}")
        return envelope(err, {**(exc.headers or {}), "Allow": allow})
    elif exc.status_code < 500:
        err = DomainError("bad_request", str(exc.detail))
    else:
        err = DomainError("internal_error", "the server failed; retry once, then report it")
    return envelope(err, exc.headers)


def _allowed(request: Request) -> str:
    """Every documented method on the path: the router's own Allow names only the first route it matched."""
    for template, operations in request.app.openapi()["paths"].items():
        if re.fullmatch(re.sub(r"{\w+}", "[^/]+", template), request.url.path):
            return ", ".join(m.upper() for m in operations)
    return ""


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    # Bodies are validated by the service core; this covers path and query parameters only. Never 422.
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return envelope(DomainError("bad_request", f"{where}: {first.get('msg', 'invalid request')}"))


class CrashGuard:
    """Unhandled exceptions become the 500 envelope here, and stop here. (Starlette's own handler for
    Exception answers, then re-raises to the server, which closes the connection: the client's next
    request on that keep-alive connection would meet a reset.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)
        try:
            await self.app(scope, receive, watch)
        except Exception as e:
            retry_after_s = unavailable(e)
            if isinstance(e, Unstorable):
                log.info("%s on %s %s: answered 400", e, scope.get("method"), scope.get("path"))
            elif isinstance(e, Damaged):
                log.error("%s on %s %s", e, scope.get("method"), scope.get("path"))
            elif retry_after_s is None:
                log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            else:
                log.warning("the store refused a write on %s %s (%s): answered 503", scope.get("method"),
                            scope.get("path"), e)
            if started:  # half a response is on the wire: only closing the connection ends it honestly
                raise
            await envelope(failure(e))(scope, receive, send)


def failure(e: Exception) -> DomainError:
    """A held write lock or a full disk is 503 `unavailable` with Retry-After (nothing was changed and
    the same request can succeed later); a damaged archive file met by a read the core does not refuse
    itself (a series' summary, say) is 410 `archive_damaged` naming it; any other failure is 500
    `internal_error`."""
    if isinstance(e, Damaged):
        return match_log.damaged(e)
    if isinstance(e, Unstorable):
        return DomainError("bad_request", str(e))
    retry_after_s = unavailable(e)
    if retry_after_s is not None:
        return DomainError("unavailable", f"the store refused the change for now ({e}); nothing was changed: "
                           f"retry after {retry_after_s} s", retry_after_s=retry_after_s)
    if isinstance(e, OperationalError):
        return DomainError("internal_error", f"the store refused the change ({e}); nothing was changed: retry "
                           "once, then report it to the operator")
    return DomainError("internal_error", "the server failed; retry once, then report it")


def install(app: FastAPI) -> None:
    app.add_exception_handler(DomainError, _domain)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_middleware(CrashGuard)
