"""Tokens: format, hash-only storage, scopes and implications, expiry, revocation, last used, allowance,
security events and notices. No HTTP: the checks are plain functions every surface calls."""
from __future__ import annotations

import re
import threading
import time

import pytest

from orchestrator import accounts, auth, mail, outbox
from orchestrator.errors import AdminError, DomainError


def test_token_format_and_only_the_hash_is_stored(core):
    accounts.create_account(core, "a@example.org", plan="pro")
    token, listing = auth.mint(core, "a@example.org", name="ci")
    assert re.fullmatch(r"dsk_[0-9a-f]{64}", token)
    assert listing["prefix"] == token[:12] and listing["status"] == "active"
    rows = core.store.all("SELECT * FROM tokens")
    assert len(rows) == 1 and rows[0]["token_hash"] == auth.hash_token(token)
    stored = " ".join(str(v) for v in dict(rows[0]).values())
    assert token not in stored and token[12:] not in stored
    db = b"".join(p.read_bytes() for p in core.data_dir.glob("studio.db*"))
    assert token.encode() not in db


def test_scope_implications_and_minted_scopes(core, principal):
    p, _, _ = principal(scopes=("scenarios:write", "runs:write"))
    assert p.scopes == ("scenarios:write", "runs:write")
    assert p.granted == {"scenarios:write", "scenarios:read", "runs:write", "runs:read"}
    reader, _, _ = principal(scopes=("scenarios:read",))
    auth.require(reader, "scenarios:read")
    with pytest.raises(DomainError) as e:
        auth.require(reader, "scenarios:write", write=True)
    assert e.value.code == "scope_required"


def test_scope_is_checked_before_plan(principal):
    free_reader, _, _ = principal("free", ("runs:read",))
    with pytest.raises(DomainError) as e:
        auth.require(free_reader, "scenarios:write", write=True)
    assert e.value.code == "scope_required"
    free_writer, _, _ = principal("free", ("scenarios:write",))
    with pytest.raises(DomainError) as e:
        auth.require(free_writer, "scenarios:write", write=True)
    assert (e.value.code, e.value.status) == ("plan_api", 403)


@pytest.mark.parametrize("bad", [None, "", "dsk_", "dsk_" + "g" * 64, "DSK_" + "a" * 64, "dsk_" + "A" * 64,
                                 "dsk_" + "a" * 63, "dsk_" + "a" * 65, "xyz_" + "a" * 64])
def test_malformed_tokens_are_token_required(core, bad):
    with pytest.raises(DomainError) as e:
        auth.verify(core, bad)
    assert (e.value.code, e.value.status) == ("token_required", 401)


def test_expiry_and_revocation(core):
    accounts.create_account(core, "b@example.org", plan="pro")
    token, listing = auth.mint(core, "b@example.org", expires_in_ms=1000)
    now = listing["created_at_ms"]
    auth.verify(core, token, now=now + 999)
    with pytest.raises(DomainError, match="expired"):
        auth.verify(core, token, now=now + 1000)
    other, _ = auth.mint(core, "b@example.org")
    auth.revoke(core, "b@example.org", other[:12])
    with pytest.raises(DomainError, match="revoked"):
        auth.verify(core, other)
    with pytest.raises(AdminError):
        auth.revoke(core, "b@example.org", other[:12])  # already revoked


def test_last_used_is_kept_at_a_bounded_write_rate(core):
    accounts.create_account(core, "c@example.org", plan="pro")
    token, listing = auth.mint(core, "c@example.org")
    assert listing["last_used_at_ms"] is None
    t = listing["created_at_ms"] + 10
    auth.verify(core, token, now=t)
    auth.verify(core, token, now=t + auth.LAST_USED_RESOLUTION_MS - 1)
    core.last_used.flush()
    assert auth.list_tokens(core, "c@example.org")[0]["last_used_at_ms"] == t
    auth.verify(core, token, now=t + auth.LAST_USED_RESOLUTION_MS)
    core.last_used.flush()
    assert auth.list_tokens(core, "c@example.org")[0]["last_used_at_ms"] == t + auth.LAST_USED_RESOLUTION_MS


