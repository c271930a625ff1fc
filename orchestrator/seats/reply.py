"""A provider's answer to one seat turn, as every protocol reads it.

Its usage figures are what the ledger adds to a run's spend, so they are checked here, once for every
protocol: a token count or a stated price that is not a finite number within its range (negative,
1e999, past MAX_CALL_TOKENS or MAX_CALL_USD) is a garbled answer, a provider fault (`Rejected`),
never a figure stored. An absent or null figure reads as 0 (no price: the
table's).
"""
from __future__ import annotations

from orchestrator.finite import finite
from orchestrator.seats.faults import Rejected

MAX_CALL_TOKENS = 100_000_000  # one call's tokens: a hundred times the longest context any model takes
MAX_CALL_USD = 10_000.0        # one call's stated price


class Reply:
    """One answer: tool calls (name, arguments, id), text, the model's refusal text if it refused,
    whether its token ceiling cut it, token usage (input includes cached reads and cache writes), the
    provider's own price of the call when it states one, and the native message for memory."""
    __slots__ = ("calls", "text", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
                 "cost_usd", "message", "refusal", "truncated")

    def __init__(self, calls=(), text="", input_tokens=0, output_tokens=0, message=None, *, refusal=None,
                 truncated=False, cached_tokens=0, cache_write_tokens=0, cost_usd=None):
        self.calls, self.text, self.message = list(calls), text or "", message
        self.input_tokens, self.output_tokens = token_count(input_tokens), token_count(output_tokens)
        self.cached_tokens, self.cache_write_tokens = token_count(cached_tokens), token_count(cache_write_tokens)
        self.cost_usd = stated_price(cost_usd)
        self.refusal, self.truncated = refusal, bool(truncated)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def token_count(value) -> int:
    """A usage figure as the provider sent it: absent, null or not a number reads 0; a number must be
    finite and from 0 to MAX_CALL_TOKENS, else the answer is Rejected."""
    if not _number(value):
        return 0
    if not finite(value) or not 0 <= value <= MAX_CALL_TOKENS:
        raise Rejected(f"the provider's usage states {value!r} tokens: not a count from 0 to {MAX_CALL_TOKENS}")
    return int(value)


def stated_price(value) -> float | None:
    """The call's price as the provider stated it (a router's usage.cost): None when absent or not a
    number; a number must be finite and from 0 to MAX_CALL_USD, else the answer is Rejected."""
    if not _number(value):
        return None
    if not finite(value) or not 0 <= value <= MAX_CALL_USD:
        raise Rejected(f"the provider's usage states a cost of {value!r} USD: not a price from 0 to {MAX_CALL_USD}")
    return float(value)
