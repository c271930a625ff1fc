"""The methods every Studio shares, the REST client's and the server's in-process one: tool names as
methods, waiting for a run or a series, playing an agent seat, forking. A subclass says how one call
is made (`call`) and which exception carries a refusal's code (`refusal`)."""
from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Callable

from studio_client.operations import ACTIVE, BATCH_PREFIX, MAX_WAIT_MS, OPERATIONS, TERMINAL


class StudioError(Exception):
    """A refusal in the service's envelope: `code` (bad_roster, unknown_run, ...), `message`, the HTTP
    `status`, and `retry_after_s` on rate_limited and unavailable."""

    def __init__(self, code: str, message: str, status: int, retry_after_s: int | None = None):
        super().__init__(message)
        self.code, self.message, self.status, self.retry_after_s = code, message, status, retry_after_s

    def __repr__(self) -> str:
        return f"StudioError({self.code!r}, {self.message!r})"


class Tools:
    wait_cap_ms = MAX_WAIT_MS  # the longest get_batch long-poll one call asks for
    refusal: type[Exception] = StudioError

    def call(self, tool: str, **args) -> dict:
        raise NotImplementedError

    def __getattr__(self, name: str):
        if name in OPERATIONS:
            return lambda **args: self.call(name, **args)
        raise AttributeError(f"Studio has no method {name!r}; the tools are: {', '.join(OPERATIONS)}")

    def __dir__(self):
        return list(super().__dir__()) + list(OPERATIONS)

    def wait(self, run_id: str, timeout_s: float = 600, poll_s: float = 0.2) -> dict:
        """Until the run ends, polling get_run; returns {run, results}. A series' batch_id (bat_...) is
        waited for by wait_series."""
        if run_id.startswith(BATCH_PREFIX):
            return self.wait_series(run_id, timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            body = self.call("get_run", id=run_id)
            status = body["run"]["status"]
            if status in TERMINAL and (body["results"] is not None or status != "finished"):
                return body
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} is still {status} after {timeout_s} s")
            time.sleep(poll_s)

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
            except self.refusal as e:
                if e.code != "turn_closed":
                    raise

    def fork(self, run_id: str, tick: int, seats: dict | None = None, trials: int | None = None,
             control: bool | None = None, **more) -> dict:
        """Fork an ended world run at `tick` (docs/FORKS.md): the fork_run tool. seats maps a seat index
        (int or str) to its new roster seat; more: name, max_spend_usd, grading."""
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

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
