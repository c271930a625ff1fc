"""The MCP surface at /mcp/studio: Streamable HTTP, stateless, JSON responses, in the REST app's process.

    surface = build(core, version="1.0.0")
    app.router.routes.extend(surface.routes)      # plain routes: no 307 on the bare path, not in OpenAPI
    async with surface.session_manager.run(): ... # in the app's lifespan; runs once, so build per app

Stateless means no session lives in memory between requests, so any worker can serve any request and a
plain POST of tools/list works without an initialize handshake. Legacy clients (the initialize
handshake, protocol 2025-11-25 and before) and current ones (per-request envelopes) are both served.
"""
from __future__ import annotations

from dataclasses import dataclass

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from api.limits import MAX_MCP_BYTES
from api.mcp.guard import Guard
from api.mcp.server import build_server
from orchestrator.core import Core

PATH = "/mcp/studio"
# The app's body limit (BodyLimit) refuses larger bodies with the error envelope before they reach the SDK.
MAX_REQUEST_BYTES = MAX_MCP_BYTES


@dataclass
class Surface:
    server: Server
    session_manager: StreamableHTTPSessionManager
    routes: list[Route]


def security(allowed_hosts: list[str] | None, allowed_origins: list[str] | None) -> TransportSecuritySettings:
    """DNS-rebinding protection (Host and Origin checks) when the operator names the hosts the service
    is reached by ([mcp] allowed_hosts in config.toml), off otherwise.

    Off is deliberate, not an oversight: rebinding lets a web page reach a server on the victim's
    machine, which matters for servers that trust the caller's network position. Every tool here
    needs an access token sent explicitly (no cookies, no ambient authority), so a rebound page gets
    nothing a direct request would not; and a default list of localhost names would refuse (421) every
    production deployment reached by its public host name until configured.
    """
    for name, value in (("allowed_hosts", allowed_hosts), ("allowed_origins", allowed_origins)):
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ValueError(f"config.toml: mcp.{name} must be a list of strings, like [\"studio.example.org\"]")
    if not allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = allowed_origins if allowed_origins is not None else [
        f"{scheme}://{host}" for host in allowed_hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=list(allowed_hosts),
                                     allowed_origins=origins)


def build(core: Core, *, version: str, allowed_hosts: list[str] | None = None,
          allowed_origins: list[str] | None = None) -> Surface:
    server = build_server(core, version)
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True,
                                           security_settings=security(allowed_hosts, allowed_origins),
                                           max_request_body_size=MAX_REQUEST_BYTES)
    guard = Guard(core, manager.handle_request)
    # The bare path and the trailing-slash spelling both serve: SDK clients do not follow a 307 on POST.
    return Surface(server, manager, [Route(PATH, endpoint=guard), Route(PATH + "/", endpoint=guard)])
