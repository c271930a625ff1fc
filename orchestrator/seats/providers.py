"""Providers: which wire protocol and base URL each provider a seat may name takes (docs/SEATS.md),
and the seat's Chat for it.

Two wire protocols cover every provider:
- OpenAI chat completions (orchestrator.seats.openai_chat): `router` (default base
  https://openrouter.ai/api/v1), `openai` (https://api.openai.com/v1), `ollama` (its /v1
  OpenAI-compatible endpoint; /v1 is appended to the key's base URL when missing) and
  `openai-compatible` (the key's base URL as given);
- Anthropic messages (orchestrator.seats.anthropic_chat): `anthropic` (https://api.anthropic.com).
`local` seats are scripted policies played inside the engine: no client, no key, free.
"""
from __future__ import annotations

from orchestrator.seats.anthropic_chat import AnthropicChat
from orchestrator.seats.chat import Chat
from orchestrator.seats.openai_chat import OpenAIChat

DEFAULT_BASE_URL = {"router": "https://openrouter.ai/api/v1", "openai": "https://api.openai.com/v1",
                    "anthropic": "https://api.anthropic.com"}
OPENAI_STYLE = ("router", "openai", "ollama", "openai-compatible")


def make_chat(provider: str, *, base_url: str | None = None, **kw) -> Chat:
    """The seat's Chat in its provider's protocol, on the key's base URL or else the provider's own."""
    base_url = base_url or DEFAULT_BASE_URL.get(provider)
    if provider in OPENAI_STYLE:
        return OpenAIChat(provider, base_url=base_url, **kw)
    if provider == "anthropic":
        return AnthropicChat(provider, base_url=base_url, **kw)
    raise ValueError(f"provider {provider!r} has no chat client (local seats are played by the engine)")
