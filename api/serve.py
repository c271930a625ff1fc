"""`studio serve`: one process running the whole service under uvicorn on one data dir."""
from __future__ import annotations

import os
import signal

import uvicorn

from api.app import create_app
from orchestrator.bootstrap import bootstrap_owner, is_first_start, reuse_notice
from orchestrator.core import Core


def serve(*, host: str, port: int, data_dir: str, ray_address: str | None = None, bootstrap: bool = True,
          log_level: str = "info") -> int:
    first_start = is_first_start(data_dir)
    core = Core.open(data_dir)  # creates the data dir and migrates the store before any request
    if first_start and bootstrap:
        account, token = bootstrap_owner(core)
        print(f"studio: new data dir {core.data_dir.resolve()}; owner account {account['email']} (plan lab).\n"
              "studio: owner API token (full scope), shown once; store it now:\n"
              f"{token}", flush=True)
    elif not first_start:
        print(reuse_notice(core), flush=True)
    ray_address = ray_address or os.environ.get("RAY_ADDRESS")
    # Ray installs its own SIGTERM handler when it starts; starting it before uvicorn lets uvicorn's
    # graceful shutdown (and the quiet handler below) win, so a stop still closes the dispatcher.
    from orchestrator.workers import init_ray

    init_ray(ray_address)
    app = create_app(core=core, dispatch=True, ray_address=ray_address)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, workers=1))
    # uvicorn catches SIGINT/SIGTERM, finishes in-flight requests, then re-raises the signal to the
    # handler that was installed before it. Installing a quiet one here turns that into a normal
    # return, so an operator's stop exits 0 instead of dying by the signal.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    server.run()
    return 0 if server.started else 1  # uvicorn logs why it could not start (port taken, ...)

