"""Access tokens and the checks every service call makes (docs/api.md, "Authentication, scopes, limits").

Tokens are `dsk_` + 64 hex from the OS CSPRNG; only their SHA-256 is stored. A slow password hash
buys nothing here: a 256-bit random secret cannot be guessed from its hash, and SHA-256 keeps the
per-request lookup to one indexed read.
"""
from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
from dataclasses import dataclass

from orchestrator.accounts import by_email
from orchestrator.core import Core
from orchestrator.errors import AdminError, DomainError
from orchestrator.ids import new_id
from orchestrator.lastused import RESOLUTION_MS
from orchestrator.outbox import deliver_pending, security_event

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
    row = core.store.one(
        "SELECT t.*, a.email, a.handle, a.plan, a.verified, a.frozen FROM tokens t "
        "JOIN accounts a ON a.id = t.account_id WHERE t.token_hash = ?", (hash_token(token),))
    if row is None:
        raise DomainError("token_required", "the token is unknown; mint one with `studio token mint`")
    if row["revoked_at_ms"] is not None:
        raise DomainError("token_required", "the token was revoked; use another token")
    if row["expires_at_ms"] is not None and row["expires_at_ms"] <= now:
        raise DomainError("token_required", "the token has expired; mint a new one")
    core.last_used.note(row["id"], row["last_used_at_ms"], now)  # written off the request path
    scopes = tuple(json.loads(row["scopes"]))
    return Principal(
        account_id=row["account_id"], email=row["email"], handle=row["handle"], plan=core.plan(row["plan"]),
        verified=bool(row["verified"]), frozen=bool(row["frozen"]), token_id=row["id"],
        token_name=row["name"], token_prefix=row["prefix"], scopes=scopes, granted=granted(scopes),
        expires_at_ms=row["expires_at_ms"])


def authenticate(core: Core, token: str | None) -> Principal:
    """verify() plus the per-token rate limit. Transports pass every 401/403 they answer through
    core.address_limiter.refuse(), which turns refusals past the per-address ceiling into 429."""
    principal = verify(core, token)
    core.token_limiter.hit(principal.token_id, principal.plan["requests_per_minute"])
    return principal


# --- operator side (CLI): minting, revoking, listing ------------------------------------------

def _active_count(c: sqlite3.Connection, account_id: str, now: int) -> int:
    return c.execute("SELECT COUNT(*) FROM tokens WHERE account_id = ? AND revoked_at_ms IS NULL "
                     "AND (expires_at_ms IS NULL OR expires_at_ms > ?)", (account_id, now)).fetchone()[0]


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
    if expires_in_ms is not None and expires_in_ms <= 0:
        raise AdminError("--expires-in-ms must be a positive number of milliseconds")
    account = by_email(core, email)
    plan = core.plan(account["plan"])
    plaintext = "dsk_" + secrets.token_hex(32)
    now = core.clock.now_ms()
    with core.store.write() as c:
        if _active_count(c, account["id"], now) >= plan["access_tokens"]:
            raise AdminError(f"the {plan['name']} plan allows {plan['access_tokens']} active "
                             f"token{'' if plan['access_tokens'] == 1 else 's'}; "
                             "revoke one or change the plan")
        token_id = new_id("tok_")
        expires = None if expires_in_ms is None else now + expires_in_ms
        c.execute("INSERT INTO tokens (id, account_id, name, prefix, token_hash, scopes, created_at_ms, expires_at_ms) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  (token_id, account["id"], name, plaintext[:PREFIX_LEN], hash_token(plaintext),
                   json.dumps(list(scopes)), now, expires))
        security_event(c, account, "token_minted", {"prefix": plaintext[:PREFIX_LEN], "name": name,
                                                    "scopes": list(scopes), "expires_at_ms": expires},
                       "New API token on your Scenario Studio account",
                       f"A token named '{name}' ({plaintext[:PREFIX_LEN]}...) with scopes {', '.join(scopes)} "
                       "was created on your account. If this was not you, revoke it now.", at_ms=now)
        row = c.execute("SELECT * FROM tokens WHERE id = ?", (token_id,)).fetchone()
    deliver_pending(core)
    return plaintext, token_json(row, now)


def revoke(core: Core, email: str, prefix: str) -> dict:
    account = by_email(core, email)
    with core.store.write() as c:
        row = c.execute("SELECT * FROM tokens WHERE account_id = ? AND prefix = ? AND revoked_at_ms IS NULL",
                        (account["id"], prefix)).fetchone()
        if row is None:
            raise AdminError(f"no active token with prefix {prefix} on {account['email']}")
        c.execute("UPDATE tokens SET revoked_at_ms = ? WHERE id = ?", (core.clock.now_ms(), row["id"]))
        security_event(c, account, "token_revoked", {"prefix": prefix, "name": row["name"]},
                       "API token revoked on your Scenario Studio account",
                       f"The token named '{row['name']}' ({prefix}...) was revoked and no longer works.",
                       at_ms=core.clock.now_ms())
        row = c.execute("SELECT * FROM tokens WHERE id = ?", (row["id"],)).fetchone()
    deliver_pending(core)
    return token_json(row, core.clock.now_ms())


def list_tokens(core: Core, email: str) -> list[dict]:
    account = by_email(core, email)
    rows = core.store.all("SELECT * FROM tokens WHERE account_id = ? ORDER BY created_at_ms, id", (account["id"],))
    now = core.clock.now_ms()
    return [token_json(r, now) for r in rows]


def token_json(row: sqlite3.Row, now: int) -> dict:
    if row["revoked_at_ms"] is not None:
        status = "revoked"
    elif row["expires_at_ms"] is not None and row["expires_at_ms"] <= now:
        status = "expired"
    else:
        status = "active"
    return {"name": row["name"], "prefix": row["prefix"], "scopes": json.loads(row["scopes"]), "status": status,
            "created_at_ms": row["created_at_ms"], "expires_at_ms": row["expires_at_ms"],
            "revoked_at_ms": row["revoked_at_ms"], "last_used_at_ms": row["last_used_at_ms"]}
