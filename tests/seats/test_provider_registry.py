"""The provider registry is the one place a provider's facts live: every provider the API accepts has
exactly one row, the modules that once held provider facts compare no provider names, and a provider
added as one row is keyed, checked, called, priced and judged by the seats from that row alone."""
from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from orchestrator import accounts, provider_kinds
from orchestrator.core import Core
from orchestrator.errors import AdminError
from orchestrator.provider_kinds import SPECS, ProviderSpec
from orchestrator.seats import keys, new_client
from orchestrator.seats.families import request_problem
from orchestrator.seats.openai_chat import OpenAIChat
from orchestrator.seats.prices import PriceTable
from orchestrator.seats.probe import check, request_for
from orchestrator.seats.providers import endpoint, make_chat
from tests.seats.conftest import run

ROOT = Path(__file__).resolve().parents[2]
# where a provider's facts were spread before the registry: none of them may name a provider now
READERS = ["orchestrator/seats/" + m for m in (
    "keys.py", "providers.py", "probe.py", "prices.py", "openai_chat.py", "anthropic_chat.py", "families.py")]


def test_every_provider_the_api_accepts_has_exactly_one_row():
    from api.run_schemas import Provider
    from orchestrator.runs.admission.body import PROVIDERS

    accepted = typing.get_args(Provider)
    assert accepted == tuple(PROVIDERS) == provider_kinds.ROUTED == tuple(SPECS)
    assert all(SPECS[n].name == n for n in accepted)
    assert keys.PROVIDERS == tuple(n for n in accepted if SPECS[n].keyed)
    with pytest.raises(ValueError, match="two rows"):
        provider_kinds._registry(ProviderSpec("x", key="none"), ProviderSpec("x", key="required"))


def test_every_keyed_row_names_what_the_seats_need():
    for spec in SPECS.values():
        if spec.keyed:
            assert spec.protocol and spec.key_check, spec
        else:
            assert spec.protocol is None and spec.pricing == "free", spec


def _names_a_provider(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in SPECS and node.value not in provider_kinds.UNPAID


@pytest.mark.parametrize("rel", READERS)
def test_the_modules_that_held_provider_facts_now_read_the_registry(rel):
    """No comparison with a provider's name, no table keyed by one: each behaviour asks the row."""
    found = []
    for node in ast.walk(ast.parse((ROOT / rel).read_text())):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            parts += [e for p in parts if isinstance(p, (ast.Tuple, ast.List, ast.Set)) for e in p.elts]
            if any(_names_a_provider(p) for p in parts):
                found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Dict) and any(_names_a_provider(k) for k in node.keys if k is not None):
            found.append(f"{rel}:{node.lineno} a table keyed by provider names")
        elif isinstance(node, (ast.Tuple, ast.List)) and sum(_names_a_provider(e) for e in node.elts) > 1:
            found.append(f"{rel}:{node.lineno} a list of provider names")
    assert not found, "\n".join(found)


@pytest.fixture
def core(tmp_path) -> Core:
    return Core.open(tmp_path / "data")


@pytest.fixture
def acme(monkeypatch):
    """A provider added as one row: an OpenAI-style self-hosted server with its own check path."""
    row = ProviderSpec("acme", key="required", protocol="openai_chat", v1_suffix=True, key_check="/models",
                       probe="server", vendor="acme", families="open", headers=(("X-Acme", "yes"),))
    monkeypatch.setitem(SPECS, "acme", row)
    return row


def test_a_new_row_is_a_provider_the_seats_serve(acme, core, fake):
    accounts.create_account(core, "acme@example.org")
    with pytest.raises(AdminError, match="needs --base-url"):
        keys.set_key(core, email="acme@example.org", provider="acme", key="k-good")
    keys.set_key(core, email="acme@example.org", provider="acme", key="k-good", base_url=fake.url)
    owner = accounts.by_email(core, "acme@example.org").id
    assert keys.held(core, owner)["acme"]["base_url"] == fake.url

    # the check: the row's path on the row's endpoint (/v1 appended), the tool probe on the listed model
    keyed, path = request_for("acme", "k-good", fake.url)
    assert keyed.url(path) == fake.url + "/v1/models"
    fake.models = [{"id": "m1", "object": "model"}]
    found = check("acme", "k-good", fake.url, private_ok=True)
    assert found["status"] == "ok" and found["model"] == "m1" and found["tools"] in ("yes", "no")

    # the chat: the row's protocol module, its endpoint and its headers
    async def one_turn():
        async with new_client(private_ok=True) as client:
            chat = make_chat("acme", model="m1", key="k-good", client=client, system="s", base_url=fake.url)
            assert isinstance(chat, OpenAIChat) and chat.base_url == fake.url + "/v1"
            await chat.send([], "hello", __import__("asyncio").get_running_loop().time() + 5)
    run(one_turn())
    sent = [r for r in fake.requests if r["path"] == "/v1/chat/completions"][-1]
    assert sent["headers"]["x-acme"] == "yes" and sent["body"]["max_tokens"]  # the open family's ceiling

    # pricing: the row's vendor prefix finds its native ids in the table; the open family judges seats
    table = PriceTable({"acme/m1": [1.0, 2.0]}, (5.0, 20.0))
    assert table.lookup("acme", "m1") == (1.0, 2.0, "table")
    assert request_problem("acme", {"model": "m1", "temperature": 0.5}, 1024) is None


def test_pricing_and_the_v1_rule_come_from_the_rows():
    table = PriceTable({"openai/gpt-x": [1.0, 2.0]}, (5.0, 20.0))
    for name, spec in SPECS.items():
        source = table.lookup(name, "gpt-x")[2]
        assert (source == "free") == (spec.pricing == "free"), name
    assert endpoint("ollama", "http://h:11434") == "http://h:11434/v1"
    assert endpoint("ollama", "http://h:11434/v1/") == "http://h:11434/v1"
    assert endpoint("openai-compatible", "http://h/api") == "http://h/api"
    assert endpoint("router") == SPECS["router"].base_url
