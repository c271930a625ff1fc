"""Servers that play runs: a real uvicorn on 127.0.0.1 with the dispatcher and a session-wide local
Ray (4 logical CPUs on any machine, so two servers can each hold two workers)."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from orchestrator import accounts, auth
from orchestrator.core import Core
from orchestrator.clock import Clock
from tests.api.util import bearer, free_port, start_server
from tests.waiting import until

ALL_SCOPES = ("scenarios:read", "scenarios:write", "runs:read", "runs:write")
CONFIG = """
[plans.lab]
requests_per_minute = 1000000
[limits]
refused_per_address_per_minute = 1000000
"""
PACED = CONFIG + "\n[runs]\nmin_tick_ms = 20\n"  # 20 ms a tick: a run is caught while it plays
TERMINAL = ("finished", "failed", "cancelled")


@dataclass
class Server:
    url: str
    data_dir: Path
    core: Core           # a second Core on the data dir, as the admin CLI would open
    stop: object
    app: object = None

    @property
    def dispatcher(self):
        return self.app.state.core.dispatcher

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=bearer(token), timeout=30)


def start(data_dir: Path, config: str = CONFIG, dispatch: bool = True, clock: Clock | None = None) -> Server:
    """With `clock` (a ManualClock), the server and the returned admin Core read the time from it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text(config)
    port = free_port()
    app = create_app(core=Core.open(data_dir, clock=clock), dispatch=dispatch, workers=2)
    server, thread = start_server(app, port)

    def stop():
        server.should_exit = True
        thread.join(timeout=20)
    return Server(f"http://127.0.0.1:{port}", data_dir, Core.open(data_dir, clock=clock), stop, app)


@pytest.fixture(scope="session", autouse=True)
def ray_session(ray_pool):
    yield


@pytest.fixture(scope="session")
def srv(shared_srv) -> Server:
    return shared_srv


@pytest.fixture(scope="session")
def paced(tmp_path_factory) -> Server:
    """Runs at 20 ms a tick, so a test catches a run while it plays (a 2000-tick run plays for 40 s)."""
    s = start(tmp_path_factory.mktemp("paced") / "data", PACED)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def idle(tmp_path_factory) -> Server:
    """A server with no dispatcher: runs stay queued."""
    s = start(tmp_path_factory.mktemp("idle") / "data", dispatch=False)
    yield s
    s.stop()


_seq = itertools.count()


def account(core: Core, plan: str = "lab", scopes=ALL_SCOPES, verified: bool = True) -> str:
    email = f"runs{next(_seq)}-{time.monotonic_ns()}@example.com"
    accounts.create_account(core, email, plan=plan, verified=verified)
    token, _ = auth.mint(core, email, scopes=scopes)
    return token


@pytest.fixture
def lab(srv) -> httpx.Client:
    with srv.client(account(srv.core)) as c:
        yield c


def wait_terminal(c: httpx.Client, run_id: str, timeout: float = 60) -> dict:
    def ended():
        body = c.get(f"/api/v1/runs/{run_id}").json()
        return body if body["run"]["status"] in TERMINAL else None
    return until(ended, timeout, what=f"the end of run {run_id}")


def local_body(**over) -> dict:
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 60,
            "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]}
    body.update(over)
    return body
