"""A fresh data dir and Core per test, on either store; accounts and principals made through the service core."""
from __future__ import annotations

import itertools

import pytest

from orchestrator import accounts, auth
from orchestrator.core import Core

_seq = itertools.count()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def core(request, tmp_path) -> Core:
    """The service core on each store: SQLite in the data dir, and a PostgreSQL database of the test's
    own named by the data dir's config.toml (the postgres tier)."""
    return open_core(tmp_path / "data", request.getfixturevalue("pg_url") if request.param == "postgresql" else None)


def open_core(data_dir, url: str | None) -> Core:
    if url is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        (data_dir / "config.toml").write_text(f'[store]\nurl = "{url}"\n')
    return Core.open(data_dir)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    """The bare store on either database: the repositories' contract tests take it."""
    from orchestrator.store import Store
    from orchestrator.store.postgres import PostgresStore

    s = Store(tmp_path / "d") if request.param == "sqlite" else PostgresStore(request.getfixturevalue("pg_url"),
                                                                             busy_timeout_s=5)
    yield s
    s.close()


@pytest.fixture
def principal(core):
    """principal(plan, scopes) -> (Principal, email, plaintext token)."""
    def make(plan: str = "lab", scopes: tuple[str, ...] = auth.SCOPES):
        email = f"u{next(_seq)}@example.org"
        accounts.create_account(core, email, plan=plan)
        token, _ = auth.mint(core, email, scopes=scopes)
        return auth.verify(core, token), email, token
    return make
