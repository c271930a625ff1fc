"""A fresh data dir and Core per test; accounts and principals made through the service core."""
from __future__ import annotations

import itertools

import pytest

from orchestrator import accounts, auth
from orchestrator.core import Core

_seq = itertools.count()


@pytest.fixture
def core(tmp_path) -> Core:
    return Core.open(tmp_path / "data")


@pytest.fixture
def principal(core):
    """principal(plan, scopes) -> (Principal, email, plaintext token)."""
    def make(plan: str = "lab", scopes: tuple[str, ...] = auth.SCOPES):
        email = f"u{next(_seq)}@example.org"
        accounts.create_account(core, email, plan=plan)
        token, _ = auth.mint(core, email, scopes=scopes)
        return auth.verify(core, token), email, token
    return make
