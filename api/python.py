"""The Python surface, for notebooks and scripts: the MCP tools' table as methods.

    from api.python import Studio
    studio = Studio.connect("http://127.0.0.1:8000", token="dsk_...")   # a running `studio serve`
    studio = Studio("./studio-data", token="dsk_...", play=True)       # no server: play runs here

Every method is a tool of CONTRACT.md section 5 with the same arguments (the REST body's fields,
flat, plus `id`), and raises orchestrator.errors.DomainError with REST's code and message when
refused. Three ways to reach a data dir:

- `Studio.connect(url, token)`: over HTTP to a running server (its MCP endpoint, so every call goes
  through the server's own checks, rate limits included); the server plays the runs.
- `Studio(data_dir, token)`: in this process, beside a running server or without one; launched runs
  wait for whoever plays the data dir (that server, or a process with play=True).
  `read_only=True` refuses every tool that writes, for analysis next to a live service.
- `Studio(data_dir, token, play=True)`: also plays runs here; only one process may play a data dir,
  so this is refused with a clear message while `studio serve` runs on it.

`play_seat(run_id, seat, policy)` plays an agent seat (CONTRACT.md section 13) with a function of the
turn; its turns reach the process that plays the run, so use it on `Studio.connect(...)` or on a
Studio opened with play=True (docs/AGENTS.md).
"""
from __future__ import annotations

import asyncio
import base64
import inspect
import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from api.mcp.arguments import invoke
from api.mcp.tools import BY_NAME
from orchestrator import auth
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.statuses import ACTIVE, FINISHED, TERMINAL
from orchestrator.runs.series.read import BATCH_PREFIX, MAX_WAIT_MS


class DataDirBusy(RuntimeError):
    """play=True on a data dir that another process (a running `studio serve`) already plays."""


class ReadOnly(RuntimeError):
    """A writing tool called on a Studio opened with read_only=True."""


