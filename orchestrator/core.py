"""The service core's handle: the store, the plan table and the limiters of one data dir.

REST routes, MCP tools, the admin CLI and notebooks all build one `Core` and pass it to the service
functions (orchestrator.scenarios, .skills, .auth, ...) together with a Principal.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.archive_config import check_config
from orchestrator.clock import Clock
from orchestrator.egress import allow_list
from orchestrator.lastused import LastUsed
from orchestrator.plans import load_plans, read_config
from orchestrator.ratelimit import AddressLimiter, TokenLimiter
from orchestrator.store import Store


@dataclass
class Core:
    store: Store
    plans: dict[str, dict]
    config: dict
    token_limiter: TokenLimiter = field(default_factory=TokenLimiter)
    address_limiter: AddressLimiter = field(default_factory=AddressLimiter)
    dispatcher: object | None = None  # set while a Dispatcher plays runs for this data dir
    clock: Clock = field(default_factory=Clock)  # every service-time reading; tests set it
    last_used: LastUsed | None = None

    def __post_init__(self) -> None:
        if self.last_used is None:
            self.last_used = LastUsed(self.store)
        self.token_limiter.clock = self.address_limiter.clock = self.clock

    @property
    def data_dir(self) -> Path:
        return self.store.data_dir

    @classmethod
    def open(cls, data_dir: str | Path, *, refused_per_address_per_minute: int | None = None,
             clock: Clock | None = None) -> "Core":
        """Create the data dir if needed, migrate the store, read config.toml (plans, limits, smtp)."""
        store = Store(data_dir)
        config = read_config(store.data_dir)
        allow_list(config)  # a malformed [providers] allow_base_urls stops the start, not a launch
        check_config(config)  # so does a bad [archive] events or derived_cache_mb
        ceiling = refused_per_address_per_minute
        if ceiling is None:
            ceiling = int((config.get("limits") or {}).get("refused_per_address_per_minute",
                                                          AddressLimiter.DEFAULT_CEILING))
        return cls(store=store, plans=load_plans(config), config=config,
                   address_limiter=AddressLimiter(ceiling), clock=clock or Clock())

    def plan(self, plan_id: str) -> dict:
        return self.plans[plan_id]
