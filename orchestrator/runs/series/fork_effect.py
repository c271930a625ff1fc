"""A forked series' effect (docs/FORKS.md): with a control arm, for each changed seat and each metric of the
summary, the mean paired difference fork - control over the trials whose two runs both ended with a match,
with its 95% interval: `paired_comparison`, the comparison every paired series uses, on the runs' own
results. `differences` gives the same pairs' differences in the order they completed, for a target's
confidence sequence."""
from __future__ import annotations

from analytics import choice, paired, stats
from engine.rubric import DIMENSIONS
from orchestrator.core import Core
from orchestrator.records.series import Series
from orchestrator.store import Connection, series as store

METRICS = ("fitness_index", *DIMENSIONS)


def differences(c: Connection, batch_id: str, seats, metric: str) -> dict[int, list[float]]:
    """Each of these seats' differences fork - control on the metric, one per complete pair, in the
    order the pairs completed (the later twin's end)."""
    arms = store.paired_scores(c, batch_id, seats, (metric,))
    fork, control = arms["fork"], arms["control"]
    pairs = sorted(set(fork) & set(control), key=lambda k: max(fork[k][0], control[k][0]))
    out = {}
    for seat in seats:
        values = ((fork[k][1][seat, metric], control[k][1][seat, metric]) for k in pairs)
        out[seat] = [a - b for a, b in values if a is not None and b is not None]
    return out


def effect(core: Core, batch: Series, scored: tuple) -> list[dict] | None:
    """The batch view's `effect`; None for a series that is not a fork with control. Kept per set of
    scored matches: a waiting read looks at the series many times while nothing changes."""
    if not batch.paired:
        return None
    key = (str(core.data_dir), batch.id, scored)
    if key not in _KEPT:
        if len(_KEPT) > 256:
            _KEPT.clear()
        _KEPT[key] = _effect(core, batch)
    return _KEPT[key]


_KEPT: dict = {}


def _effect(core: Core, batch: Series) -> list[dict]:
    seats = batch.fork.seats
    arms = store.paired_scores(core.store.conn(), batch.id, seats, METRICS)
    fork, control = arms["fork"], arms["control"]
    pairs = sorted(set(fork) & set(control))
    out = []
    for seat in seats:
        for metric in METRICS:
            a = [fork[k][1][seat, metric] for k in pairs]
            b = [control[k][1][seat, metric] for k in pairs]
            d = paired.paired_comparison(a, b, bounded=metric in choice.BOUNDED).difference if pairs else \
                stats.Interval(None, None, None, 0, "empty")
            out.append({"seat": seat, "metric": metric, "mean": _round(d.estimate), "low": _round(d.low),
                        "high": _round(d.high), "n": d.n, "method": d.method})
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)
