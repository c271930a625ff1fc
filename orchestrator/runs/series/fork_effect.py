"""A forked series' effect (docs/FORKS.md): with a control arm, for each changed seat and each
metric of the summary, the mean paired difference fork - control over the trials whose two runs both
ended with a match, with its 95% interval: analytics.paired.paired_comparison, the comparison every
paired series uses (analytics.compare), on the runs' own results. `differences` gives the same pairs'
differences in the order they completed, for a target's confidence sequence (runs.series.stopping)."""
from __future__ import annotations

import json
import sqlite3

from analytics import choice, paired, stats
from engine.rubric import DIMENSIONS
from orchestrator.core import Core
from orchestrator.statuses import SCORED

METRICS = ("fitness_index", *DIMENSIONS)


def _value(results: dict, seat: int, metric: str) -> float | None:
    for entry in results["agents"]:
        if entry["seat"] == seat:
            return float(entry[metric] if metric == "fitness_index" else entry["dimensions"][metric])
    return None


def differences(c: sqlite3.Connection, batch_id: str, seats, metric: str) -> dict[int, list[float]]:
    """Each of these seats' differences fork - control on the metric, one per complete pair, in the
    order the pairs completed (the later twin's end)."""
    arms: dict[str, dict] = {"fork": {}, "control": {}}
    for r in c.execute("SELECT fork, results, finished_at_ms, seq FROM runs WHERE batch_id = ? AND results IS NOT NULL "
                       f"AND fork IS NOT NULL AND status IN {SCORED}", (batch_id,)).fetchall():
        record = json.loads(r["fork"])
        arms[record["arm"]][record["continuation_seed"]] = (json.loads(r["results"]), (r["finished_at_ms"] or 0, r["seq"]))
    pairs = sorted(set(arms["fork"]) & set(arms["control"]),
                   key=lambda k: max(arms["fork"][k][1], arms["control"][k][1]))
    out = {}
    for seat in seats:
        values = ((_score(arms["fork"][k][0], seat, metric), _score(arms["control"][k][0], seat, metric)) for k in pairs)
        out[seat] = [a - b for a, b in values if a is not None and b is not None]
    return out


def _score(results: dict, seat: int, metric: str) -> float | None:
    """The seat's score, or None where the results hold none (a seat or value missing)."""
    for entry in results.get("agents") or ():
        if entry.get("seat") == seat:
            value = entry.get(metric) if metric == "fitness_index" else (entry.get("dimensions") or {}).get(metric)
            return None if value is None else float(value)
    return None


def effect(core: Core, batch, scored: tuple) -> list[dict] | None:
    """The batch view's `effect`; None for a series that is not a fork with control. Kept per set of
    scored matches: a waiting read looks at the series many times while nothing changes."""
    spec = json.loads(batch["fork"]) if batch["fork"] else None
    if not spec or not spec.get("control"):
        return None
    key = (str(core.data_dir), batch["id"], scored)
    if key not in _KEPT:
        if len(_KEPT) > 256:
            _KEPT.clear()
        _KEPT[key] = _effect(core, batch, spec)
    return _KEPT[key]


_KEPT: dict = {}


def _effect(core: Core, batch, spec: dict) -> list[dict]:
    arms: dict[str, dict] = {"fork": {}, "control": {}}
    for r in core.store.all("SELECT status, fork, results FROM runs WHERE batch_id = ?", (batch["id"],)):
        record = json.loads(r["fork"]) if r["fork"] else None
        if record and r["status"] in SCORED and r["results"]:
            arms[record["arm"]][record["continuation_seed"]] = json.loads(r["results"])
    pairs = sorted(set(arms["fork"]) & set(arms["control"]))
    out = []
    for seat in spec["seats"]:
        for metric in METRICS:
            a = [_value(arms["fork"][k], seat, metric) for k in pairs]
            b = [_value(arms["control"][k], seat, metric) for k in pairs]
            d = paired.paired_comparison(a, b, bounded=metric in choice.BOUNDED).difference if pairs else \
                stats.Interval(None, None, None, 0, "empty")
            out.append({"seat": seat, "metric": metric, "mean": _round(d.estimate), "low": _round(d.low),
                        "high": _round(d.high), "n": d.n, "method": d.method})
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)
