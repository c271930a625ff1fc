"""Provider keys, encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256).

The Fernet key lives in its own file (`<data dir>/secrets/fernet.key`, or STUDIO_SECRET_KEY_FILE), so
a copy of the database alone does not reveal provider keys. Keys are never printed back; `list_keys`
shows which are held and what checking each with its provider found (`check`, and for servers whose
abilities vary, `tools`: "yes", "no" or null, which admission reads). A key that cannot be checked is
stored all the same. The operator may store any http(s) base URL; an account storing its own key is
held to the egress rule, and who stored a key travels with it (private_ok): the seats' transport lets
only operator-vouched URLs reach private addresses (docs/api.md).
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from cryptography.fernet import Fernet

from orchestrator import datadir, egress
from orchestrator.accounts import by_email
from orchestrator.core import Core
from orchestrator.errors import AdminError
from orchestrator import provider_kinds
from orchestrator.records.key import KeyCheck, ProviderKey
from orchestrator.seats.probe import check
from orchestrator.store import keys as stored

# The names as the registry has them (provider_kinds.SPECS), for listings and help texts: every
# provider a key is stored for, every provider a seat may name (local and agent need no key)
PROVIDERS = provider_kinds.KEYED
ROUTED = provider_kinds.ROUTED
NEEDS_BASE_URL = tuple(n for n in PROVIDERS if provider_kinds.spec(n).needs_base_url)
KEYLESS = tuple(n for n in PROVIDERS if provider_kinds.spec(n).key == "optional")
PLATFORM = "platform"
OPERATOR, ACCOUNT = "operator", "account"  # who stored a key: `studio key set`, or the account itself


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
            usd_per_mtok_in: float | None = None, usd_per_mtok_out: float | None = None,
            stored_by: str = OPERATOR) -> dict:
    """Store (or replace) a key, as the operator by default. A replaced key's last check is cleared:
    it was about the old key."""
    spec = provider_kinds.SPECS.get(provider)
    if spec is None or not spec.keyed:
        raise AdminError(f"unknown provider '{provider}'; providers are "
                         f"{', '.join(n for n, s in provider_kinds.SPECS.items() if s.keyed)}")
    if key is None and spec.key == "optional":
        key = ""
    elif not key:
        raise AdminError(f"provider {provider} needs --key (only {', '.join(KEYLESS)} runs without one)")
    if spec.needs_base_url and not base_url:
        raise AdminError(f"provider {provider} needs --base-url")
    if base_url:
        try:
            egress.check_scheme(base_url)
        except ValueError as e:
            raise AdminError(str(e)) from None
    if platform:
        if not models:
            raise AdminError("a platform key sponsors the models it lists; pass --models m1,m2")
        owner = PLATFORM
    else:
        if email is None:
            raise AdminError("pass --email E, or --platform for the operator's sponsor key")
        owner = by_email(core, email).id
    price = (usd_per_mtok_in, usd_per_mtok_out)
    if (price[0] is None) != (price[1] is None):
        raise AdminError("a key's price needs both --usd-per-mtok-in and --usd-per-mtok-out")
    if price[0] is not None and not all(0 <= p < 10_000 for p in price):
        raise AdminError("--usd-per-mtok-in and --usd-per-mtok-out take USD per million tokens, 0 up to 10000")
    if balance_usd is not None and not math.isfinite(balance_usd):
        raise AdminError("--balance-usd takes a finite number of USD")
    now = core.clock.now_ms()
    record = ProviderKey(owner=owner, provider=provider, ciphertext=_fernet(core).encrypt(key.encode()),
                         base_url=base_url, balance_usd=balance_usd, models=tuple(models) if models else None,
                         usd_per_mtok=None if price[0] is None else price, created_at_ms=now, stored_by=stored_by)
    with core.store.write() as c:
        stored.put(c, record, now)
    return next(k for k in _listing(core, owner) if k["provider"] == provider)


def set_own_key(core: Core, *, email: str, provider: str, key: str | None, base_url: str | None = None) -> dict:
    """An account stores its own key (the web console). Its base URL must pass docs/api.md
    (DomainError bad_base_url otherwise); the key is then stored as the account's, not the operator's."""
    if base_url:
        egress.check_account_url(base_url, core.config, own=datadir.own_addresses(core.data_dir, core.config))
    return set_key(core, provider=provider, key=key, email=email, base_url=base_url, stored_by=ACCOUNT)


def _listing(core: Core, owner: str) -> list[dict]:
    return [{"provider": k.provider, "platform": owner == PLATFORM, "base_url": k.base_url,
             "balance_usd": k.balance_usd, "models": list(k.models) if k.models else None,
             "usd_per_mtok": None if k.usd_per_mtok is None else list(k.usd_per_mtok),
             "created_at_ms": k.created_at_ms, "updated_at_ms": k.updated_at_ms,
             "stored_by": k.stored_by or ACCOUNT, "tools": k.tools, "check": _check(k)}
            for k in stored.of_owner(core.store.conn(), owner)]


def _check(k: ProviderKey) -> dict | None:
    if k.check_status is None:
        return None
    return {"status": k.check_status, "detail": k.check_detail, "at_ms": k.checked_at_ms,
            "model": k.tools_model, "tools_detail": k.tools_detail}


def list_keys(core: Core, *, email: str | None = None, platform: bool = False) -> list[dict]:
    """Providers held, never the key itself."""
    return _listing(core, PLATFORM if platform else by_email(core, email or "").id)


def plaintext(core: Core, owner: str, provider: str) -> str | None:
    """The decrypted key for a seat at launch (runs issue); owner is an account id or 'platform'."""
    ciphertext = stored.ciphertext(core.store.conn(), owner, provider)
    return None if ciphertext is None else _fernet(core).decrypt(ciphertext).decode()


def held(core: Core, owner: str) -> dict[str, dict]:
    """provider -> {base_url, balance_usd, models, ...} of the keys an owner (account id or 'platform')
    holds, never the key itself: the launch checks and the seat clients read this."""
    return {k["provider"]: k for k in _listing(core, owner)}


def private_ok(core: Core, owner: str, provider: str) -> bool:
    """May this key's seat connect to private addresses? Only when the operator stored it, or its base
    URL is on the operator's allow list today (an entry removed later stops it at the next connect)."""
    info = held(core, owner).get(provider)
    if info is None:
        return False
    if info["stored_by"] == OPERATOR:
        return True
    return bool(info["base_url"]) and egress.allowed(info["base_url"], egress.allow_list(core.config))


