"""A seat's Chat for its provider: the wire protocol module its registry row names (provider_kinds'
SPECS), on the key's base URL or else the provider's own.

Two wire protocols cover every provider today: OpenAI chat completions (openai_chat) and Anthropic
messages (anthropic_chat). `local` and `agent` seats name none: the engine or the account's own
program plays them.
"""
from __future__ import annotations

from orchestrator.provider_kinds import SPECS, ProviderSpec, spec
from orchestrator.seats.anthropic_chat import AnthropicChat
from orchestrator.seats.chat import Chat
from orchestrator.seats.openai_chat import OpenAIChat

# a new wire protocol is one module beside these, named here by the value its rows carry
PROTOCOLS: dict[str, type[Chat]] = {"openai_chat": OpenAIChat, "anthropic_chat": AnthropicChat}


def endpoint(provider: str | ProviderSpec, given: str | None = None) -> str:
    """Where the provider's API is: the key's base URL or the provider's default, with /v1 appended
    for providers whose OpenAI-style endpoint lives there (ollama)."""
    s = spec(provider) if isinstance(provider, str) else provider
    base = (given or s.base_url or "").rstrip("/")
    return base + "/v1" if s.v1_suffix and not base.endswith("/v1") else base


def make_chat(provider: str, *, base_url: str | None = None, **kw) -> Chat:
    """The seat's Chat in its provider's protocol."""
    s = SPECS.get(provider)
    if s is None or s.protocol is None:
        raise ValueError(f"provider {provider!r} has no chat client (local seats are played by the engine)")
    return PROTOCOLS[s.protocol](provider, base_url=endpoint(s, base_url), **kw)

