"""Provider keys, encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256).

The Fernet key lives in its own file, `<data dir>/secrets/fernet.key` (mode 0600), or wherever
STUDIO_SECRET_KEY_FILE points, so a copy of the database alone does not reveal provider keys.
Keys are never printed back; `list_keys` shows which providers are held. Checking a key against its
provider happens at launch (runs issue).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from cryptography.fernet import Fernet

from orchestrator.accounts import by_email
from orchestrator.core import Core
from orchestrator.errors import AdminError

PROVIDERS = ("router", "openai", "anthropic", "ollama", "openai-compatible")  # CONTRACT.md section 6: keyed
ROUTED = PROVIDERS + ("local",)  # every provider a seat may name; local plays scripted policies, no key
NEEDS_BASE_URL = ("ollama", "openai-compatible")
KEYLESS = ("ollama",)  # a local Ollama checks no key; one can still be stored for a proxy in front of it
PLATFORM = "platform"


def key_file(core: Core) -> Path:
    override = os.environ.get("STUDIO_SECRET_KEY_FILE")
    return Path(override) if override else core.data_dir / "secrets" / "fernet.key"


def _fernet(core: Core) -> Fernet:
    path = key_file(core)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # O_EXCL: if the server and the CLI race to create it, exactly one key wins and both read it.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(Fernet.generate_key())
    return Fernet(path.read_bytes().strip())


def set_key(core: Core, *, provider: str, key: str | None, email: str | None = None, platform: bool = False,
            base_url: str | None = None, balance_usd: float | None = None, models: list[str] | None = None,
            usd_per_mtok_in: float | None = None, usd_per_mtok_out: float | None = None) -> dict:
    if provider not in PROVIDERS:
        raise AdminError(f"unknown provider '{provider}'; providers are {', '.join(PROVIDERS)}")
    if key is None and provider in KEYLESS:
        key = ""
    elif not key:
        raise AdminError(f"provider {provider} needs --key (only {', '.join(KEYLESS)} runs without one)")
    if provider in NEEDS_BASE_URL and not base_url:
        raise AdminError(f"provider {provider} needs --base-url")
    if platform:
        if not models:
            raise AdminError("a platform key sponsors the models it lists; pass --models m1,m2")
        owner = PLATFORM
    else:
        if email is None:
            raise AdminError("pass --email E, or --platform for the operator's sponsor key")
        owner = by_email(core, email)["id"]
    price = (usd_per_mtok_in, usd_per_mtok_out)
    if (price[0] is None) != (price[1] is None):
        raise AdminError("a key's price needs both --usd-per-mtok-in and --usd-per-mtok-out")
    if price[0] is not None and not all(0 <= p < 10_000 for p in price):
        raise AdminError("--usd-per-mtok-in and --usd-per-mtok-out take USD per million tokens, 0 up to 10000")
    ciphertext = _fernet(core).encrypt(key.encode())
    now = core.clock.now_ms()
    with core.store.write() as c:
        c.execute("INSERT INTO provider_keys (owner, provider, ciphertext, base_url, balance_usd, models, created_at_ms, "
                  "usd_per_mtok_in, usd_per_mtok_out) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (owner, provider) "
                  "DO UPDATE SET ciphertext = excluded.ciphertext, base_url = excluded.base_url, "
                  "balance_usd = excluded.balance_usd, models = excluded.models, usd_per_mtok_in = excluded.usd_per_mtok_in, "
                  "usd_per_mtok_out = excluded.usd_per_mtok_out, updated_at_ms = ?",
                  (owner, provider, ciphertext, base_url, balance_usd, json.dumps(models) if models else None, now,
                   *price, now))
    return next(k for k in _listing(core, owner) if k["provider"] == provider)


def _listing(core: Core, owner: str) -> list[dict]:
    rows = core.store.all("SELECT * FROM provider_keys WHERE owner = ? ORDER BY provider", (owner,))
    return [{"provider": r["provider"], "platform": owner == PLATFORM, "base_url": r["base_url"],
             "balance_usd": r["balance_usd"], "models": json.loads(r["models"]) if r["models"] else None,
             "usd_per_mtok": None if r["usd_per_mtok_in"] is None else [r["usd_per_mtok_in"], r["usd_per_mtok_out"]],
             "created_at_ms": r["created_at_ms"], "updated_at_ms": r["updated_at_ms"]} for r in rows]


def list_keys(core: Core, *, email: str | None = None, platform: bool = False) -> list[dict]:
    """Providers held, never the key itself."""
    return _listing(core, PLATFORM if platform else by_email(core, email or "")["id"])


def plaintext(core: Core, owner: str, provider: str) -> str | None:
    """The decrypted key for a seat at launch (runs issue); owner is an account id or 'platform'."""
    row = core.store.one("SELECT ciphertext FROM provider_keys WHERE owner = ? AND provider = ?", (owner, provider))
    return None if row is None else _fernet(core).decrypt(row["ciphertext"]).decode()


def held(core: Core, owner: str) -> dict[str, dict]:
    """provider -> {base_url, balance_usd, models, ...} of the keys an owner (account id or 'platform')
    holds, never the key itself: the launch checks and the seat clients read this."""
    return {k["provider"]: k for k in _listing(core, owner)}


def remove_key(core: Core, *, email: str, provider: str) -> bool:
    """Forget an account's key for a provider; True when there was one."""
    owner = by_email(core, email)["id"]
    with core.store.write() as c:
        return c.execute("DELETE FROM provider_keys WHERE owner = ? AND provider = ?", (owner, provider)).rowcount > 0
