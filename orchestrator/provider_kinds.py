"""The provider kinds a seat may name that need no key (docs/SEATS.md, docs/AGENTS.md), named once for
every level of the orchestrator; the keyed providers are orchestrator.seats.keys.PROVIDERS."""
from __future__ import annotations

LOCAL = "local"  # a scripted policy: the seat's model is `local/<policy>` (engine.scenario.local_policy)
AGENT = "agent"  # the account's own program, playing through the agent exchange
UNPAID = (LOCAL, AGENT)  # no key, and no inference of ours to pay for
