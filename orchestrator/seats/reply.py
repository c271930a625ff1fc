"""A provider's answer to one seat turn, as every protocol reads it."""
from __future__ import annotations


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
        self.cost_usd = float(cost_usd) if isinstance(cost_usd, (int, float)) and not isinstance(cost_usd, bool) \
            and cost_usd >= 0 else None
        self.refusal, self.truncated = refusal, bool(truncated)


def token_count(value) -> int:
    """A usage figure as the provider sent it: a positive number, else 0 (absent, null, not a number)."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0
