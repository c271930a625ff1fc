"""Console sign-in rules without a browser: link lifetime, password rules, the sign-in ceiling."""
from __future__ import annotations

import pytest

from orchestrator import accounts, console_auth
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError


@pytest.fixture
def core(tmp_path) -> Core:
    return Core.open(tmp_path / "data")


def test_sign_in_is_rate_limited_per_address(core):
    accounts.create_account(core, "l@example.org")
    console_auth.set_password(core, "l@example.org", "long enough password")
    for _ in range(console_auth.SIGN_IN_PER_MINUTE):
        with pytest.raises(DomainError) as e:
            console_auth.sign_in_password(core, "l@example.org", "wrong password", "10.9.9.9")
        assert e.value.code == "sign_in_failed"
    with pytest.raises(DomainError) as e:  # even the right password waits for the next minute
        console_auth.sign_in_password(core, "l@example.org", "long enough password", "10.9.9.9")
    assert e.value.code == "rate_limited"


def test_links_are_single_use_and_expire(core):
    accounts.create_account(core, "k@example.org")
    link = console_auth.login_link(core, "k@example.org")
    secret = link.rsplit("/", 1)[1]
    sid = console_auth.redeem_link(core, secret, "10.8.8.8")
    assert console_auth.session(core, sid).email == "k@example.org"
    with pytest.raises(DomainError, match="unknown, used or expired"):
        console_auth.redeem_link(core, secret, "10.8.8.8")
    late = console_auth.login_link(core, "k@example.org").rsplit("/", 1)[1]
    core.store.conn().execute("UPDATE console_login_links SET expires_at_ms = 1")
    with pytest.raises(DomainError, match="unknown, used or expired"):
        console_auth.redeem_link(core, late, "10.8.8.8")


def test_short_passwords_are_refused(core):
    accounts.create_account(core, "p@example.org")
    with pytest.raises(AdminError, match="at least 10"):
        console_auth.set_password(core, "p@example.org", "short")
