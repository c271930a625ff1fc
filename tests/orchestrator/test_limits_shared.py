"""Limits hold across heads: two Cores on one store (two Store objects on one data dir, or two
connections to one PostgreSQL database, as two heads have) share one token's per-minute ceiling
exactly, the per-address ceiling on refused requests, console sign-in attempts, and an account's queue
slots. A store that refuses the count for now (a held write lock) costs the request no wait: the head
counts alone."""
from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from orchestrator import accounts, auth, console_auth
from orchestrator.clock import ManualClock
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.plans import load_plans
from orchestrator.runs import service
from orchestrator.store import Store
from orchestrator.store.postgres import PostgresStore

MINUTE = 60_000
CONFIG = {"plans": {"starter": {"requests_per_minute": 40, "queued_runs": 3}}, "limits": {}}


def _store(kind: str, where, data_dir):
    if kind == "sqlite":
        return Store(data_dir)
    store = PostgresStore(where, busy_timeout_s=5)
    store.data_dir = data_dir  # a head keeps its mail and secrets beside a PostgreSQL store
    data_dir.mkdir(parents=True, exist_ok=True)
    return store


@pytest.fixture(params=["sqlite", "postgresql"])
def heads(request, tmp_path):
    """Two Cores on one store, reading one clock 15 s into a minute."""
    where = None if request.param == "sqlite" else request.getfixturevalue("pg_url")
    clock = ManualClock(1000 * MINUTE + 15_000)
    cores = [Core(store=_store(request.param, where, tmp_path / "data"), plans=load_plans(CONFIG), config=CONFIG, clock=clock)
             for _ in range(2)]
    yield cores
    for c in cores:
        c.store.close()


def _token(core: Core, plan: str = "starter") -> str:
    email = f"lim-{time.monotonic_ns()}@example.org"
    accounts.create_account(core, email, plan=plan, verified=True)
    return auth.mint(core, email, scopes=("runs:read", "runs:write", "scenarios:read"))[0]


def test_one_tokens_ceiling_is_shared_exactly_by_two_heads(heads):
    a, b = heads
    token = _token(a)
    for k in range(40):  # requests alternate between the heads: 20 each, 40 in all
        auth.authenticate(heads[k % 2], token)
    for core in heads:
        with pytest.raises(DomainError) as e:
            auth.authenticate(core, token)
        # as one head answers it: the plan's ceiling, and Retry-After until the minute rolls
        assert (e.value.code, e.value.status, e.value.retry_after_s) == ("rate_limited", 429, 45)
        assert "ceiling of 40 requests per minute" in e.value.message
    assert auth.authenticate(b, _token(b)).plan["requests_per_minute"] == 40  # tokens count separately

    a.clock.advance(MINUTE)  # the next minute starts from zero on both; now both heads at once
    passed, refused, lock = [], [], threading.Lock()

    def hammer(core: Core) -> None:
        for _ in range(30):
            try:
                auth.authenticate(core, token)
                got = passed
            except DomainError as e:
                got = refused
                assert e.code == "rate_limited"
            with lock:
                got.append(core)

    threads = [threading.Thread(target=hammer, args=(core,)) for core in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(passed) == 40 and len(refused) == 80  # 120 requests against a ceiling of 40


def test_the_refused_per_address_ceiling_is_shared(heads):
    a, b = heads
    for core in heads:
        core.address_limiter.ceiling = 5
    refusal = DomainError("token_required", "no token")
    answers = [(a if k % 2 else b).address_limiter.refuse("10.0.0.7", refusal) for k in range(8)]
    assert [e is refusal for e in answers] == [True] * 5 + [False] * 3
    assert answers[-1].code == "rate_limited" and answers[-1].retry_after_s == 45
    assert b.address_limiter.refuse("10.0.0.8", refusal) is refusal  # per address
    a.clock.advance(MINUTE)
    assert a.address_limiter.refuse("10.0.0.7", refusal) is refusal


def test_console_sign_in_attempts_are_counted_across_heads(heads):
    def attempt(core: Core) -> str:
        try:
            console_auth.redeem_link(core, "not-a-link", "10.0.0.9")
        except DomainError as e:
            return e.code
        return "signed in"

    answers = [attempt(heads[k % 2]) for k in range(12)]  # ten a minute per address, by default
    assert answers == ["sign_in_failed"] * 10 + ["rate_limited"] * 2


def test_queue_slots_are_counted_across_heads(heads):
    a, b = heads
    principal = auth.verify(a, _token(a))
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
            "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]}
    outcomes, lock = [], threading.Lock()

    def launch(core: Core) -> None:
        try:
            service.launch(core, principal, dict(body))
            result = "launched"
        except DomainError as e:
            result = e.code
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=launch, args=(core,)) for core in (a, b) * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["launched"] * 3 + ["too_many_runs"] * 3


def test_a_held_write_lock_does_not_delay_the_count(tmp_path):
    core = Core.open(tmp_path / "data", clock=ManualClock(1000 * MINUTE))
    core.plans["starter"]["requests_per_minute"] = 3
    token = _token(core)

    def requests(n: int) -> list[str]:
        out = []
        for _ in range(n):
            try:
                auth.authenticate(core, token)
                out.append("ok")
            except DomainError as e:
                out.append(e.code)
        return out

    assert requests(1) == ["ok"]  # counted in the store
    other = sqlite3.connect(core.store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        started = time.monotonic()
        # counted in this head's memory meanwhile, on top of the store's count it last read
        assert requests(4) == ["ok", "ok", "rate_limited", "rate_limited"]
        assert time.monotonic() - started < 1.0
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert requests(1) == ["rate_limited"]  # the store's 2 plus the 4 kept here, until the minute rolls
    core.clock.advance(MINUTE)
    assert requests(4) == ["ok"] * 3 + ["rate_limited"]
