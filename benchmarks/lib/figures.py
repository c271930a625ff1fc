"""The JSON convention of the benchmarks that import it: every figure is min / median / max with its
unit, every target says its goal, what was measured and whether it was met."""
from __future__ import annotations

import statistics


def spread(values: list[float], unit: str, digits: int = 2, **info) -> dict:
    """digits=0 gives integers."""
    r = (lambda x: round(x, digits)) if digits else round
    return {"min": r(min(values)), "median": r(statistics.median(values)), "max": r(max(values)), "unit": unit,
            **info}


def target(what: str, goal: str, measured: float | None, unit: str, met: bool, **info) -> dict:
    return {"target": what, "goal": goal, "measured": measured, "unit": unit, "met": bool(met), **info}
