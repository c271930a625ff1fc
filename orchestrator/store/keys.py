"""The provider_keys table: one key per owner (an account id, or 'platform') and provider."""
from __future__ import annotations

import json
import math

from orchestrator.records.key import KeyCheck, ProviderKey
from orchestrator.store.database import Connection, Row

_PLAIN = ("owner", "provider", "ciphertext", "base_url", "created_at_ms", "updated_at_ms", "stored_by",
          "check_status", "check_detail", "checked_at_ms", "tools", "tools_detail", "tools_model")


def _money(x: float | None) -> float | None:
    # an earlier version may have stored an infinity here: it reads as null until `studio doctor --repair`
    return x if x is None or math.isfinite(x) else None


def _key(r: Row) -> ProviderKey:
    price = (_money(r["usd_per_mtok_in"]), _money(r["usd_per_mtok_out"]))
    return ProviderKey(**{k: r[k] for k in _PLAIN}, balance_usd=_money(r["balance_usd"]),
                       models=tuple(json.loads(r["models"])) if r["models"] else None,
                       usd_per_mtok=None if None in price else price)


def of_owner(c: Connection, owner: str) -> list[ProviderKey]:
    rows = c.execute("SELECT * FROM provider_keys WHERE owner = ? ORDER BY provider", (owner,)).fetchall()
    return [_key(r) for r in rows]


def ciphertext(c: Connection, owner: str, provider: str) -> bytes | None:
    r = c.execute("SELECT ciphertext FROM provider_keys WHERE owner = ? AND provider = ?", (owner, provider)).fetchone()
    return None if r is None else r["ciphertext"]


def any_ciphertext(c: Connection) -> bytes | None:
    """One stored key's ciphertext (the oldest), or None when none is stored."""
    r = c.execute("SELECT ciphertext FROM provider_keys ORDER BY created_at_ms, owner, provider LIMIT 1").fetchone()
    return None if r is None else r["ciphertext"]


def put(c: Connection, k: ProviderKey, at_ms: int) -> None:
    """Store the key, or replace the owner's key for its provider; a replaced key's check is cleared."""
    price = k.usd_per_mtok or (None, None)
    c.execute("INSERT INTO provider_keys (owner, provider, ciphertext, base_url, balance_usd, models, created_at_ms, "
              "usd_per_mtok_in, usd_per_mtok_out, stored_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
              "ON CONFLICT (owner, provider) "
              "DO UPDATE SET ciphertext = excluded.ciphertext, base_url = excluded.base_url, "
              "balance_usd = excluded.balance_usd, models = excluded.models, usd_per_mtok_in = excluded.usd_per_mtok_in, "
              "usd_per_mtok_out = excluded.usd_per_mtok_out, stored_by = excluded.stored_by, "
              "check_status = NULL, check_detail = NULL, checked_at_ms = NULL, tools = NULL, tools_detail = NULL, "
              "tools_model = NULL, updated_at_ms = ?",
              (k.owner, k.provider, k.ciphertext, k.base_url, k.balance_usd,
               json.dumps(list(k.models)) if k.models else None, k.created_at_ms, *price, k.stored_by, at_ms))


def record_check(c: Connection, owner: str, provider: str, found: KeyCheck) -> None:
    c.execute("UPDATE provider_keys SET check_status = ?, check_detail = ?, checked_at_ms = ?, tools = ?, "
              "tools_detail = ?, tools_model = ? WHERE owner = ? AND provider = ?",
              (found.status, found.detail, found.at_ms, found.tools, found.tools_detail, found.model, owner, provider))


def delete(c: Connection, owner: str, provider: str) -> bool:
    return c.execute("DELETE FROM provider_keys WHERE owner = ? AND provider = ?", (owner, provider)).rowcount > 0
