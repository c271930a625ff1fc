"""The Python surface, for notebooks and scripts: the MCP tools' table as methods.

    from api.python import Studio
    studio = Studio("./studio-data", token="dsk_...", play=True)   # play: run the dispatcher here
    run = studio.launch_run(scenario_id="svc:custom-base-v1", roster=[{"model": "local/random"}])["run"]
    studio.wait(run["run_id"])["results"]

Every method is a tool of CONTRACT.md section 5 with the same arguments (the REST body's fields,
flat, plus `id`), calls the same service function through the same checks, and raises
orchestrator.errors.DomainError with REST's code and message when refused. Point it at the data dir
of a running `studio serve` to read and launch there (that server plays the runs), or pass
play=True to play runs in this process (only one process may play a data dir's runs at a time).
"""
from __future__ import annotations

import time
from pathlib import Path

from api.mcp.tools import BY_NAME, invoke
from orchestrator import auth
from orchestrator.core import Core
from orchestrator.runs.ledger import TERMINAL


class Studio:
    def __init__(self, data_dir: str | Path, token: str, *, play: bool = False, ray_address: str | None = None,
                 workers: int | None = None):
        self.core = Core.open(data_dir)
        self.token = token
        self._dispatcher = None
        if play:
            from orchestrator.runs.dispatcher import Dispatcher

            self._dispatcher = Dispatcher(self.core, ray_address=ray_address, workers=workers)
            self._dispatcher.start()

    def call(self, tool: str, **args) -> dict:
        """One tool call: token, scope (and plan for writes), then the service function."""
        spec = BY_NAME[tool]
        principal = auth.authenticate(self.core, self.token)
        if spec.scope is not None:
            auth.require(principal, spec.scope, write=spec.write)
        return invoke(spec, self.core, principal, args)

    def __getattr__(self, name: str):
        if name in BY_NAME:
            return lambda **args: self.call(name, **args)
        raise AttributeError(f"Studio has no method {name!r}; the tools are: {', '.join(BY_NAME)}")

    def __dir__(self):
        return list(super().__dir__()) + list(BY_NAME)

    def wait(self, run_id: str, timeout_s: float = 600, poll_s: float = 0.2) -> dict:
        """Poll get_run until the run ends; returns {run, results}."""
        deadline = time.monotonic() + timeout_s
        while True:
            body = self.call("get_run", id=run_id)
            if body["run"]["status"] in TERMINAL and (body["results"] is not None or body["run"]["status"] != "finished"):
                return body
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} is still {body['run']['status']} after {timeout_s} s")
            time.sleep(poll_s)

    def close(self) -> None:
        if self._dispatcher is not None:
            self._dispatcher.stop()
            self._dispatcher = None

    def __enter__(self) -> "Studio":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
