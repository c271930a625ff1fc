"""The Ray tasks that grade on the workers: one counts a match's decisions, the others each grade a
part of them with analytics' grader. Each reads the match's event log from the archive itself, so
nothing of the match crosses the head.

The tasks reserve no CPU: the scripted match workers hold every CPU of the cluster for as long as
the service runs, so a task that asked for one would never be scheduled. The head bounds how many
are out at once instead, and the tasks run in their own worker
processes (a runtime_env of their own) at a lower priority, so a match playing beside them keeps
its core and its season is not slowed by the grading of the last one.
"""
from __future__ import annotations

import os

import ray

from analytics.archive.format import table_meta
from analytics.archive.store import Archive

NICE = 5  # added to the process's priority once; matches keep theirs
_POOL = {"env_vars": {"STUDIO_GRADING_POOL": "1"}}
_niced = False


def _lower_priority() -> None:
    global _niced
    if not _niced:
        os.nice(NICE)
        _niced = True


def _events(uri: str, match_id: str, key: str | None):
    table = Archive(uri).events(match_id, key)
    if table is None:
        raise LookupError(f"match {match_id} is not in the archive")
    return table


@ray.remote(num_cpus=0, scheduling_strategy="SPREAD", runtime_env=_POOL)
def count(uri: str, match_id: str, key: str | None, seats: list[int], start: int = 0) -> list[tuple[int, int]]:
    """(tick, seat) of every decision of `seats` in the match from tick `start` (a fork's), in tick order."""
    from analytics.grading import decisions_of

    _lower_priority()
    return decisions_of(_events(uri, match_id, key), seats, start)


@ray.remote(num_cpus=0, scheduling_strategy="SPREAD", runtime_env=_POOL)
def grade(uri: str, match_id: str, key: str | None, env: dict, seats: list[int],
          decisions: list[tuple[int, int]]) -> list[dict]:
    """The graded rows of these decisions. env: the run's resolved env, which names the resources the
    scenario changed (the log's own meta does not)."""
    from analytics.grading import grade_match

    _lower_priority()
    table = _events(uri, match_id, key)
    meta = dict(table_meta(table), env=env, resources=env.get("resources"))
    return grade_match(table, meta, seats, decisions=[tuple(d) for d in decisions])["turns"]
