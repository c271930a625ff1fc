"""Model seats: providers, prompts, turns, metering and the funding checks (docs/SEATS.md)."""
from orchestrator.seats.actions import Refused, tool_specs
from orchestrator.seats.balance import read_balance
from orchestrator.seats.funding import credentials, launch_funding, seat_funding
from orchestrator.seats.player import Credential, ModelSeats, SeatPlayer, TickReport, play_tick
from orchestrator.seats.prices import PriceTable, estimate
from orchestrator.seats.observe_text import render_observation
from orchestrator.seats.prompt import compose_directions, scaffold, system_prompt
from orchestrator.seats.client import new_client
from orchestrator.seats.faults import FaultStreak, KeyRejected, ProviderError, SeatFaulted

__all__ = [
    "Credential", "FaultStreak", "KeyRejected", "ModelSeats", "PriceTable", "ProviderError", "Refused",
    "SeatFaulted", "SeatPlayer",
    "TickReport", "compose_directions", "credentials", "estimate", "launch_funding", "new_client",
    "play_tick", "read_balance", "render_observation", "scaffold", "seat_funding",
    "system_prompt", "tool_specs",
]
