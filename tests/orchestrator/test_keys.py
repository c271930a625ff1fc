"""Provider keys: Fernet-encrypted in the DB, the Fernet key in its own 0600 file, never listed."""
from __future__ import annotations

import stat

import pytest

from orchestrator import accounts, keys
from orchestrator.errors import AdminError


def test_keys_are_encrypted_at_rest_and_decrypt_for_launch(core):
    account = accounts.create_account(core, "k@example.org", plan="pro")
    keys.set_key(core, email="k@example.org", provider="anthropic", key="sk-ant-secret-1")
    row = core.store.one("SELECT ciphertext FROM provider_keys")
    assert b"sk-ant-secret-1" not in row["ciphertext"]
    assert keys.plaintext(core, account["id"], "anthropic") == "sk-ant-secret-1"
    key_file = keys.key_file(core)
    assert key_file.exists() and key_file.parent != core.store.path.parent
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # setting again replaces the key, still one row per provider
    keys.set_key(core, email="k@example.org", provider="anthropic", key="sk-ant-secret-2", balance_usd=3.5)
    listed = keys.list_keys(core, email="k@example.org")
    assert len(listed) == 1 and listed[0]["balance_usd"] == 3.5 and listed[0]["updated_at_ms"] is not None
    assert "sk-ant" not in repr(listed)
    assert keys.plaintext(core, account["id"], "anthropic") == "sk-ant-secret-2"


def test_key_file_location_can_be_moved(core, tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_SECRET_KEY_FILE", str(tmp_path / "elsewhere" / "k"))
    accounts.create_account(core, "m@example.org")
    keys.set_key(core, email="m@example.org", provider="openai", key="sk-1")
    assert (tmp_path / "elsewhere" / "k").exists()
    assert not (core.data_dir / "secrets").exists()


def test_key_rules(core):
    accounts.create_account(core, "n@example.org")
    with pytest.raises(AdminError, match="unknown provider"):
        keys.set_key(core, email="n@example.org", provider="local", key="x")
    with pytest.raises(AdminError, match="base-url"):
        keys.set_key(core, email="n@example.org", provider="ollama", key="x")
    with pytest.raises(AdminError, match="models"):
        keys.set_key(core, platform=True, provider="router", key="x")
    keys.set_key(core, platform=True, provider="router", key="x", models=["m/a"])
    assert keys.list_keys(core, platform=True)[0]["models"] == ["m/a"]
    assert keys.list_keys(core, email="n@example.org") == []
