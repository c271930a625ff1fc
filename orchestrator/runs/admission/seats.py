"""The seat layer as admission sees it: scaffolds, who pays for each seat, what a launch may cost.

Local seats are free and need no key. Model seats are funded by the account's own key for their
provider, or by an operator key that sponsors the model (docs/SEATS.md). The rules live in
the seat layer (funding, prices); this module feeds them what the account holds.
"""
from __future__ import annotations

from orchestrator.seats import keys
from orchestrator.agents import roster as agent_roster
from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.seats import prompt
from orchestrator.seats.funding import launch_funding
from orchestrator.seats.prices import PriceTable
from orchestrator.seats.prices import estimate as price_estimate
from orchestrator.seats.probe import PROBED
from orchestrator.provider_kinds import LOCAL
from orchestrator.records.roster import Seat, plain

LOCAL_SCAFFOLD = "local-policy-v1"


def compose_directions(skills: list[dict], instructions: str | None) -> str:
    return prompt.compose_directions(skills, instructions)


def scaffold(provider: str, fmt: str, directions: str) -> str:
    if provider == agent_roster.AGENT:
        return agent_roster.scaffold(directions)
    if provider == LOCAL:  # scripted policies read no prompt, but the seat still records what it carried
        tag = prompt.scaffold(fmt, directions).partition("+")[2]
        return LOCAL_SCAFFOLD + (f"+{tag}" if tag else "")
    return prompt.scaffold(fmt, directions)


class ToolCalls:
    """Whether the key that would run a seat has a server with tool calls, as its check found
    (the keys' no_tools). The key is the one funding picks: the account's own for the
    provider, else the platform's key that sponsors the model. The keys are read once per admission."""

    def __init__(self, core: Core, principal: Principal):
        self.core, self.principal = core, principal
        self._own = self._platform = None

    def missing(self, provider: str, model: str) -> str | None:
        """What the key's check saw, when its server has no tool calls for this seat; else None."""
        if provider not in PROBED:
            return None
        if self._own is None:
            self._own, self._platform = keys.held(self.core, self.principal.account_id), keys.held(self.core, keys.PLATFORM)
        info = self._own.get(provider)
        if info is None and model in ((self._platform.get(provider) or {}).get("models") or ()):
            info = self._platform[provider]
        return keys.no_tools(info, provider, model)


def key_prices(core: Core, principal: Principal) -> dict[str, list[float]]:
    """provider -> [USD per M in, out] of the account's keys that carry their own price."""
    return {p: k["usd_per_mtok"] for p, k in keys.held(core, principal.account_id).items() if k.get("usd_per_mtok")}


def prices(core: Core) -> PriceTable:
    """The service's price table: the data dir's override (`studio prices update`) over the shipped one."""
    return PriceTable.for_data_dir(core.data_dir)


def estimate(seats: list[Seat], ticks: int, trials: int, key_prices: dict | None = None,
             table: PriceTable | None = None) -> dict:
    """{low, high, seats: [...]} USD of the whole launch; local seats cost nothing, self-hosted ones
    nothing unless the key carries a price."""
    return price_estimate(plain(seats), ticks, trials, key_prices=key_prices, prices=table)


def check(core: Core, principal: Principal, seats: list[Seat], est: dict) -> list[str]:
    """Each seat's funding, or the launch refused with the provider code naming the seat."""
    own = keys.held(core, principal.account_id)
    balance = None
    if "router" in own and any(s.provider == "router" for s in seats):
        from orchestrator.seats.balance import router_balance

        balance = router_balance(core, principal.account_id)
    return launch_funding(plain(seats), account_keys=own, sponsors=keys.held(core, keys.PLATFORM),
                          email_verified=principal.verified, router_balance_usd=balance, estimate=est)


def fund(core: Core, principal: Principal, seats: list[Seat], funded: list[Seat], est: dict) -> list[Seat]:
    """The roster with each seat's funding: the seats the funding check sets (`funded`, the kind's
    choice) as it finds, the others free; or the launch refused naming the seat."""
    found = dict(zip((s.seat for s in funded), check(core, principal, funded, est)))
    return [s.funded(found.get(s.seat, "free")) for s in seats]
