"""Funding and launch checks for each provider case, the router balance, and stored credentials."""
import pytest

from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.seats import credentials, estimate, launch_funding, read_balance, seat_funding
from tests.seats.conftest import run, with_client

KEYS = {"router": {"balance_usd": 5.0}, "anthropic": {}}
SPONSORS = {"openai": ["gpt-4o-mini"], "router": ["meta-llama/llama-3.3-70b-instruct"]}


def fund(seat, keys_=KEYS, sponsors=SPONSORS, verified=True, index=1):
    return seat_funding(index, seat, account_keys=keys_, sponsors=sponsors, email_verified=verified)


def refused(seat, **kw) -> DomainError:
    with pytest.raises(DomainError) as e:
        fund(seat, **kw)
    assert e.value.status == 400 and e.value.message.startswith(f"roster[1] (model {seat.get('model')}): ")
    return e.value


def test_account_keys_fund_their_provider_and_router_is_the_default():
    assert fund({"model": "openai/gpt-4o"}) == "account"
    assert fund({"model": "openai/gpt-4o", "provider": "router"}) == "account"
    assert fund({"model": "claude-sonnet-4-5", "provider": "anthropic"}) == "account"


def test_local_seats_are_free_and_need_no_key():
    assert fund({"model": "local/random", "provider": "local"}, keys_={}, sponsors={}, verified=False) == "free"
    assert refused({"model": "local/chess", "provider": "local"}).code == "bad_roster"


def test_unknown_provider_is_bad_provider():
    e = refused({"model": "x/y", "provider": "cohere-direct"})
    assert e.code == "bad_provider" and "cohere-direct" in e.message


def test_missing_keys_name_the_right_code():
    assert refused({"model": "gpt-4o", "provider": "openai"}).code == "provider_key_required"
    assert refused({"model": "llama3", "provider": "ollama"}).code == "provider_key_required"
    assert refused({"model": "m", "provider": "openai-compatible"}).code == "provider_key_required"
    assert refused({"model": "openai/gpt-4o"}, keys_={"anthropic": {}}).code == "router_key_required"


def test_sponsored_models_are_platform_funded_on_verified_accounts_only():
    assert fund({"model": "gpt-4o-mini", "provider": "openai"}) == "platform"
    assert fund({"model": "meta-llama/llama-3.3-70b-instruct"}, keys_={}) == "platform"
    assert refused({"model": "gpt-4o-mini", "provider": "openai"}, verified=False).code == "email_unverified"
    # sponsorship is per model: another model of the same provider still needs a key
    assert refused({"model": "gpt-4o", "provider": "openai"}).code == "provider_key_required"
    # an account holding its own key pays for itself even where the platform sponsors
    assert fund({"model": "meta-llama/llama-3.3-70b-instruct"}, verified=False) == "account"


def test_stored_key_listings_are_accepted_as_they_come_from_orchestrator_keys():
    listing = [{"provider": "router", "balance_usd": 1.0, "base_url": None, "models": None}]
    platform = [{"provider": "openai", "models": ["gpt-4o-mini"]}]
    assert fund({"model": "a/b"}, keys_=listing, sponsors=platform) == "account"
    assert fund({"model": "gpt-4o-mini", "provider": "openai"}, keys_=listing, sponsors=platform) == "platform"


def test_router_balance_must_cover_the_estimates_high_for_account_router_seats():
    roster = [{"model": "openai/gpt-4o"}, {"model": "claude-sonnet-4-5", "provider": "anthropic"},
              {"model": "meta-llama/llama-3.3-70b-instruct", "provider": "router"}]
    est = estimate(roster, 300)
    need = est["seats"][0]["usd"]["high"] + est["seats"][2]["usd"]["high"]
    kw = dict(account_keys=KEYS, sponsors=SPONSORS, email_verified=True, estimate=est)
    assert launch_funding(roster, router_balance_usd=need + 0.01, **kw) == ["account", "account", "account"]
    with pytest.raises(DomainError) as e:
        launch_funding(roster, router_balance_usd=need - 0.01, **kw)
    assert e.value.code == "router_balance_low" and "roster[0] (model openai/gpt-4o)" in e.value.message
    assert "roster[1]" not in e.value.message  # the anthropic seat is not charged to the router key
    # an unknown model is priced at the fallback, so the check still applies
    unknown = [{"model": "nobody/knows"}]
    with pytest.raises(DomainError, match="router key's balance"):
        launch_funding(unknown, router_balance_usd=0.5, account_keys=KEYS, sponsors={}, email_verified=True,
                       estimate=estimate(unknown, 300))
    # platform-funded router seats do not draw on the account's router key
    sponsored = [{"model": "meta-llama/llama-3.3-70b-instruct"}]
    assert launch_funding(sponsored, router_balance_usd=0.0, account_keys={}, sponsors=SPONSORS,
                          email_verified=True, estimate=estimate(sponsored, 300)) == ["platform"]


