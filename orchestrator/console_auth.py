"""Web console sign-in (docs/OVERVIEW.md): one-time links, passwords, revocable sessions.

Sessions live in SQLite, not only in a signed cookie, so the server can end them (sign out, sign out
everywhere). The cookie carries a 256-bit random id; only its SHA-256 is stored, like API tokens.
A console session is never an API token: nothing here yields a Principal for /api/v1 or /mcp.
"""
from __future__ import annotations

import hashlib
import secrets

from pwdlib import PasswordHash

from orchestrator import auth
from orchestrator.accounts import by_email
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError
from orchestrator.outbox import security_event
from orchestrator.records.session import Session
from orchestrator.store import accounts as account_rows, sessions as stored

LINK_TTL_MS = 15 * 60_000
# argon2id costs ~200 ms a guess here; a few tries a minute per address and per email is plenty for a person.
# config.toml [limits] sign_in_per_minute overrides it.
SIGN_IN_PER_MINUTE = 10
_hasher = PasswordHash.recommended()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def login_link(core: Core, email: str, base_url: str = "http://127.0.0.1:8000") -> str:
    """A URL that signs the browser in once, within 15 minutes."""
    account = by_email(core, email)
    secret = secrets.token_urlsafe(32)
    with core.store.write() as c:
        stored.add_link(c, _sha(secret), account.id, core.clock.now_ms() + LINK_TTL_MS)
    return f"{base_url.rstrip('/')}/console/login/link/{secret}"


def set_password(core: Core, email: str, password: str) -> None:
    if len(password) < 10:
        raise AdminError("the password must have at least 10 characters")
    account = by_email(core, email)
    with core.store.write() as c:
        stored.set_password(c, account.id, _hasher.hash(password), core.clock.now_ms())


def _limit(core: Core, address: str, email: str | None) -> None:
    ceiling = int((core.config.get("limits") or {}).get("sign_in_per_minute", SIGN_IN_PER_MINUTE))
    now = core.clock.now_ms()
    keys = [f"addr:{address}"] + ([f"email:{email}"] if email else [])
    for key in keys:
        if core.sign_in_counter.add(key, now) > ceiling:  # in the store: every head counts together
            raise DomainError("rate_limited", f"too many sign-in attempts; at most {ceiling} a minute, "
                              "try again in a minute")


def _open_session(core: Core, account_id: str, how: str) -> str:
    sid = secrets.token_urlsafe(32)
    with core.store.write() as c:
        stored.open_session(c, _sha(sid), account_id, secrets.token_urlsafe(32), core.clock.now_ms())
        account = account_rows.get(c, account_id)
        security_event(c, account, "signed_in", {"how": how}, "New sign-in to your Scenario Studio console",
                       f"Someone signed in to the web console of {account.email} by {how}. "
                       "If this was not you, sign out everywhere and change your password.", at_ms=core.clock.now_ms())
    return sid


def redeem_link(core: Core, secret: str, address: str) -> str:
    """One-time link -> new session id (the cookie value)."""
    _limit(core, address, None)
    with core.store.write() as c:
        link = stored.link(c, _sha(secret))
        if link is None or not link.usable(core.clock.now_ms()):
            raise DomainError("sign_in_failed", "this sign-in link is unknown, used or expired; ask for a new one "
                              "with `studio account login-link --email E`")
        stored.use_link(c, link.token_hash, core.clock.now_ms())
    return _open_session(core, link.account_id, "link")


def sign_in_password(core: Core, email: str, password: str, address: str) -> str:
    email = email.strip().lower()
    _limit(core, address, email)
    found = stored.password(core.store.conn(), email)
    # Hash even for unknown emails so the answer's timing does not say which accounts exist.
    ok = _hasher.verify(password, found[1] if found else _DUMMY)
    if found is None or not ok:
        raise DomainError("sign_in_failed", "the email or password is wrong")
    return _open_session(core, found[0], "password")


_DUMMY = _hasher.hash("not a password anyone has")


def session(core: Core, sid: str | None) -> Session | None:
    if not sid:
        return None
    return stored.live(core.store.conn(), _sha(sid))


def sign_out(core: Core, s: Session, everywhere: bool = False) -> None:
    with core.store.write() as c:
        if everywhere:
            stored.revoke_all(c, s.account_id, core.clock.now_ms())
        else:
            stored.revoke(c, s.id_hash, core.clock.now_ms())


def same_token(sent, expected: str | None) -> bool:
    """Whether a CSRF token sent in a form or header is the expected one, compared in constant time as
    UTF-8 bytes: what a client sends may be any text (compare_digest refuses non-ASCII str), or not
    text at all (a multipart form's file)."""
    if not isinstance(sent, str) or not sent or not expected:
        return False
    return secrets.compare_digest(sent.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))


def check_csrf(s: Session, sent) -> None:
    if not same_token(sent, s.csrf):
        raise DomainError("csrf_failed", "this form is stale or came from another site; reload the page and try again")


def principal(core: Core, s: Session) -> auth.Principal:
    """The signed-in person acts with every scope on their own account, through the same service
    functions the API calls; plan rules still apply."""
    account = account_rows.get(core.store.conn(), s.account_id)
    return auth.Principal(
        account_id=account.id, email=account.email, handle=account.handle, plan=core.plan(account.plan),
        verified=account.verified, frozen=account.frozen, token_id=f"console:{s.id_hash[:12]}",
        token_name="web console", token_prefix="console", scopes=auth.SCOPES, granted=auth.granted(auth.SCOPES),
        expires_at_ms=None)
