"""A seat of a run's roster as launched and played: the seat as sent, resolved at admission (its
provider, funding, format and output ceiling settled, its skills' text snapshotted), with the usage and
turn counts its worker meters into it while the run plays.

Optional fields carry their bounds on the field, not inside the union: the API's models take a
field's type from here, and a bound is the store's, not the wire's.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, TypeAdapter

from orchestrator.provider_kinds import AGENT, LOCAL, ROUTED, UNPAID
from orchestrator.records.base import INT64, Count, Record, Text

Funding = Literal["account", "platform", "free"]
Reasoning = Literal["off", "low", "medium", "high"]
Format = Literal["tools", "json"]
Provider = Literal[ROUTED]
_COUNT = {"ge": 0, "le": INT64}


class SkillPlayed(Record):
    """A skill as the seat carried it: the text is the one played, whatever became of the skill since."""
    id: str = Field(max_length=64)
    name: str = Field(max_length=60)
    text: Text


class SeatUsage(Record):
    """What the seat metered. null only where an earlier version stored a number JSON cannot carry
    (the run record names the place in `unreadable`)."""
    agent_turns: int | None = Field(**_COUNT)
    input_tokens: int | None = Field(**_COUNT)
    output_tokens: int | None = Field(**_COUNT)
    usd: float | None = Field(ge=0, allow_inf_nan=False)

    @classmethod
    def zero(cls) -> SeatUsage:
        return cls(agent_turns=0, input_tokens=0, output_tokens=0, usd=0.0)


class SeatTurns(Record):
    """A model or agent seat's turn counts: answered (invalid replies included), invalid, timed out,
    provider faults past the retries, and the retries within turns."""
    answered: Count
    invalid: Count
    timed_out: Count
    provider_errors: Count
    retries: Count

    @classmethod
    def zero(cls) -> SeatTurns:
        return cls(answered=0, invalid=0, timed_out=0, provider_errors=0, retries=0)


class Seat(Record):
    """funding is null only between a seat's resolution and the launch's funding check; every stored
    seat has one. replied: set on a model seat once its run ended. note: a local seat that was sent
    skills or instructions says why they are ignored."""
    seat: Count
    name: str = Field(min_length=1, max_length=300)
    model: str = Field(min_length=1, max_length=200)
    provider: Provider
    funding: Funding | None = None
    reasoning: Reasoning | None = None
    temperature: float | None = Field(default=None, ge=0, le=2, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)
    format: Format
    skills: tuple[SkillPlayed, ...] = ()
    instructions: str | None = Field(default=None, max_length=4000)
    scaffold: str = Field(max_length=500)
    usage: SeatUsage = Field(default_factory=SeatUsage.zero)
    turns: SeatTurns | None = None
    # only some seats carry these: absent from their JSON rather than null
    replied: bool | None = Field(default=None, exclude_if=lambda v: v is None)
    note: str | None = Field(default=None, max_length=2000, exclude_if=lambda v: v is None)

    @property
    def local(self) -> bool:
        return self.provider == LOCAL

    @property
    def agent(self) -> bool:
        return self.provider == AGENT

    @property
    def unpaid(self) -> bool:
        """No key, and no inference of ours to pay for (a scripted policy, or the account's program)."""
        return self.provider in UNPAID

    def funded(self, funding: Funding) -> Seat:
        return self.model_copy(update={"funding": funding})

    def metered(self, usage: dict, turns: dict | None) -> Seat:
        """The seat with what its worker last metered (usage; turns, or None to keep the seat's)."""
        fresh = {"usage": SeatUsage.model_validate(usage)}
        if turns is not None:
            fresh["turns"] = SeatTurns.model_validate(turns)
        return self.model_copy(update=fresh)

    def afresh(self) -> Seat:
        """The seat as a fork keeps it: as played, with usage and counts started over and no funding yet."""
        return self.model_copy(update={"usage": SeatUsage.zero(), "funding": None, "replied": None,
                                       "turns": None if self.local else SeatTurns.zero()})

    def plain(self) -> dict:
        """As JSON data: the stored roster entry, the run view's, and what a worker's job carries."""
        return self.model_dump(mode="json")


_SEATS = TypeAdapter(tuple[Seat, ...])


def plain(seats) -> list[dict]:
    """A roster as JSON data (the dispatcher hands every job its roster this way)."""
    return _SEATS.dump_python(tuple(seats), mode="json")