class _Tools:
    """Tool names as methods, and waiting for a run; subclasses say how one call is made."""

    wait_cap_ms = MAX_WAIT_MS  # the longest get_batch long-poll one call asks for

    def call(self, tool: str, **args) -> dict:
        raise NotImplementedError

    def __getattr__(self, name: str):
        if name in BY_NAME:
            return lambda **args: self.call(name, **args)
        raise AttributeError(f"Studio has no method {name!r}; the tools are: {', '.join(BY_NAME)}")

    def __dir__(self):
        return list(super().__dir__()) + list(BY_NAME)

    def wait(self, run_id: str, timeout_s: float = 600, poll_s: float = 0.2) -> dict:
        """Until the run ends, polling get_run; returns {run, results}. A series' batch_id (bat_...) is
        waited for by wait_series."""
        if run_id.startswith(BATCH_PREFIX):
            return self.wait_series(run_id, timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            body = self.call("get_run", id=run_id)
            if body["run"]["status"] in TERMINAL and (body["results"] is not None or body["run"]["status"] != FINISHED):
                return body
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} is still {body['run']['status']} after {timeout_s} s")
            time.sleep(poll_s)

    def play_seat(self, run_id: str, seat: int, policy: Callable[[dict], list], *, wait_ms: int = 20_000) -> dict:
        """Play an agent seat (provider "agent") until its run ends: for each open turn, `policy(turn)`
        returns the actions to submit (the turn is get_seat_turn's answer: observation {text, state},
        tick, deadline_ms, actions_per_turn, directions). A turn whose deadline passed while the policy
        thought is skipped (that tick played with the seat waiting). Returns wait()'s {run, results}."""
        while True:
            turn = self.call("get_seat_turn", run_id=run_id, seat=seat, wait_ms=wait_ms)
            if turn["status"] == "ended":
                return self.wait(run_id)
            if turn["status"] != "your_turn":
                continue
            actions = policy(turn)
            try:
                self.call("submit_seat_actions", run_id=run_id, seat=seat, tick=turn["tick"], actions=actions)
            except DomainError as e:
                if e.code != "turn_closed":
                    raise

    def fork(self, run_id: str, tick: int, seats: dict | None = None, trials: int | None = None,
             control: bool | None = None, **more) -> dict:
        """Fork an ended world run at `tick` (CONTRACT.md section 16): the fork_run tool. seats maps a
        seat index (int or str) to its new roster seat; more: name, max_spend_usd, grading."""
        args = {"run_id": run_id, "tick": tick, "trials": trials, "control": control, **more,
                "seats": None if seats is None else {str(k): v for k, v in seats.items()}}
        return self.call("fork_run", **{k: v for k, v in args.items() if v is not None})

    def bundle(self, id: str, path: str | Path | None = None) -> bytes:
        """A run's (run_...) or a series' (bat_...) result bundle, the zip `studio verify` checks offline:
        export_run with format "bundle". path: where to write it as well."""
        data = base64.b64decode(self.call("export_run", id=id, format="bundle")["base64"])
        if path is not None:
            Path(path).write_bytes(data)
        return data

    def wait_series(self, batch_id: str, timeout_s: float = 600) -> dict:
        """Until no run of the series is left to play, following it through get_batch's long-poll (one
        call per change of the series, not one per run); returns {batch} with its final summary."""
        deadline = time.monotonic() + timeout_s
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            body = self.call("get_batch", id=batch_id, wait_ms=min(max(left_ms, 0), self.wait_cap_ms))
            if body["batch"]["status"] not in ACTIVE:
                return body
            if left_ms <= 0:
                raise TimeoutError(f"series {batch_id} is still {body['batch']['status']} after {timeout_s} s "
                                   f"({body['batch']['counts']})")

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Studio(_Tools):
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
    def connect(url: str, token: str, *, timeout_s: float = 60) -> "RemoteStudio":
        """The same methods over HTTP to a running server at ``url`` (e.g. http://127.0.0.1:8000)."""
        return RemoteStudio(url, token, timeout_s=timeout_s)

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
    from orchestrator import datadir
    from orchestrator.runs.head.dispatcher import Dispatcher

    dispatcher = Dispatcher(core, ray_address=ray_address, workers=workers)
    try:
        dispatcher.start()
    except datadir.Busy as e:
        raise DataDirBusy(
            f"another process (pid {e.holder}) already plays the runs of {core.data_dir.resolve()} (a running "
            "`studio serve`?). Use Studio.connect('http://127.0.0.1:8000', token=...) to work through it, or "
            "drop play=True to read and launch here while that process plays the runs.") from None
    return dispatcher


class RemoteStudio(_Tools):
    """Studio over HTTP: each method is a tools/call on the server's MCP endpoint (stateless, JSON)."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 60):
        import httpx

        self.url = url.rstrip("/")
        self.token = token
        self.wait_cap_ms = min(MAX_WAIT_MS, int(timeout_s * 500))  # a long-poll answers well within the timeout
        self._ids = itertools.count(1)
        self._http = httpx.Client(timeout=timeout_s, headers={
            "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json"})

    def call(self, tool: str, **args) -> dict:
        import httpx

        if tool not in BY_NAME:
            raise AttributeError(f"Studio has no method {tool!r}; the tools are: {', '.join(BY_NAME)}")
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call",
                   "params": {"name": tool, "arguments": args}}
        try:
            reply = self._http.post(f"{self.url}/mcp/studio", json=request)
        except httpx.TransportError as e:
            raise ConnectionError(f"no Scenario Studio answers at {self.url} ({e}); is `studio serve` running?") from None
        try:
            message = reply.json()
        except ValueError:
            raise ConnectionError(f"{self.url}/mcp/studio answered HTTP {reply.status_code} with no JSON; "
                                  "is this a Scenario Studio server?") from None
        if "error" in message:  # refused at the transport: a malformed, unknown, revoked or expired token
            error = message["error"]
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            raise DomainError(data.get("error", "token_required"), data.get("message", error.get("message", "")))
        result = message["result"]
        body = result.get("structuredContent")
        if body is None:
            body = json.loads(result["content"][0]["text"])
        if result.get("isError"):
            raise DomainError(body["error"], body["message"], retry_after_s=body.get("retry_after_s"))
        return body

    def close(self) -> None:
        self._http.close()
