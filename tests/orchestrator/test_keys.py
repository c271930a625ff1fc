"""Provider keys: Fernet-encrypted in the DB, the Fernet key in its own 0600 file, never listed."""
from __future__ import annotations

import stat

import pytest

from orchestrator import accounts
from orchestrator.seats import keys
from orchestrator.errors import AdminError


def test_keys_are_encrypted_at_rest_and_decrypt_for_launch(core):
    account = accounts.create_account(core, "k@example.org", plan="pro")
    keys.set_key(core, email="k@example.org", provider="anthropic", key="sk-ant-secret-1")
    row = core.store.one("SELECT ciphertext FROM provider_keys")
    assert b"sk-ant-secret-1" not in row["ciphertext"]
    assert keys.plaintext(core, account["id"], "anthropic") == "sk-ant-secret-1"
    key_file = keys.key_file(core)
    assert key_file.exists() and key_file.parent != core.data_dir
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


def test_an_account_stores_only_public_base_urls_the_operator_any_http_url(core):
    from orchestrator.errors import DomainError

    account = accounts.create_account(core, "s@example.org")
    for url in ("http://169.254.169.254/latest/meta-data", "file:///etc/passwd", "gopher://127.0.0.1:25/_x",
                "http://10.0.0.5:8000/v1", "http://127.0.0.1:8000/api/v1"):
        with pytest.raises(DomainError) as e:
            keys.set_own_key(core, email="s@example.org", provider="openai-compatible", key="k", base_url=url)
        assert e.value.code == "bad_base_url" and "allow_base_urls" in e.value.message
    assert keys.list_keys(core, email="s@example.org") == []
    stored = keys.set_own_key(core, email="s@example.org", provider="openai-compatible", key="k",
                              base_url="https://93.184.215.14/v1")
    assert stored["stored_by"] == "account" and not keys.private_ok(core, account["id"], "openai-compatible")
    # the operator (`studio key set`) may point a key at a private address, never at another scheme
    keys.set_key(core, email="s@example.org", provider="ollama", key=None, base_url="http://10.0.0.5:11434")
    assert keys.private_ok(core, account["id"], "ollama")
    with pytest.raises(AdminError, match="only http and https"):
        keys.set_key(core, email="s@example.org", provider="ollama", key=None, base_url="file:///etc/passwd")


def test_the_operators_allow_list_admits_an_account_url_while_it_lists_it(core):
    account = accounts.create_account(core, "t@example.org")
    core.config["providers"] = {"allow_base_urls": ["http://127.0.0.1:11434"]}
    keys.set_own_key(core, email="t@example.org", provider="ollama", key=None, base_url="http://127.0.0.1:11434/v1")
    assert keys.private_ok(core, account["id"], "ollama")
    core.config["providers"] = {"allow_base_urls": []}  # the operator took the entry out
    assert not keys.private_ok(core, account["id"], "ollama")


def test_a_stored_key_is_checked_and_the_check_is_listed(core):
    from tests.seats.fake_provider import FakeProvider

    account = accounts.create_account(core, "c@example.org")
    with FakeProvider() as fake:
        fake.rejected_keys.add("sk-fake")
        keys.set_key(core, email="c@example.org", provider="openai-compatible", key="sk-fake",
                     base_url=fake.url + "/v1")
        assert keys.list_keys(core, email="c@example.org")[0]["check"] is None
        check = keys.check_key(core, account["id"], "openai-compatible")
        assert check["status"] == "rejected" and check["at_ms"] > 0
        assert keys.list_keys(core, email="c@example.org")[0]["check"] == check
        keys.set_key(core, email="c@example.org", provider="openai-compatible", key="sk-real",
                     base_url=fake.url + "/v1")
        assert keys.list_keys(core, email="c@example.org")[0]["check"] is None  # about the old key
        assert keys.check_key(core, account["id"], "openai-compatible")["status"] == "ok"
    # offline: the key stays stored, the check says why it could not be made
    check = keys.check_key(core, account["id"], "openai-compatible")
    assert check["status"] == "unreachable" and keys.plaintext(core, account["id"], "openai-compatible") == "sk-real"


def test_a_malformed_allow_list_stops_the_start(tmp_path):
    from orchestrator.core import Core
    from orchestrator.plans import ConfigError

    (tmp_path / "config.toml").write_text('[providers]\nallow_base_urls = "http://127.0.0.1:11434"\n')
    with pytest.raises(ConfigError, match="allow_base_urls must be a list"):
        Core.open(tmp_path)