def test_router_balance_reads_the_key_info_endpoint_else_the_stored_balance(fake):
    base = fake.url + "/v1"
    fake.key_info = {"label": "k", "limit": 20.0, "usage": 7.5, "limit_remaining": None}
    assert run(with_client(lambda c: read_balance(c, "k-good", base_url=base, stored=99.0))) == 12.5
    fake.key_info = {"limit": 20.0, "usage": 7.5, "limit_remaining": 3.25}
    assert run(with_client(lambda c: read_balance(c, "k-good", base_url=base, stored=99.0))) == 3.25
    fake.key_info = {"limit": None, "usage": 7.5}  # unlimited key: the endpoint knows no balance
    assert run(with_client(lambda c: read_balance(c, "k-good", base_url=base, stored=4.0))) == 4.0
    fake.rejected_keys.add("k-bad")
    assert run(with_client(lambda c: read_balance(c, "k-bad", base_url=base, stored=4.0))) == 4.0
    unreachable = "http://127.0.0.1:9/v1"
    assert run(with_client(lambda c: read_balance(c, "k", base_url=unreachable, stored=None))) is None


def test_credentials_decrypt_the_account_or_platform_key_for_each_model_seat(tmp_path, monkeypatch):
    monkeypatch.delenv("STUDIO_SECRET_KEY_FILE", raising=False)
    core = Core.open(tmp_path)
    acct = create_account(core, "a@example.com", verified=True)
    keys.set_key(core, provider="router", key="sk-own", email="a@example.com", balance_usd=3.0)
    keys.set_key(core, provider="openai-compatible", key="sk-vllm", email="a@example.com",
                 base_url="http://10.0.0.5:8000/v1")
    keys.set_key(core, provider="openai", key="sk-platform", platform=True, models=["gpt-4o-mini"])
    roster = [{"model": "x/y"}, {"model": "gpt-4o-mini", "provider": "openai"},
              {"model": "local/random", "provider": "local"}, {"model": "qwen", "provider": "openai-compatible"}]
    fundings = launch_funding(roster, account_keys=keys.held(core, acct["id"]),
                              sponsors=keys.held(core, keys.PLATFORM), email_verified=True)
    assert fundings == ["account", "platform", "free", "account"]
    creds = credentials(core, acct["id"], roster, fundings)
    assert sorted(creds) == [0, 1, 3]
    assert (creds[0].key, creds[1].key, creds[3].key) == ("sk-own", "sk-platform", "sk-vllm")
    assert creds[3].base_url == "http://10.0.0.5:8000/v1" and creds[0].base_url is None


def test_router_balance_for_admission_reads_key_info_then_the_stored_balance(fake, tmp_path, monkeypatch):
    from orchestrator.seats import balance

    monkeypatch.delenv("STUDIO_SECRET_KEY_FILE", raising=False)
    core = Core.open(tmp_path)
    acct = create_account(core, "b@example.com")
    assert balance.router_balance(core, acct["id"]) is None
    keys.set_key(core, provider="router", key="k-good", email="b@example.com", base_url=fake.url + "/v1", balance_usd=2.0)
    fake.key_info = {"limit": 10.0, "usage": 4.0}
    assert balance.router_balance(core, acct["id"]) == 6.0
    fake.rejected_keys.add("k-good")  # unreachable or refusing: the stored balance
    assert balance.router_balance(core, acct["id"]) == 2.0
