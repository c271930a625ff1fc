"""The web console (CONTRACT.md section 10): one router per resource, over api/console/pages.py. Each
page calls the same service functions as REST; a refusal is shown on the page with SPEC.md's message
instead of the JSON envelope, and a browser with no live session is sent to sign in."""
from __future__ import annotations

from fastapi import FastAPI

from api.console import arena, developer, home, keys, pages, runs, scenarios, signin, skills, transcript

# Starlette takes the first route that matches, so order matters only where two paths overlap; each
# router keeps its own overlaps in order (the builder's /console/runs/new before /console/runs/{run_id}).
ROUTERS = (signin.router, home.router, developer.router, keys.router, transcript.router, runs.router,
           scenarios.router, skills.router, arena.router)


def install(app: FastAPI) -> None:
    app.add_exception_handler(pages.SignIn, pages.to_sign_in)
    for router in ROUTERS:
        app.include_router(router)
