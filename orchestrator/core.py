"""The service core's handle: the store, the plan table and the limiters of one data dir.

REST routes, MCP tools, the admin CLI and notebooks all build one `Core` and pass it to the service
functions together with a Principal.

While a dispatcher plays this data dir's runs, `Core.dispatcher` holds it. The core sits below the run
service, so it names the dispatcher by what the service's functions use of it (the protocols below),
never by its class.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from orchestrator.archive_config import check_config
from orchestrator.clock import Clock
from orchestrator.egress import allow_list
from orchestrator.lastused import LastUsed
from orchestrator.ratelimit import MinuteCounter  # the console's sign-ins
from orchestrator.store.limits import Counts
from orchestrator.plans import ConfigError, load_plans, read_config
from orchestrator.ratelimit import AddressLimiter, TokenLimiter
from orchestrator.store import BUSY_TIMEOUT_S, SettingError, Store, open_store
from orchestrator.store.location import ENV as STORE_ENV
from orchestrator.store.location import check as reach_store

if TYPE_CHECKING:
    from orchestrator.store.postgres import PostgresStore


def busy_timeout_s(config: dict) -> float:
    """config.toml's `[store] busy_timeout_s`, checked when the service opens (a bad value stops it)."""
    value = (config.get("store") or {}).get("busy_timeout_s", BUSY_TIMEOUT_S)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 600:
        raise ConfigError(f"config.toml [store] busy_timeout_s: should be a number of seconds, more than 0 "
                          f"and at most 600 (got {value!r})")
    return float(value)


class RunEnds(Protocol):
    """A run's end as it lands in the store (the run lifecycle's Ends)."""

    def watch(self, run_id: str) -> AbstractContextManager[threading.Event]: ...
    def listening(self, heard: Callable[[Iterable[str]], None]) -> AbstractContextManager[None]: ...


class SummaryKeeper(Protocol):
    """Series' summaries computed on the workers (the series' Summarizer)."""

    def ask(self, batch_id: str, scored: Iterable[str], graded: Iterable[str], final: bool = False) -> Future: ...
    def listening(self, kept: Callable[[str], None]) -> AbstractContextManager[None]: ...


class GradingSlots(Protocol):
    """How many of an account's runs grade at once (the head's Grader)."""

    def per_account(self) -> int: ...


class EndedRuns(Protocol):
    """Settles the archive of runs that ended (the head's Archiver)."""

    def ended(self, run_ids: list[str]) -> None: ...


class AgentExchange(Protocol):
    """The Ray actor holding agent seats' open turns (the agents' Exchanges)."""

    def handle(self) -> Any: ...


class Playing(Protocol):
    """What the run service uses of the dispatcher that plays this data dir."""

    ends: RunEnds
    live_frames: dict[str, dict]
    grader: GradingSlots
    summaries: SummaryKeeper
    archiver: EndedRuns
    agents: AgentExchange

    @property
    def warming(self) -> bool: ...
    def capacity(self, scripted: bool = True) -> int: ...
    def wake(self) -> None: ...
    def request_cancel(self, run_id: str) -> None: ...


def check_store(data_dir: str | Path) -> str:
    """Stop a start (ConfigError, one line) whose store setting does not parse or whose database
    cannot be reached, before anything is created; the store's dialect."""
    try:
        return reach_store(data_dir, read_config(data_dir))
    except SettingError as e:
        raise ConfigError(str(e)) from None


@dataclass
class Core:
    store: Store | PostgresStore
    plans: dict[str, dict]
    config: dict
    token_limiter: TokenLimiter = field(default_factory=TokenLimiter)
    address_limiter: AddressLimiter = field(default_factory=AddressLimiter)
    sign_in_counter: MinuteCounter = field(default_factory=lambda: MinuteCounter("sign_in"))  # the console's
    dispatcher: Playing | None = None  # set while a Dispatcher plays runs for this data dir
    agents: AgentExchange | None = None  # the service's agent exchange, on a head that may play runs
    clock: Clock = field(default_factory=Clock)  # every service-time reading; tests set it
    last_used: LastUsed | None = None

    def __post_init__(self) -> None:
        if self.last_used is None:
            self.last_used = LastUsed(self.store)
        self.token_limiter.clock = self.address_limiter.clock = self.clock
        counts = Counts(self.store)  # the per-minute ceilings hold across every head on this store
        self.token_limiter.use(counts)
        self.address_limiter.use(counts)
        self.sign_in_counter.use(counts)

    @property
    def data_dir(self) -> Path:
        return self.store.data_dir

    @classmethod
    def open(cls, data_dir: str | Path, *, refused_per_address_per_minute: int | None = None,
             clock: Clock | None = None, store_url: str | None = None) -> "Core":
        """Open the store config.toml or STUDIO_STORE_URL names (SQLite in the data dir when neither
        does), creating the data dir if needed, migrate it, read config.toml (plans, limits, smtp).
        store_url: the head's own store, named to a Ray process, whose environment is the cluster's."""
        config = read_config(data_dir)
        try:
            store = open_store(data_dir, config, busy_timeout_s(config),
                               **({"environ": {**os.environ, STORE_ENV: store_url}} if store_url else {}))
        except SettingError as e:
            raise ConfigError(str(e)) from None
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
