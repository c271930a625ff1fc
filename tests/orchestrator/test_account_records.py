"""The account-side records and their repositories: what a record refuses when built, and each
repository's round trip through a real store."""
from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from orchestrator import accounts, auth
from orchestrator.records.account import Account
from orchestrator.records.key import ProviderKey
from orchestrator.records.scenario import Scenario
from orchestrator.records.skill import Skill
from orchestrator.records.token import Token
from orchestrator.store import accounts as account_rows
from orchestrator.store import keys as key_rows
from orchestrator.store import outbox, scenarios, sessions, skills, tokens


def _token(**over) -> Token:
    return Token(**{"id": "tok_1", "account_id": "acc_1", "name": "t", "prefix": "dsk_01234567",
                    "scopes": ("runs:read",), "created_at_ms": 1, "expires_at_ms": None, "revoked_at_ms": None,
                    "last_used_at_ms": None, **over})


def _key(**over) -> ProviderKey:
    return ProviderKey(**{"owner": "platform", "provider": "openai", "ciphertext": b"x", "created_at_ms": 1, **over})


def test_records_refuse_what_the_rules_would_refuse():
    with pytest.raises(ValidationError):
        _token(scopes=("runs:read", "admin:everything"))
    with pytest.raises(ValidationError):
        _token(created_at_ms=-1)
    with pytest.raises(ValidationError):
        _key(balance_usd=float("inf"))
    with pytest.raises(ValidationError, match="unknown provider"):
        _key(provider="local")  # a provider that takes no key
    with pytest.raises(ValidationError):
        _key(usd_per_mtok=(1.0, 20_000.0))
    with pytest.raises(ValidationError):
        _key(check_status="fine")
    with pytest.raises(ValidationError):
        Skill(id="usk_1", account_id="acc_1", name="n", text="x" * 2001, created_at_ms=1, updated_at_ms=None)
    with pytest.raises(ValidationError):  # frozen
        _token().name = "other"


def test_token_status_and_view():
    t = _token(expires_at_ms=100)
    assert t.status(99) == "active" and t.status(100) == "expired"
    assert _token(revoked_at_ms=5).view(0)["status"] == "revoked"
    assert t.view(0)["scopes"] == ["runs:read"]


def test_accounts_tokens_and_sessions_round_trip(core):
    made = accounts.create_account(core, "Round@Example.org", plan="pro")
    c = core.store.conn()
    account = account_rows.get(c, made["id"])
    assert isinstance(account, Account) and account.email == "round@example.org" and account.plan == "pro"
    assert account_rows.by_email(c, "round@example.org") == account and account_rows.handle_taken(c, "round")
    plaintext, _ = auth.mint(core, "round@example.org", scopes=("runs:read",))
    held, owner = tokens.holder(c, auth.hash_token(plaintext))
    assert owner == account and held.scopes == ("runs:read",) and held.prefix == plaintext[:12]
    assert [e.kind for e in account_rows.events(c, account.id)] == ["token_minted"]
    assert outbox.notices(c, "round@example.org")[0].subject.startswith("New API token")
    with core.store.write() as w:
        tokens.note_used(w, {held.id: 50})
        tokens.note_used(w, {held.id: 40})  # an older use keeps the newer time
        sessions.open_session(w, "h" * 64, account.id, "csrf", 7)
    assert tokens.get(c, held.id).last_used_at_ms == 50
    assert sessions.live(c, "h" * 64).email == account.email
    with core.store.write() as w:
        sessions.revoke_all(w, account.id, 8)
    assert sessions.live(c, "h" * 64) is None


def test_scenarios_skills_and_keys_round_trip(core):
    account = accounts.create_account(core, "s@example.org")
    s = Scenario(id="usc_1", account_id=account["id"], name="one", description="", season_ticks=50,
                 env={"seed": 3, "goods": ["a"]}, hash="h1", created_at_ms=1, updated_at_ms=None)
    k = _key(owner=account["id"], provider="router", models=("m/a",), usd_per_mtok=(1.0, 2.0), balance_usd=3.0)
    with core.store.write() as w:
        scenarios.insert(w, s)
        skills.insert(w, Skill(id="usk_1", account_id=account["id"], name="sk", text="t" * 10, created_at_ms=1,
                               updated_at_ms=None))
        key_rows.put(w, k, 1)
    c = core.store.conn()
    assert scenarios.get(c, "usc_1") == s and scenarios.get(c, "usc_1", "acc_other") is None
    assert scenarios.same(c, account["id"], "one", "h1") == s and scenarios.count(c, account["id"]) == 1
    assert skills.own(c, "usk_1", account["id"]).text == "t" * 10
    assert key_rows.of_owner(c, account["id"]) == [k]


def test_a_stored_infinite_key_price_reads_as_null(core):
    """An earlier version could store Infinity in a key's money columns; it reads as null (the doctor
    repairs it) instead of failing every listing of the account's keys."""
    account = accounts.create_account(core, "inf@example.org")
    with core.store.write() as w:
        key_rows.put(w, _key(owner=account["id"], balance_usd=1.0, usd_per_mtok=(1.0, 2.0)), 1)
        w.execute("UPDATE provider_keys SET balance_usd = ?, usd_per_mtok_in = ?", (math.inf, math.inf))
    [k] = key_rows.of_owner(core.store.conn(), account["id"])
    assert k.balance_usd is None and k.usd_per_mtok is None
