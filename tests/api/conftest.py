"""A real uvicorn server on 127.0.0.1 for the whole session, plus accounts and tokens made through
the service core on the same data dir (as the admin CLI would, while the server runs)."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from api.app import create_app
from tests import postgres
from tests.api.util import free_port, start_server
from orchestrator import accounts, auth
from orchestrator.core import Core

# The session server lifts lab's per-token ceiling (schemathesis sends thousands of requests on one
# token) and the per-address ceiling (the auth matrix sends hundreds of refusals from 127.0.0.1).
# Both ceilings are tested on their own, with the defaults, in test_ratelimit.py.
CONFIG = """
[plans.lab]
requests_per_minute = 1000000
[limits]
refused_per_address_per_minute = 1000000
"""


@dataclass
class Live:
    url: str
    data_dir: Path
    core: Core           # a second Core on the server's data dir, like the admin CLI
    server: uvicorn.Server


def _live(data_dir: Path, config: str):
    data_dir.mkdir()
    (data_dir / "config.toml").write_text(config)
    port = free_port()
    server, thread = start_server(create_app(data_dir), port)
    yield Live(url=f"http://127.0.0.1:{port}", data_dir=data_dir, core=Core.open(data_dir), server=server)
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def live(tmp_path_factory) -> Live:
    yield from _live(tmp_path_factory.mktemp("studio") / "data", CONFIG)


@pytest.fixture(scope="session")
def live_pg(tmp_path_factory) -> Live:
    """The same server with its control plane on PostgreSQL (`[store] url`), a database of its own."""
    if postgres.server_url() is None:
        pytest.skip(postgres.HOW)
    with postgres.database() as url:
        yield from _live(tmp_path_factory.mktemp("studio-pg") / "data", CONFIG + f'[store]\nurl = "{url}"\n')


@pytest.fixture(scope="session")
def client(live) -> httpx.Client:
    with httpx.Client(base_url=live.url, timeout=10) as c:
        yield c


_seq = itertools.count()


@dataclass
class Account:
    email: str
    plan: str
    core: Core

    def token(self, scopes: tuple[str, ...] = auth.SCOPES, expires_in_ms: int | None = None, name: str = "t") -> str:
        plaintext, _ = auth.mint(self.core, self.email, name=name, scopes=scopes, expires_in_ms=expires_in_ms)
        return plaintext


@pytest.fixture
def make_account(live):
    """make_account(plan) -> a fresh Account on the live server's data dir."""
    def make(plan: str = "lab", verified: bool = True) -> Account:
        email = f"user{next(_seq)}-{time.time_ns()}@example.org"
        accounts.create_account(live.core, email, plan=plan, verified=verified)
        return Account(email=email, plan=plan, core=live.core)
    return make


@pytest.fixture
def lab_token(make_account) -> str:
    return make_account("lab").token()
