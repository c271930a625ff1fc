"""The MCP server: the SDK's low-level Server with our tool table, the scenario-schema resource, and the
translation of service results and refusals into tool results.

The low-level Server is used rather than MCPServer because MCPServer validates (and coerces)
arguments against the tool function's signature before the tool runs; here the raw arguments reach
the core, which is what makes every refusal identical to REST's.
"""
from __future__ import annotations

import inspect
import json
import logging
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from api.deps import off_loop
from api.errors import failure
from api.mcp.arguments import invoke, invoke_follow
from api.mcp.schemas import input_schema, output_schema
from api.mcp.tools import BY_NAME, TOOLS, ToolSpec
from orchestrator import auth, listing
from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.errors import DomainError

log = logging.getLogger("studio.mcp")

PRINCIPAL_KEY = "studio_principal"  # scope["state"] key: the header token's Principal, set by the guard
SCHEMA_URI = listing.SCHEMA_ID      # svc://studio/scenario-schema

INSTRUCTIONS = (
    "Scenario Studio: author scenarios (environment definitions on the base world svc:custom-base-v1), launch "
    "scored runs in which model or scripted agents play them, and read the results. Typical flow: whoami (plan "
    "and limits) -> get_scenario_schema -> validate_scenario -> create_scenario (or pick a shipped scenario with "
    "list_library) -> estimate_run -> launch_run -> get_run every few seconds until run.status is finished, "
    "failed or cancelled -> read results (null until the match archives, usually seconds after it finishes). "
    "Seats with model local/honest-trader, local/greedy-harvester, local/aggressive-raider or local/random are "
    "scripted, free and need no provider key; a seat with provider agent is played by your own program through "
    "get_seat_turn and submit_seat_actions. Authenticate with the Authorization: Bearer header or an api_key "
    "argument on any tool. A refused call is a tool error whose text is {\"error\": code, \"message\": ...}; the "
    "message names the field or limit and what to send instead."
)


def rpc_code(error: DomainError) -> int:
    """JSON-RPC code for a refusal outside a tool (transport guard, resource read): -31000 - HTTP status.
    Application-defined, outside JSON-RPC's reserved -32768..-32000 where the SDK keeps its own codes."""
    return -31000 - error.status


def _dumps(body: Any) -> str:
    # The bytes REST sends (Starlette's JSONResponse): compact, UTF-8.
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def ok(body: dict) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=_dumps(body))], structured_content=body)


def refused(error: DomainError) -> types.CallToolResult:
    envelope = error.envelope()
    return types.CallToolResult(content=[types.TextContent(type="text", text=_dumps(envelope))],
                                structured_content=envelope, is_error=True)


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name, title=spec.title, description=spec.description, input_schema=input_schema(spec),
        output_schema=output_schema(spec),
        annotations=types.ToolAnnotations(title=spec.title, read_only_hint=spec.read_only,
                                          destructive_hint=None if spec.read_only else spec.destructive,
                                          idempotent_hint=None if spec.read_only else spec.idempotent,
                                          open_world_hint=spec.open_world))


_UNSET = object()


def principal_for(core: Core, api_key: Any, header: Principal | None) -> Principal:
    """The api_key argument when given (it names the token for this call), else the header's token,
    which the guard has verified; either way the call counts against the token's per-minute ceiling."""
    if api_key is not _UNSET and api_key is not None:
        if not isinstance(api_key, str):
            raise DomainError("token_required", "api_key: send the access token as a string (dsk_ followed by 64 "
                              "hex characters)")
        return auth.authenticate(core, api_key)
    if header is None:
        return auth.authenticate(core, None)  # token_required, with REST's message
    core.token_limiter.hit(header.token_id, header.plan["requests_per_minute"])
    return header


def _allowed(core: Core, spec: ToolSpec, args: dict, header: Principal | None) -> Principal:
    """What one REST request checks first: token, then scope (and plan for writes)."""
    principal = principal_for(core, args.pop("api_key", _UNSET), header)
    if spec.scope is not None:
        auth.require(principal, spec.scope, write=spec.write)
    return principal


def _call(core: Core, name: str, args: dict, header: Principal | None) -> dict:
    spec = BY_NAME[name]
    return invoke(spec, core, _allowed(core, spec, args, header), args)


async def _follow(core: Core, spec: ToolSpec, args: dict, header: Principal | None) -> dict:
    # as REST's route: the token's checks where the store's calls belong (off_loop), then a wait on the
    # event loop that holds no thread
    return await invoke_follow(spec, core, await off_loop(core, _allowed, core, spec, args, header), args)


def _request_facts(ctx) -> tuple[str | None, Principal | None]:
    request = ctx.request
    if request is None:  # not over HTTP (in-process tests of the Server object)
        return None, None
    address = request.client.host if request.client else None
    return address, request.scope.get("state", {}).get(PRINCIPAL_KEY)


def build_server(core: Core, version: str) -> Server:
    tool_list = [_tool(spec) for spec in TOOLS]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in BY_NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool '{params.name}'; tools/list names them")
        address, header = _request_facts(ctx)
        spec = BY_NAME[params.name]
        try:
            if spec.follow is not None:
                body = await _follow(core, spec, dict(params.arguments or {}), header)
            else:
                # Service functions are synchronous (SQLite, the write lock, cancel's wait): off the event loop.
                body = await anyio.to_thread.run_sync(_call, core, params.name, dict(params.arguments or {}), header)
                if inspect.isawaitable(body):  # an agent seat's turn: awaited here, so a long-poll holds no thread
                    body = await body
        except DomainError as e:
            # As REST's handler: 401/403 count against the client address and become 429 past its ceiling.
            return refused(core.address_limiter.refuse(address, e))
        except Exception as e:
            log.exception("tool %s failed", params.name)
            return refused(failure(e))  # as REST: a held write lock or a full disk is `unavailable`
        return ok(body)

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(
            uri=SCHEMA_URI, name="scenario-schema", title="Scenario definition JSON Schema",
            description="The same document as the get_scenario_schema tool. Needs a token with scenarios:read "
                        "in the Authorization header (tools also take an api_key argument).",
            mime_type="application/schema+json")])

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != SCHEMA_URI:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown resource {params.uri}; resources/list "
                           "names them")
        address, header = _request_facts(ctx)
        try:
            schema = listing.scenario_schema(principal_for(core, _UNSET, header))
        except DomainError as e:
            e = core.address_limiter.refuse(address, e)
            raise MCPError(code=rpc_code(e), message=f"{e.code}: {e.message}", data=e.envelope()) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=SCHEMA_URI, text=_dumps(schema), mime_type="application/schema+json")])

    return Server("scenario-studio", version=version, title="Scenario Studio", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
                  on_read_resource=read_resource)
