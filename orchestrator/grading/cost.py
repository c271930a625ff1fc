"""What a launch asks of decision grading: how many decisions it may grade, what they cost in CPU
and wall clock (the estimate's `grading`), and the plan's ceiling on them (`[plans.<id>]
graded_decisions_per_launch`). A decision is a tick a graded seat is alive at, so seats x ticks x
trials is what a launch may grade at most, and what the ceiling and the estimate count."""
from __future__ import annotations

import math
from typing import Sequence

from orchestrator.errors import DomainError
from orchestrator.grading.plan import graded_seats
from orchestrator.records.roster import Seat

# Decisions graded per CPU second on one core: benchmarks/grading.py's median (docs/PERFORMANCE.md's
# table, a 300-tick match with 8 graded seats). The one place the estimate's grading rate comes from.
DECISIONS_PER_CPU_S = 99


def launch_decisions(kind, roster: Sequence[Seat], mode: str | None, ticks: int, trials: int) -> int:
    if not kind.grades_decisions:
        return 0
    return len(graded_seats(roster, mode)) * ticks * trials


def check(plan: dict, decisions: int, mode: str | None) -> None:
    """bad_request naming the plan's ceiling when the launch asks to grade more decisions than it.
    Only a `grading` the body sends is a request: docs/RUBRIC.md grades every model and agent
    decision by default, so a launch that leaves `grading` out is never refused for it (the fair
    queue, not a refusal, keeps such a launch from holding up other accounts' grading)."""
    cap = plan["graded_decisions_per_launch"]
    if mode is None or decisions <= cap:
        return
    fewer = ('send grading "auto" to grade model and agent seats only, or "off"' if mode == "all" else
             'send grading "off"')
    raise DomainError("bad_request", f"grading: this launch asks to grade up to {decisions} decisions (graded seats "
                      f"x ticks x trials); the {plan['name']} plan grades at most {cap} per launch; {fewer}, or "
                      "launch fewer trials or ticks")


def estimate(decisions: int, slots: int) -> dict | None:
    """The estimate's `grading`: {decisions, cpu_s, wall_clock_ms: {low, high}}, None when nothing is
    graded. low: the launch's parts graded `slots` at a time (the most one account may have out);
    high: one at a time, as when every slot is shared with other accounts' grading in turn."""
    if not decisions:
        return None
    cpu_s = decisions / DECISIONS_PER_CPU_S
    return {"decisions": decisions, "cpu_s": round(cpu_s, 1),
            "wall_clock_ms": {"low": math.ceil(1000 * cpu_s / max(1, slots)), "high": math.ceil(1000 * cpu_s)}}

