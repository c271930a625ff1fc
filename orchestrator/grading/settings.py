"""`[grading]` in the data dir's config.toml: how much of the cluster grading may use, and how it is
shared between accounts by the head's scheduler and the fair queue.

    [grading]
    tasks = 16            # grading tasks out at once, all accounts together (default: the cluster's CPUs)
    per_account = 8       # of them, at most this many of one account's (default: all of them)
    part_decisions = 128  # at most this many decisions in one task

Smaller parts free a slot for another account sooner but rebuild the match once more per part;
per_account below tasks keeps slots free for others even while one account could use them all.
"""
from __future__ import annotations

from dataclasses import dataclass

from orchestrator.plans import ConfigError

# a slot comes free for another account every few seconds, while each part's rebuild of the match
# stays a small share of its rollouts
PART_DECISIONS = 128


@dataclass(frozen=True)
class Settings:
    tasks: int
    per_account: int
    part_decisions: int


def _whole(section: dict, name: str, default: int) -> int:
    value = section.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"config.toml: grading.{name} must be a whole number of at least 1, like {default}")
    return value


def settings(config: dict, cpus: int) -> Settings:
    """cpus: the cluster's, the default for `tasks`."""
    section = config.get("grading") or {}
    tasks = _whole(section, "tasks", max(1, cpus))
    return Settings(tasks=tasks, per_account=min(tasks, _whole(section, "per_account", tasks)),
                    part_decisions=_whole(section, "part_decisions", PART_DECISIONS))
