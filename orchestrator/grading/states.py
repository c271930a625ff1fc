"""A run's grading status and every change of it, as the run lifecycle does for the run's
own status: each transition names the statuses it leaves, and a refused one changes nothing.

A grading is `pending` from launch until the head starts it (the match must have archived first),
`running` while its tasks are out, `done` when every part came back (graded < total when some
decisions could not be graded after MAX_STARTS starts: the log says why), `off` when the run body
said so. A process that stops mid-grading leaves `running` rows: the next start puts them back to
`pending` (`restart`) and grades the decisions not yet stored.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from orchestrator.records.grading import OPEN, STATUSES
from orchestrator.store import Connection
from orchestrator.store import grading as stored

log = logging.getLogger("studio.grading")

__all__ = ["MAX_STARTS", "OPEN", "STATUSES", "TRANSITIONS", "move", "restart_all"]
# A grading whose tasks keep failing (a log that cannot be rebuilt, an archive out of reach) is
# started at most this many times, then ends done with what it graded.
MAX_STARTS = 3


@dataclass(frozen=True)
class Transition:
    name: str
    leaves: tuple[str, ...]
    to: str | None
    what: str


TRANSITIONS = {t.name: t for t in (
    Transition("start", ("pending",), "running", "the run ended with a match: its decisions are counted and graded"),
    Transition("counted", ("running",), "running", "the match's decisions are counted (total)"),
    Transition("part", ("running",), "running", "a task's grades are stored (graded)"),
    Transition("done", ("running",), "done", "every part came back; seat summaries and results filled in"),
    Transition("retry", ("running",), "pending", f"a task failed: started again, at most {MAX_STARTS} times"),
    Transition("restart", ("running",), "pending", "a new process found it running: graded again from what is stored"),
    Transition("nothing", OPEN, None, "the run ended without a match (failed, or cancelled unplayed)"),
)}


def move(c: Connection, name: str, run_id: str, *, started: bool = False, total: int | None = None,
         graded: int | None = None, recount: bool = False) -> bool:
    """The named transition with its counts (stored.move's); logged and refused from any other status."""
    t = TRANSITIONS[name]
    done = stored.move(c, run_id, t.leaves, t.to, started=started, total=total, graded=graded, recount=recount)
    if not done:
        log.info("run %s: no grading transition %s", run_id, name)
    return done


def restart_all(c: Connection) -> int:
    """Every grading a previous process left running goes back to pending; the restart does not count
    as one of its starts."""
    t = TRANSITIONS["restart"]
    return stored.restart(c, t.leaves, t.to)
