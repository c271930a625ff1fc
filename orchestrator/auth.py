"""Access tokens and the checks every service call makes (docs/api.md, "Authentication, scopes, limits").

Tokens are `dsk_` + 64 hex from the OS CSPRNG; only their SHA-256 is stored. A slow password hash
buys nothing here: a 256-bit random secret cannot be guessed from its hash, and SHA-256 keeps the
per-request lookup to one indexed read.
"""
from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from orchestrator.accounts import by_email
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError
from orchestrator.ids import new_id
from orchestrator.lastused import RESOLUTION_MS
from orchestrator.outbox import deliver_pending, security_event
from orchestrator.records.base import INT64
from orchestrator.records.token import Token
from orchestrator.store import tokens as stored

SCOPES = ("scenarios:read", "scenarios:write", "runs:read", "runs:write")
DEFAULT_SCOPES = ("scenarios:read", "scenarios:write", "runs:read")
IMPLIES = {"scenarios:write": ("scenarios:read",), "runs:write": ("runs:read",)}
TOKEN_RE = re.compile(r"^dsk_[0-9a-f]{64}$")
PREFIX_LEN = 12  # "dsk_" and 8 hex (docs/api.md)
# last_used_at_ms is rewritten at most this often per token, so reads stay free of write locks.
LAST_USED_RESOLUTION_MS = RESOLUTION_MS


@dataclass(frozen=True)
class Principal:
    """Who is calling: the account, its plan and the token. Every service function takes one."""
    account_id: str
    email: str
    handle: str
    plan: dict
    verified: bool
    frozen: bool
    token_id: str
    token_name: str
    token_prefix: str
    scopes: tuple[str, ...]          # as minted, reported by /me
    granted: frozenset[str]          # scopes plus what they imply; what checks consult
    expires_at_ms: int | None

    @property
    def api_access(self) -> str:
        return self.plan["api_access"]


def hash_token(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def granted(scopes: tuple[str, ...]) -> frozenset[str]:
    out = set(scopes)
    for s in scopes:
        out.update(IMPLIES.get(s, ()))
    return frozenset(out)


def require_scope(principal: Principal, scope: str) -> None:
    if scope not in principal.granted:
        raise DomainError("scope_required", f"this call needs the {scope} scope; this token has "
                          f"{', '.join(principal.scopes)}; mint a token that includes {scope}")


def require_write_plan(principal: Principal) -> None:
    if principal.api_access != "full":
        raise DomainError("plan_api", f"the {principal.plan['name']} plan gives read-only API access; "
                          "writes need a Starter plan or above")


def require(principal: Principal, scope: str, *, write: bool = False) -> None:
    """Scope first (scope_required whatever the plan: docs/api.md), then the plan for writes."""
    require_scope(principal, scope)
    if write:
        require_write_plan(principal)


_MISSING = "send the token as 'Authorization: Bearer dsk_...' or 'x-api-key: dsk_...'"


def verify(core: Core, token: str | None, now: int | None = None) -> Principal:
    """Token plaintext -> Principal, or token_required. Keeps the token's last-used time."""
    if not token:
        raise DomainError("token_required", f"this endpoint needs an access token; {_MISSING}")
    if not TOKEN_RE.match(token):
        raise DomainError("token_required", "the token is malformed: expected dsk_ followed by 64 "
                          f"lowercase hex characters; {_MISSING}")
    now = core.clock.now_ms() if now is None else now
    found = stored.holder(core.store.conn(), hash_token(token))
    if found is None:
        raise DomainError("token_required", "the token is unknown; mint one with `studio token mint`")
    held, account = found
    if held.revoked_at_ms is not None:
        raise DomainError("token_required", "the token was revoked; use another token")
    if held.expires_at_ms is not None and held.expires_at_ms <= now:
        raise DomainError("token_required", "the token has expired; mint a new one")
    core.last_used.note(held.id, held.last_used_at_ms, now)  # written off the request path
    return Principal(
        account_id=account.id, email=account.email, handle=account.handle, plan=core.plan(account.plan),
        verified=account.verified, frozen=account.frozen, token_id=held.id, token_name=held.name,
        token_prefix=held.prefix, scopes=held.scopes, granted=granted(held.scopes), expires_at_ms=held.expires_at_ms)


def authenticate(core: Core, token: str | None) -> Principal:
    """verify() plus the per-token rate limit. Transports pass every 401/403 they answer through
    core.address_limiter.refuse(), which turns refusals past the per-address ceiling into 429."""
    principal = verify(core, token)
    core.token_limiter.hit(principal.token_id, principal.plan["requests_per_minute"])
    return principal


# --- operator side (CLI): minting, revoking, listing ------------------------------------------

def parse_scopes(text: str | None) -> tuple[str, ...]:
    if text is None:
        return DEFAULT_SCOPES
    scopes = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise AdminError(f"scopes must be a non-empty subset of {', '.join(SCOPES)}; got {text!r}")
    return scopes


def mint(core: Core, email: str, *, name: str = "default", scopes: tuple[str, ...] = DEFAULT_SCOPES,
         expires_in_ms: int | None = None) -> tuple[str, dict]:
    """Create a token; return (plaintext, listing). The plaintext exists only in this return value."""
    parse_scopes(",".join(scopes))
    if expires_in_ms is not None and not 0 < expires_in_ms <= INT64 // 2:
        raise AdminError("--expires-in-ms must be a positive number of milliseconds (up to 2^62)")
    account = by_email(core, email)
    plan = core.plan(account.plan)
    plaintext = "dsk_" + secrets.token_hex(32)
    now = core.clock.now_ms()
    with core.store.write() as c:
        if stored.active_count(c, account.id, now) >= plan["access_tokens"]:
            raise AdminError(f"the {plan['name']} plan allows {plan['access_tokens']} active "
                             f"token{'' if plan['access_tokens'] == 1 else 's'}; "
                             "revoke one or change the plan")
        token = Token(id=new_id("tok_"), account_id=account.id, name=name, prefix=plaintext[:PREFIX_LEN],
                      scopes=scopes, created_at_ms=now, expires_at_ms=None if expires_in_ms is None
                      else now + expires_in_ms, revoked_at_ms=None, last_used_at_ms=None)
        stored.insert(c, token, hash_token(plaintext))
        security_event(c, account, "token_minted", {"prefix": token.prefix, "name": name,
                                                    "scopes": list(scopes), "expires_at_ms": token.expires_at_ms},
                       "New API token on your Scenario Studio account",
                       f"A token named '{name}' ({token.prefix}...) with scopes {', '.join(scopes)} "
                       "was created on your account. If this was not you, revoke it now.", at_ms=now)
    deliver_pending(core)
    return plaintext, token.view(now)


def revoke(core: Core, email: str, prefix: str) -> dict:
    account = by_email(core, email)
    with core.store.write() as c:
        token = stored.active(c, account.id, prefix)
        if token is None:
            raise AdminError(f"no active token with prefix {prefix} on {account.email}")
        stored.revoke(c, token.id, core.clock.now_ms())
        security_event(c, account, "token_revoked", {"prefix": prefix, "name": token.name},
                       "API token revoked on your Scenario Studio account",
                       f"The token named '{token.name}' ({prefix}...) was revoked and no longer works.",
                       at_ms=core.clock.now_ms())
        token = stored.get(c, token.id)
    deliver_pending(core)
    return token.view(core.clock.now_ms())


def list_tokens(core: Core, email: str) -> list[dict]:
    account = by_email(core, email)
    now = core.clock.now_ms()
    return [t.view(now) for t in stored.of_account(core.store.conn(), account.id)]