def test_allowance_counts_only_active_tokens(core):
    accounts.create_account(core, "d@example.org", plan="starter")  # 3 tokens
    tokens = [auth.mint(core, "d@example.org")[0] for _ in range(3)]
    with pytest.raises(AdminError, match="allows 3 active tokens"):
        auth.mint(core, "d@example.org")
    auth.revoke(core, "d@example.org", tokens[0][:12])
    auth.mint(core, "d@example.org", expires_in_ms=1)
    core.store.conn().execute("UPDATE tokens SET expires_at_ms = 1 WHERE expires_at_ms IS NOT NULL")
    auth.mint(core, "d@example.org")  # the revoked and the expired one no longer count


def test_mint_and_revoke_write_security_events_and_notices(core):
    account = accounts.create_account(core, "e@example.org", plan="pro")
    token, _ = auth.mint(core, "e@example.org", name="laptop", scopes=("runs:read",))
    auth.revoke(core, "e@example.org", token[:12])
    events = outbox.events(core, account["id"])
    assert [e["kind"] for e in events] == ["token_minted", "token_revoked"]
    assert events[0]["detail"]["prefix"] == token[:12] and events[0]["detail"]["scopes"] == ["runs:read"]
    mails = outbox.messages(core, "e@example.org")
    assert len(mails) == 2 and all(m["to"] == "e@example.org" for m in mails)
    assert "laptop" in mails[0]["body"] and token not in mails[0]["body"]
    # no [mail] or [smtp] configured: delivered to the Maildir under the data dir
    assert all(m["sent_at_ms"] is not None for m in mails)
    delivered = sorted(m["Subject"] for m in mail.maildir(core))
    assert delivered == sorted(m["subject"] for m in mails)


def test_account_rules(core):
    accounts.create_account(core, "F@Example.org", handle="f")
    with pytest.raises(AdminError, match="already exists"):
        accounts.create_account(core, "f@example.org")
    with pytest.raises(AdminError, match="taken"):
        accounts.create_account(core, "g@example.org", handle="f")
    with pytest.raises(AdminError, match="unknown plan"):
        accounts.create_account(core, "h@example.org", plan="gold")
    with pytest.raises(AdminError, match="not an email"):
        accounts.create_account(core, "nobody")
    changed = accounts.set_account(core, "f@example.org", plan="pro", verified=True, frozen=True)
    assert (changed["plan"], changed["verified"], changed["frozen"]) == ("pro", True, True)
    changed = accounts.set_account(core, "f@example.org", frozen=False)
    assert (changed["plan"], changed["verified"], changed["frozen"]) == ("pro", True, False)


def test_a_held_write_lock_never_delays_or_fails_a_read(core):
    accounts.create_account(core, "e@example.org", plan="pro")
    token, _ = auth.mint(core, "e@example.org")
    holding, release = threading.Event(), threading.Event()

    def hold():  # another connection (another process, another head) holds the write lock
        with core.store.write():
            holding.set()
            release.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    assert holding.wait(10)
    try:
        started = time.monotonic()
        assert auth.verify(core, token).account_id  # the last-used write waits on its own thread
        assert time.monotonic() - started < 1.0
    finally:
        release.set()
        other.join(10)
    core.last_used.flush()
    assert auth.list_tokens(core, "e@example.org")[0]["last_used_at_ms"] is not None


def test_stopping_writes_what_is_pending_and_ends_the_writer(core):
    accounts.create_account(core, "s@example.org", plan="pro")
    token, listing = auth.mint(core, "s@example.org")
    auth.verify(core, token, now=listing["created_at_ms"] + 10)
    thread = core.last_used._thread
    assert thread is not None and thread.is_alive()
    core.last_used.stop()
    assert not thread.is_alive()
    assert auth.list_tokens(core, "s@example.org")[0]["last_used_at_ms"] == listing["created_at_ms"] + 10


def test_a_stopped_writer_does_not_retry_a_store_that_is_gone(core, monkeypatch):
    from orchestrator.store import StoreError, tokens

    def refused(c, due):
        raise StoreError("the store is gone")

    monkeypatch.setattr(tokens, "note_used", refused)
    accounts.create_account(core, "g@example.org", plan="pro")
    token, listing = auth.mint(core, "g@example.org")
    auth.verify(core, token, now=listing["created_at_ms"] + 10)
    thread = core.last_used._thread
    core.last_used.stop(timeout_s=5)
    assert not thread.is_alive()  # it tried once more and ended, where it used to retry every 5 s forever
