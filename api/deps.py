"""Request dependencies: the core, the caller's Principal (Bearer or x-api-key), the JSON body."""
from __future__ import annotations

import json
from typing import Annotated, Any, Callable

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from orchestrator import auth
from orchestrator.core import Core
from orchestrator.errors import DomainError

MAX_BODY_BYTES = 64 * 1024

# auto_error=False: these only read the headers (and document both schemes in OpenAPI);
# every refusal is the service core's token_required, never FastAPI's own 403.
_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer dsk_...")
_api_key = APIKeyHeader(name="x-api-key", auto_error=False, description="x-api-key: dsk_...")


def get_core(request: Request) -> Core:
    return request.app.state.core


CoreDep = Annotated[Core, Depends(get_core)]


def principal(core: CoreDep,
              bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
              api_key: Annotated[str | None, Security(_api_key)]) -> auth.Principal:
    token = bearer.credentials if bearer else api_key
    return auth.authenticate(core, token)


PrincipalDep = Annotated[auth.Principal, Depends(principal)]


def scoped(scope: str, *, write: bool = False) -> Callable[..., auth.Principal]:
    """A route dependency that checks scope (and plan for writes) before the body is even read,
    so a refused caller learns about its token, not about its JSON. The service checks again."""
    def dependency(p: PrincipalDep) -> auth.Principal:
        auth.require(p, scope, write=write)
        return p
    return dependency


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise DomainError("bad_request", f"the body is {len(raw)} bytes; send at most {MAX_BODY_BYTES}")
    try:
        return json.loads(raw, parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError) as e:
        raise DomainError("bad_request", f"the body is not JSON ({e}); send a JSON object with "
                          "content-type: application/json") from None


BodyDep = Annotated[Any, Depends(json_body)]
