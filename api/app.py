"""create_app(): assembles the REST API over one service core. Nothing here decides a rule."""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from api import errors, openapi
from api.routes import discovery, scenarios, skills
from orchestrator.core import Core
from orchestrator.scenarios import ScenarioBody, ScenarioPatch
from orchestrator.skills import SkillBody, SkillPatch

API_VERSION = "1.0.0"


def create_app(data_dir: str | Path | None = None, *, core: Core | None = None,
               refused_per_address_per_minute: int | None = None) -> FastAPI:
    """One app per data dir; pass `core` to share a Core that is already open."""
    if core is None:
        if data_dir is None:
            raise ValueError("create_app needs data_dir or core")
        core = Core.open(data_dir, refused_per_address_per_minute=refused_per_address_per_minute)
    app = FastAPI(title="Scenario Studio API", version=API_VERSION,
                  description="Author scenarios and launch and read runs. Errors are {error, message}.",
                  openapi_url="/api/v1/openapi.json", docs_url="/api/v1/docs", redoc_url=None)
    app.state.core = core
    errors.install(app)
    for module in (discovery, scenarios, skills):
        app.include_router(module.router)
    openapi.install(app, [ScenarioBody, ScenarioPatch, SkillBody, SkillPatch])
    return app
