"""The web console (CONTRACT.md section 10): one router per resource, over api/console/pages.py. Each
page calls the same service functions as REST; a refusal is shown on the page with SPEC.md's message
instead of the JSON envelope, and a browser with no live session is sent to sign in."""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse

from api.console import (arena, developer, downloads, forks, home, keys, pages, play, runs, scenarios, series,
                         signin, skills, transcript)

# Starlette takes the first route that matches, so order matters only where two paths overlap; each
# router keeps its own overlaps in order (the builder's /console/runs/new before /console/runs/{run_id}).
ROUTERS = (signin.router, home.router, developer.router, keys.router, transcript.router, downloads.router,
           forks.router, runs.router, series.router,
           play.router, scenarios.router, skills.router, arena.router)
ICON = Path(__file__).parent / "static" / "favicon.svg"


async def favicon() -> FileResponse:
    # browsers ask for /favicon.ico on every page, the API's and the public match pages' included
    return FileResponse(ICON, media_type="image/svg+xml")


async def no_such_page(request: Request):
    """Any other /console path: the console's own 404 page, signed in or not (it shows nothing private)."""
    return pages.not_found(request, pages.optional_session(request), "This page does not exist.")


def install(app: FastAPI) -> None:
    app.add_exception_handler(pages.SignIn, pages.to_sign_in)
    for router in ROUTERS:
        app.include_router(router)
    app.add_api_route("/favicon.ico", favicon, include_in_schema=False)
    # last, so every console route above is matched first
    app.add_api_route("/console/{rest:path}", no_such_page, methods=["GET", "POST"], include_in_schema=False)
