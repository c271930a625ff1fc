"""config.toml's `[archive]` settings of derived logs (docs/RUNS.md), checked when the service opens."""
from __future__ import annotations

from analytics.archive.cache import cache_mb
from analytics.archive.derive import events_mode
from orchestrator.plans import ConfigError


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
