"""The one place where failures become the error envelope {error, message} (SPEC.md "Errors")."""
from __future__ import annotations

import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from orchestrator.errors import DomainError

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
    return envelope(request.app.state.core.address_limiter.refuse(client_address(request), exc))


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


async def _crash(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return envelope(DomainError("internal_error", "the server failed; retry once, then report it"))


def install(app: FastAPI) -> None:
    app.add_exception_handler(DomainError, _domain)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(Exception, _crash)
