"""Every provider a seat may name, one ProviderSpec row each: the one place a provider's facts live.

The seats read their behaviour from the row (which wire protocol module speaks to it, where it is
by default, how a stored key is checked and what is probed, how it is priced, which model-family
rules shape its requests); keys, admission and the console list the names from here. Adding a
provider is one row, and one module under seats when its wire protocol is new.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LOCAL = "local"  # a scripted policy: the seat's model is `local/<policy>`
AGENT = "agent"  # the account's own program, playing through the agent exchange
UNPAID = (LOCAL, AGENT)  # no key, and no inference of ours to pay for


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    # key kind: required, optional (a local server checks none; one may still be kept for a proxy in
    # front of it) or none (no key is ever stored: nothing of ours is called)
    key: Literal["required", "optional", "none"]
    # the seats module speaking its wire protocol (None: played without a client)
    protocol: Literal["openai_chat", "anthropic_chat"] | None = None
    base_url: str | None = None    # the default; None: each key carries its own
    v1_suffix: bool = False        # its OpenAI-style endpoint is the base URL's /v1, appended when missing
    key_check: str | None = None   # the path of the one authenticated GET that checks a stored key
    # capability probe (tool calls) once the key checks ok: named, on the model named only (a router
    # serves many models of differing abilities, and its verdict is about that model); listed, on the
    # named or else the first model the server lists (the verdict is about that model); server, the
    # same, but the server's flags and chat template decide for every model it serves; None, not probed
    probe: Literal["named", "listed", "server"] | None = None
    # pricing source: stated, the call's own cost as its answer states it (else the price table);
    # table, the price table; free, nothing unless the key carries its own price
    pricing: Literal["stated", "table", "free"] = "table"
    vendor: str | None = None      # the prefix its native model ids take in the price table
    # the model-family rules its requests follow (reasoning, sampling, the output ceiling's name):
    # openrouter (the router's own reasoning object over every family), gpt (OpenAI's models: effort
    # per family, max_completion_tokens), claude (thinking budgets, no temperature), open (self-hosted)
    families: Literal["openrouter", "gpt", "claude", "open"] | None = None
    headers: tuple[tuple[str, str], ...] = ()  # sent with every request besides the key

    @property
    def keyed(self) -> bool:
        return self.key != "none"

    @property
    def needs_base_url(self) -> bool:
        return self.keyed and self.base_url is None


def _registry(*rows: ProviderSpec) -> dict[str, ProviderSpec]:
    names = [r.name for r in rows]
    if len(set(names)) != len(names):
        raise ValueError(f"a provider has two rows: {sorted(n for n in names if names.count(n) > 1)}")
    return {r.name: r for r in rows}


SPECS: dict[str, ProviderSpec] = _registry(
    ProviderSpec("router", key="required", protocol="openai_chat", base_url="https://openrouter.ai/api/v1",
                 key_check="/key", probe="named", pricing="stated", families="openrouter",
                 headers=(("X-Title", "Scenario Studio"),)),
    ProviderSpec("openai", key="required", protocol="openai_chat", base_url="https://api.openai.com/v1",
                 key_check="/models", vendor="openai", families="gpt"),
    ProviderSpec("anthropic", key="required", protocol="anthropic_chat", base_url="https://api.anthropic.com",
                 key_check="/v1/models", vendor="anthropic", families="claude"),
    ProviderSpec("ollama", key="optional", protocol="openai_chat", v1_suffix=True, key_check="/models",
                 probe="listed", pricing="free", families="open"),
    ProviderSpec("openai-compatible", key="required", protocol="openai_chat", key_check="/models",
                 probe="server", pricing="free", families="open"),
    ProviderSpec(LOCAL, key="none", pricing="free"),
    ProviderSpec(AGENT, key="none", pricing="free"),
)

ROUTED = tuple(SPECS)  # every provider a seat may name
KEYED = tuple(n for n, s in SPECS.items() if s.keyed)  # those a key is stored for


def spec(provider: str) -> ProviderSpec:
    """The provider's row; KeyError for a name no row has (callers check names against ROUTED first)."""
    return SPECS[provider]
