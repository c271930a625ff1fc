"""Provider faults: a seat's call that ended without a usable reply for a cause outside the model's own
answer (docs/SEATS.md), and the rule that fails a run on them.

Each fault is one of three codes by its cause: provider_timeout (no answer within turn_timeout_ms),
provider_unreachable (a connection error, or 5xx, 529 or 429 still answered after the retries) and
provider_rejected (another 4xx, or a 200 that is not the provider's answer or carries an `error`).
FAULT_TICKS consecutive ticks with a fault on one seat fail the run with the last cause's code, naming
the seat and its provider. A refusal, a reply cut at its ceiling or an unreadable action are the
model's answer, not faults: they end a streak. `FaultStreak` holds the rule for one seat; every
caller of a seat's Chat keeps one."""
from __future__ import annotations

from orchestrator.errors import envelope

FAULT_TICKS = 3
TIMEOUT, UNREACHABLE, REJECTED = "provider_timeout", "provider_unreachable", "provider_rejected"


class SeatFailed(Exception):
    """A seat that cannot play on: the run fails at once; run.error names seat and provider."""
    code = "provider_error"

    def envelope(self) -> dict:
        return envelope(self.code, str(self))


class KeyRejected(SeatFailed):
    """The provider refused the key (401/403)."""
    code = "provider_key_rejected"

    def __init__(self, seat: str, provider: str, status: int):
        self.seat, self.provider, self.status = seat, provider, status
        super().__init__(f"{seat}: the {provider} provider rejected the key (HTTP {status}); "
                         f"store a working {provider} key with `studio key set` and launch again")


class ModelUnknown(SeatFailed):
    """The provider does not know the model, or the key's base URL points nowhere (404): waiting every
    tick would only burn the season."""
    code = "provider_model_unknown"

    def __init__(self, seat: str, provider: str):
        self.seat, self.provider = seat, provider
        super().__init__(f"{seat}: the {provider} provider answered 404 (no such model, or a wrong base URL "
                         "on the key); check the model id and the key's --base-url and launch again")


class ProviderError(Exception):
    """A provider fault: no usable answer this turn. `code` says which of the three causes."""
    code = REJECTED


class Unreachable(ProviderError):
    """A connection error, or 5xx / 529 / 429 on every attempt the turn allowed. `status`: the HTTP
    status the provider last answered with, None when it never answered (it could not be reached)."""
    code = UNREACHABLE

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class TurnTimeout(ProviderError):
    """The turn's time ran out while waiting for the provider."""
    code = TIMEOUT


class Rejected(ProviderError):
    """HTTP 4xx other than 429 and those that fail a run at once, a body that is not the provider's
    answer format, or an error object in a 200."""
    code = REJECTED


class SeatFaulted(SeatFailed):
    """FAULT_TICKS consecutive ticks of provider faults on one seat."""

    def __init__(self, seat: str, provider: str, ticks: int, last: ProviderError):
        self.seat, self.provider, self.code = seat, provider, last.code
        what = {TIMEOUT: "did not answer in time", UNREACHABLE: "could not be reached",
                REJECTED: "refused or garbled every call"}[last.code]
        if getattr(last, "status", None) is not None:  # it was reached: it answered with an error
            what = f"answered HTTP {last.status} to every call"
        super().__init__(f"{seat}: the {provider} provider {what} for {ticks} ticks in a row; last cause: {last}")


class FaultStreak:
    """Consecutive faulted ticks of one seat: `fault(e)` counts one and raises SeatFaulted at the
    FAULT_TICKS-th; `clear()` after a usable reply."""

    def __init__(self, seat: str, provider: str, limit: int = FAULT_TICKS):
        self.seat, self.provider, self.limit = seat, provider, limit
        self.ticks = 0
        self.last: ProviderError | None = None

    def fault(self, e: ProviderError) -> None:
        self.ticks += 1
        self.last = e
        if self.ticks >= self.limit:
            raise SeatFaulted(self.seat, self.provider, self.ticks, e) from e

    def clear(self) -> None:
        self.ticks = 0

    def replayed(self, faulted: bool) -> None:
        """A recorded turn replayed after a resume: counted as it was, never raising (the run went on)."""
        self.ticks = self.ticks + 1 if faulted else 0