def _probed(core, email: str, fake, provider: str = "openai-compatible", model: str | None = None) -> dict:
    owner = accounts.by_email(core, email).id
    base = fake.url if provider == "ollama" else fake.url + "/v1"
    keys.set_key(core, email=email, provider=provider, key="sk-x", base_url=base)  # an ollama behind a proxy
    keys.check_key(core, owner, provider, model)
    return keys.held(core, owner)[provider]


@pytest.mark.parametrize("mode", ["refuse", "ignore"])
def test_the_check_finds_a_server_without_tool_calls(core, mode):
    """A one-token completion, then one offering a tool, on the first model the server lists; the
    verdict, the model and what was seen are stored with the key and listed."""
    from tests.seats.fake_provider import FakeProvider

    accounts.create_account(core, f"{mode}@example.org")
    with FakeProvider() as fake:
        fake.models = [{"id": "smollm2", "object": "model"}, {"id": "other", "object": "model"}]
        fake.tools = mode
        info = _probed(core, f"{mode}@example.org", fake)
        chats = fake.bodies(path="/v1/chat/completions")
    assert chats[0].get("max_tokens") == 1 and "tools" not in chats[0]
    assert chats[1]["tools"][0]["function"]["name"] == "ping" and chats[1]["tool_choice"] == "auto"
    assert {b["model"] for b in chats} == {"smollm2"}
    assert info["tools"] == "no" and info["check"]["status"] == "ok" and info["check"]["model"] == "smollm2"
    said = info["check"]["tools_detail"]
    assert ("HTTP 400" in said and "does not support tools" in said) if mode == "refuse" else "answered with text" in said
    assert keys.list_keys(core, email=f"{mode}@example.org")[0]["tools"] == "no"
    assert keys.no_tools(info, "openai-compatible", "any-id-the-server-ignores") == said


def test_the_check_finds_tool_calls_and_a_new_key_forgets_the_verdict(core):
    from tests.seats.fake_provider import FakeProvider

    accounts.create_account(core, "tools@example.org")
    with FakeProvider() as fake:
        fake.models = [{"id": "qwen3:latest", "object": "model"}]
        fake.tools_refused_status = 500
        info = _probed(core, "tools@example.org", fake, provider="ollama")
        assert info["tools"] == "yes" and "tool call (wait)" in info["check"]["tools_detail"]
        fake.tools = "refuse"  # llama.cpp without --jinja answers 500
        info = _probed(core, "tools@example.org", fake, provider="ollama")
    assert info["tools"] == "no" and "HTTP 500" in info["check"]["tools_detail"]
    # an ollama verdict is about the model probed (its tag spelled either way), not every model it serves
    assert keys.no_tools(info, "ollama", "qwen3") and keys.no_tools(info, "ollama", "qwen3:latest")
    assert keys.no_tools(info, "ollama", "llama3.2") is None
    keys.set_key(core, email="tools@example.org", provider="ollama", key=None, base_url="http://127.0.0.1:9")
    assert keys.list_keys(core, email="tools@example.org")[0]["tools"] is None  # about the old server


def test_a_router_key_is_probed_only_on_a_named_model_and_offline_nothing_is_concluded(core):
    from tests.seats.fake_provider import FakeProvider

    account = accounts.create_account(core, "router@example.org")
    with FakeProvider() as fake:
        fake.key_info = {"limit_remaining": 5.0}
        fake.tools = "refuse"
        info = _probed(core, "router@example.org", fake, provider="router")
        assert info["tools"] is None and "--check-model" in info["check"]["tools_detail"]
        assert fake.bodies(path="/v1/chat/completions") == []
        info = _probed(core, "router@example.org", fake, provider="router", model="vendor/small")
        assert info["tools"] == "no" and info["check"]["model"] == "vendor/small"
        assert keys.no_tools(info, "router", "vendor/small") and keys.no_tools(info, "router", "vendor/large") is None
        fake.rejected_keys.add("sk-x")  # a refused key says nothing of tool calls
        info = _probed(core, "router@example.org", fake, provider="router", model="vendor/small")
        assert info["check"]["status"] == "rejected" and info["tools"] is None
    keys.check_key(core, account["id"], "router", "vendor/small")
    assert keys.held(core, account["id"])["router"]["tools"] is None