def check_key(core: Core, owner: str, provider: str, model: str | None = None) -> dict | None:
    """Ask the provider whether the stored key works (one cheap call, a few
    seconds at most) and, for servers whose abilities vary, whether it makes tool calls (on `model`,
    else the key's first sponsored model, else the first the server lists); record the answers on
    the key. Returns the check as list_keys shows it, or None with no such key."""
    info = held(core, owner).get(provider)
    if info is None:
        return None
    found = check(provider, plaintext(core, owner, provider) or "", info["base_url"],
                  private_ok=private_ok(core, owner, provider), model=model or (info["models"] or [None])[0])
    with core.store.write() as c:
        stored.record_check(c, owner, provider, KeyCheck(**found, at_ms=core.clock.now_ms()))
    return held(core, owner)[provider]["check"]


def _bare(model: str) -> str:
    return model.removesuffix(":latest")  # ollama's default tag


def no_tools(info: dict | None, provider: str, model: str) -> str | None:
    """What the key's check saw when its server has no tool calls for this seat, else None. An
    openai-compatible server's flags and chat template decide for every model it serves (and many
    serve their one model whatever id is asked); an ollama or router key's verdict is about the
    model it probed."""
    if not info or info.get("tools") != "no":
        return None
    probed = (info.get("check") or {}).get("model")
    if provider_kinds.spec(provider).probe != "server" and (probed is None or _bare(probed) != _bare(model)):
        return None
    return (info.get("check") or {}).get("tools_detail") or "the key's check found no tool calls"


def remove_key(core: Core, *, email: str, provider: str) -> bool:
    """Forget an account's key for a provider; True when there was one."""
    owner = by_email(core, email).id
    with core.store.write() as c:
        return stored.delete(c, owner, provider)
