"""A forked series' effect (CONTRACT.md section 16): with a control arm, for each changed seat and each
metric of the summary, the mean paired difference fork - control over the trials whose two runs both
ended with a match, with its 95% interval: analytics.paired.paired_comparison, the comparison every
paired series uses (analytics.compare), on the runs' own results."""
from __future__ import annotations

import json

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
