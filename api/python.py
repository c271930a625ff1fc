"""The Python surface inside the service's own process, for notebooks and scripts beside a data dir:
the MCP tools' table as methods, with the same checks as REST (a refusal raises DomainError with REST's
code and message).

    studio = Studio("./studio-data", token="dsk_...", play=True)       # no server: play runs here
    studio = Studio.connect("http://127.0.0.1:8000", token="dsk_...")   # a running `studio serve`

Launched runs wait for whoever plays the data dir (one process at most plays it). `connect` gives the
REST client of the `scenario-studio-client` distribution (docs/client.md), whose Tools also give this
class its waits, forks and agent seats.
"""
from __future__ import annotations

import asyncio
import inspect
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import studio_client
from studio_client.tools import Tools

from api.mcp.arguments import invoke
from api.mcp.tools import BY_NAME
from orchestrator import auth
from orchestrator.core import Core
from orchestrator.errors import DomainError


class DataDirBusy(RuntimeError):
    """play=True on a data dir that another process (a running `studio serve`) already plays."""


class ReadOnly(RuntimeError):
    """A writing tool called on a Studio opened with read_only=True."""


class Studio(Tools):
    refusal = DomainError

    def __init__(self, data_dir: str | Path, token: str, *, play: bool = False, read_only: bool = False,
                 ray_address: str | None = None, workers: int | None = None):
        if play and read_only:
            raise ValueError("play=True writes run results; it cannot be read_only")
        self.core = Core.open(data_dir)
        self.token = token
        self.read_only = read_only
        self._dispatcher = None
        if play:
            self._dispatcher = _start_dispatcher(self.core, ray_address, workers)

    @staticmethod
    def connect(url: str, token: str, *, timeout_s: float = 120) -> studio_client.Studio:
        """The same methods over REST to a running server at ``url`` (e.g. http://127.0.0.1:8000)."""
        return studio_client.Studio(url, token, timeout_s=timeout_s)

    def call(self, tool: str, **args) -> dict:
        """One tool call: token, scope (and plan for writes), then the service function."""
        spec = BY_NAME[tool]
        if self.read_only and not spec.read_only:
            raise ReadOnly(f"{tool} writes to the data dir and this Studio is read_only; use "
                           "Studio.connect(url, token) to write through the running server")
        principal = auth.authenticate(self.core, self.token)
        if spec.scope is not None:
            auth.require(principal, spec.scope, write=spec.write)
        return _resolved(invoke(spec, self.core, principal, args))

    def play_seat(self, run_id: str, seat: int, policy: Callable[[dict], list], *, wait_ms: int = 20_000) -> dict:
        if self._dispatcher is None:  # the turns open in the process that plays the run, not here
            raise RuntimeError("play_seat needs the process that plays the run: use Studio.connect(url, token) "
                               "to play through a running server, or open this Studio with play=True")
        return super().play_seat(run_id, seat, policy, wait_ms=wait_ms)

    def close(self) -> None:
        if self._dispatcher is not None:
            self._dispatcher.stop()
            self._dispatcher = None


def _resolved(result):
    """A tool's answer; an agent seat's turn tools answer a coroutine, run here to its end (on a loop
    of its own when this thread already runs one, as a notebook's does)."""
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(result)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, result).result()


def _start_dispatcher(core: Core, ray_address: str | None, workers: int | None):
    from orchestrator.runs.head.duty import Busy, Duty

    try:
        return Duty(core, ray_address=ray_address, workers=workers).start(wait=False)
    except Busy as e:
        raise DataDirBusy(
            f"another process (head {e.holder}) already plays the runs of {core.data_dir.resolve()} (a running "
            "`studio serve`?). Use Studio.connect('http://127.0.0.1:8000', token=...) to work through it, or "
            "drop play=True to read and launch here while that process plays the runs.") from None
