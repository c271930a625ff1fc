"""A tool call's raw arguments split into what its service function takes, by the tool's shape."""
from __future__ import annotations

import json

from api.limits import MAX_BODY_BYTES, too_large
from api.mcp.tools import QUERY, SEAT_TURN_QUERY, TRANSCRIPT_QUERY, ToolSpec
from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.errors import DomainError


def _take_id(args: dict, name: str = "id") -> str:
    value = _take(args, name)
    if not isinstance(value, str):
        raise DomainError("bad_request", f"{name}: should be a string")
    return value


def _take(args: dict, name: str):
    if args.get(name) is None:
        raise DomainError("bad_request", f"{name} is required")
    return args.pop(name)


def _no_more(args: dict, allowed: tuple[str, ...]) -> None:
    # REST ignores unknown query parameters, but a tool argument that does nothing is a caller's typo.
    for name in args:
        raise DomainError("bad_request", f"unknown argument '{name}'; allowed arguments: "
                          f"{', '.join((*allowed, 'api_key'))}")


def _sized(body: dict) -> dict:
    # REST refuses bodies over MAX_BODY_BYTES (api/limits.py); measure the body as compact JSON.
    size = len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_BODY_BYTES:
        raise too_large(MAX_BODY_BYTES)
    return body


def _query(args: dict, query: dict) -> dict:
    _no_more({k: v for k, v in args.items() if k not in query}, tuple(query))
    for name in (n for n, schema in query.items() if "string" in schema["type"]):
        if args.get(name) is not None and not isinstance(args[name], str):
            raise DomainError("bad_request", f"{name}: should be a string")
    return args  # null means absent, as an omitted query parameter; the service checks the values


def invoke(spec: ToolSpec, core: Core, principal: Principal, args: dict) -> dict:
    """Call the tool's service function with `args` (api_key already removed), split by its shape."""
    if spec.shape == "none":
        _no_more(args, ())
        return spec.call(core, principal)
    if spec.shape == "id":
        ident = _take_id(args)
        _no_more(args, ("id",))
        return spec.call(core, principal, ident)
    if spec.shape == "body":
        return spec.call(core, principal, _sized(args))
    if spec.shape == "id_body":
        ident = _take_id(args)
        return spec.call(core, principal, ident, _sized(args))
    if spec.shape == "id_query":
        ident, query = _id_query(spec, args)
        return spec.call(core, principal, ident, **query)
    if spec.shape in ("seat_query", "seat_body"):  # a coroutine: the transport awaits it
        run_id, seat = _take_id(args, "run_id"), _take(args, "seat")
        if spec.shape == "seat_body":
            return spec.call(core, principal, run_id, seat, _sized(args))
        _no_more({k: v for k, v in args.items() if k != "wait_ms"}, tuple(SEAT_TURN_QUERY))
        return spec.call(core, principal, run_id, seat, wait_ms=args.get("wait_ms"))
    return spec.call(core, principal, **_query(args, spec.query or QUERY))


def _id_query(spec: ToolSpec, args: dict) -> tuple[str, dict]:
    ident = _take_id(args)
    query = spec.query or TRANSCRIPT_QUERY
    _no_more({k: v for k, v in args.items() if k not in query}, ("id", *query))
    return ident, args


async def invoke_follow(spec: ToolSpec, core: Core, principal: Principal, args: dict) -> dict:
    """invoke() for a tool that may wait: its coroutine twin, on the caller's event loop."""
    ident, query = _id_query(spec, args)
    return await spec.follow(core, principal, ident, **query)
