"""create_app(): assembles the REST API and the MCP server over one service core. Nothing here decides a rule."""
from __future__ import annotations

from pathlib import Path

from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles

from api import errors, openapi
from api.headers import SecurityHeaders
from api.limits import BodyLimit
from api import mcp as mcp_surface
from api.console import routes as console
from api.routes import agents, analysis, discovery, health, matches, runs, scenarios, skills
from orchestrator.runs.agent_turns import SeatActions
from orchestrator.core import Core
from orchestrator.ids import head_id
from orchestrator.runs.admission.body import RunBody
from orchestrator.scenarios import ScenarioBody, ScenarioPatch
from orchestrator.skills import SkillBody, SkillPatch

API_VERSION = "1.0.0"


ARENA_ASSETS = "/arena/assets"


def create_app(data_dir: str | Path | None = None, *, core: Core | None = None,
               refused_per_address_per_minute: int | None = None, dispatch: bool = False,
               ray_address: str | None = None, num_cpus: int | None = None, workers: int | None = None,
               mcp_allowed_hosts: list[str] | None = None) -> FastAPI:
    """One app per data dir; pass `core` to share a Core that is already open. With `dispatch`, the
    app plays runs while it holds the store's dispatcher lease: it starts (or joins) Ray and the
    dispatcher on start-up, or once another head gives the lease up, and stops them on shutdown.
    The MCP server at /mcp/studio runs in the same app; `mcp_allowed_hosts` (else config.toml's
    [mcp] allowed_hosts) turns on its DNS-rebinding protection for those Host values."""
    if core is None:
        if data_dir is None:
            raise ValueError("create_app needs data_dir or core")
        core = Core.open(data_dir, refused_per_address_per_minute=refused_per_address_per_minute)
    mcp_config = core.config.get("mcp") or {}
    # Built here, per app: its session manager runs once, and tests start several apps in one process.
    mcp = mcp_surface.build(core, version=API_VERSION,
                            allowed_hosts=mcp_allowed_hosts or mcp_config.get("allowed_hosts"),
                            allowed_origins=mcp_config.get("allowed_origins"))

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        duty = None
        from orchestrator.mail import Mailer

        mailer = Mailer(core)  # notices leave in the background, with retries
        mailer.start()
        if dispatch:  # plays runs while this head holds the dispatcher lease
            from orchestrator.runs.head.duty import Duty

            duty = Duty(core, head=app.state.head, ray_address=ray_address, num_cpus=num_cpus, workers=workers)
            app.state.duty = duty.start()
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            if duty is not None:
                app.state.duty = None
                duty.stop()
            mailer.stop()
            core.last_used.stop()

    # telemetry off: the service exports none, and FastAPI's native OpenTelemetry looked up the global
    # providers (environment variables) on every request
    app = FastAPI(title="Scenario Studio API", version=API_VERSION, lifespan=lifespan,
                  telemetry={"tracing": False, "metrics": False, "logs": False},
                  description="Author scenarios and launch and read runs. Errors are {error, message}.",
                  openapi_url="/api/v1/openapi.json", docs_url=None, redoc_url=None)
    app.state.core = core
    app.state.head = head_id()
    app.state.duty = None  # the head's dispatching duty, while it plays runs or waits to
    app.add_middleware(BodyLimit)
    errors.install(app)
    app.add_middleware(SecurityHeaders, head=app.state.head)  # added last: outermost, so error answers carry the headers too
    for module in (discovery, health, scenarios, skills, runs, agents, analysis, matches):
        app.include_router(module.router)
    openapi.install(app, [ScenarioBody, ScenarioPatch, SkillBody, SkillPatch, RunBody, SeatActions])
    # The web console and Swagger UI use only assets served from here (no CDN): both work offline.
    app.mount("/console/static", StaticFiles(directory=Path(console.__file__).parent / "static"), name="console-static")
    console.install(app)

    @app.get("/api/v1/docs", include_in_schema=False)
    async def docs():
        return get_swagger_ui_html(openapi_url=app.openapi_url, title=app.title,
                                   swagger_js_url="/console/static/swagger/swagger-ui-bundle.js",
                                   swagger_css_url="/console/static/swagger/swagger-ui.css",
                                   swagger_favicon_url="/console/static/swagger/favicon-32x32.png")
    # Plain Starlette routes, after the API routes: no redirect on the bare path, absent from OpenAPI.
    app.router.routes.extend(mcp.routes)
    # the arena match pages' board (vendored from npm: no CDN, the pages work offline)
    app.mount(ARENA_ASSETS, StaticFiles(directory=Path(__file__).parent / "static" / "vendor"), name="arena-assets")
    return app
