"""A match's event log for the service's readers (pages, observations, forks): the archive's read,
which regenerates a scripted match kept as its inputs (analytics.archive.derive), with its refusal in
SPEC.md's envelope. A log that cannot be derived is never served as the match's: the reader answers
410 `log_not_kept` naming the cause, and the match's results (its run's) stand."""
from __future__ import annotations

from typing import TYPE_CHECKING

from analytics.archive.cache import cache_mb
from analytics.archive.derive import DerivedLogError, events_mode
from analytics.archive.store import Archive
from orchestrator.errors import DomainError
from orchestrator.plans import ConfigError

if TYPE_CHECKING:
    from orchestrator.core import Core


def check_config(config: dict) -> None:
    """config.toml's [archive] events and derived_cache_mb, checked when the service opens: a bad value
    stops the start (ConfigError, one line), not the first match."""
    try:
        events_mode(config)
        if cache_mb(config) < 0:
            raise ValueError("config.toml [archive] derived_cache_mb: should be a number of MiB, 0 or more")
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e) if "config.toml" in str(e) else
                          f"config.toml [archive] derived_cache_mb: should be a number of MiB ({e})") from None


def read_events(core: Core, match_id: str, key: str | None) -> tuple[dict | None, dict | None]:
    """(columns, metadata) as Archive.read_events gives them; (None, None) when nothing is archived."""
    try:
        return Archive.of(core.data_dir, core.config).read_events(match_id, key)
    except DerivedLogError as e:
        raise DomainError("log_not_kept", e.message) from None
