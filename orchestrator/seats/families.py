"""What each family of providers and models accepts (a provider's registry row names its family): the
reasoning and sampling fields a seat's request carries, and the seats a provider would refuse, caught
at admission instead (docs/SEATS.md).

`request_problem(seat)` is the one check admission makes (estimate and launch alike); the protocol
clients build their requests from the same functions, so a request admission let through is one the
provider takes.
"""
# OpenAI reasoning effort (the SDK's ReasoningEffort; which values a model takes is per family):
# - gpt-5.1 and later: none, low, medium, high; they default to none. `off` sends "none".
# - gpt-5, gpt-5-mini, gpt-5-nano: minimal, low, medium, high; they default to medium and cannot turn
#   reasoning off. `off` sends "minimal", the least they do.
# - o1, o3, o4 and gpt-5-pro: reasoning cannot be lowered below low (gpt-5-pro: only high); `off` is
#   refused at admission.
# - every other model (gpt-4o, gpt-4.1, ...) does not reason: `off` sends nothing, and low/medium/high
#   are left for the API to judge.
# Reasoning models take no temperature (only the default) unless their effort is none.
#
# Anthropic (API version 2026-10-21): temperature, top_p and top_k are gone from the Messages API, so a
# seat with a temperature is refused. Thinking takes budget_tokens >= 1024 and below max_tokens; the
# budget per effort is sized down to leave ANSWER_TOKENS for the answer, and a max_tokens that cannot
# hold the minimum budget plus the answer is refused.
from __future__ import annotations

import re

from orchestrator.provider_kinds import SPECS

THINKING_BUDGET = {"low": 1024, "medium": 2048, "high": 4096}  # anthropic budget_tokens per effort
MIN_THINKING = 1024        # the API's floor for budget_tokens
ANSWER_TOKENS = 256        # room kept after thinking for the tool calls themselves

_GPT5_LATER = re.compile(r"^gpt-(5\.\d+|[6-9])")
_GPT5 = re.compile(r"^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$")
_ALWAYS_REASONS = re.compile(r"^(o\d|gpt-5-pro)")


def reasoning_on(reasoning: str | None) -> bool:
    return reasoning in THINKING_BUDGET


def openai_family(model: str) -> str:
    """later (gpt-5.1+), gpt5, always (o-series, gpt-5-pro) or plain (no reasoning)."""
    name = model.rsplit("/", 1)[-1].lower()
    if _GPT5_LATER.match(name) and "chat" not in name:
        return "later"
    if _GPT5.match(name):
        return "gpt5"
    if _ALWAYS_REASONS.match(name):
        return "always"
    return "plain"


def openai_effort(model: str, reasoning: str | None) -> str | None:
    """reasoning_effort for the openai provider; None sends nothing (the model's default)."""
    if reasoning is None:
        return None
    if reasoning_on(reasoning):
        return reasoning
    return {"later": "none", "gpt5": "minimal"}.get(openai_family(model))


def openai_takes_temperature(model: str, reasoning: str | None) -> bool:
    family = openai_family(model)
    if family == "plain":
        return True
    if family == "later":
        return openai_effort(model, reasoning) in (None, "none")
    return False


def thinking_budget(reasoning: str | None, max_tokens: int) -> int | None:
    """anthropic budget_tokens for the effort, within max_tokens; None: thinking off. ValueError when
    max_tokens cannot hold the API's minimum budget plus room for the answer."""
    if not reasoning_on(reasoning):
        return None
    budget = min(THINKING_BUDGET[reasoning], max_tokens - ANSWER_TOKENS)
    if budget < MIN_THINKING:
        raise ValueError(f"reasoning {reasoning} thinks with budget_tokens of at least {MIN_THINKING}, which must "
                         f"stay below max_tokens with {ANSWER_TOKENS} left for the answer; send max_tokens of at "
                         f"least {MIN_THINKING + ANSWER_TOKENS} (or reasoning off)")
    return budget


def request_problem(provider: str, seat: dict, max_tokens: int) -> str | None:
    """Why the provider would refuse this seat's requests, with the fix; None when it takes them.
    max_tokens: the seat's resolved ceiling (its own or the default)."""
    reasoning, temperature, model = seat.get("reasoning"), seat.get("temperature"), seat.get("model") or ""
    families = SPECS[provider].families if provider in SPECS else None
    if families == "claude":
        if temperature is not None:
            return ("the Anthropic Messages API (version 2026-10-21) takes no temperature; drop temperature "
                    "from the seat")
        try:
            thinking_budget(reasoning, max_tokens)
        except ValueError as e:
            return str(e)
    if families == "gpt":
        family = openai_family(model)
        if reasoning == "off" and family == "always":
            return (f"{model} always reasons and cannot turn it off; send reasoning low, medium or high, or "
                    "leave reasoning unset for the model's default")
        if temperature is not None and not openai_takes_temperature(model, reasoning):
            return (f"{model} reasons with this setting and then takes no temperature; drop temperature"
                    + (" or send reasoning off" if family == "later" else ""))
    return None
