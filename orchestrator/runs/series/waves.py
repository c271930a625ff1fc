"""How far a series with `until` may run ahead of its evidence (docs/RUNS.md): its trials
leave the queue in waves. The first wave is the number of trials the sequence needs on average at the
reference spread; after it, the trials scored or playing may reach what the sequence's current width
says the target needs ((width / target)^2 times the trials scored), never more than twice the trials
scored and never above the ceiling. With a fork's control arm a trial is a pair (fork and control
twins) and the width is that of the paired difference's sequence. The estimate's expected_trials is
what this rule plays on the reference population when every trial of a wave ends together.
"""
from __future__ import annotations

import math
import threading
from collections import Counter

import numpy as np

from analytics import precision, sequence
from orchestrator import statuses
from orchestrator.records.series import Series, TrialRun
from orchestrator.store import Connection, series as store

REFERENCE_ROWS = 200  # reference series per figure: the mean trial count moves by under one beyond it
GROWTH = 2  # a wave never more than doubles the trials scored: a wide early sequence cannot launch the ceiling


def allowance(scored: int, ratio: float | None, first: int, ceiling: int) -> int:
    """How many trials may be scored or playing: the first wave in any case (all of it before a
    width is known), then the trials the target needs by the (width / target)^2 scaling, between
    scored + 1 and GROWTH x scored. ratio: the widest target's half-width over the target's."""
    if scored == 0 or ratio is None:
        return min(ceiling, max(first, scored + 1))
    need = scored * ratio * ratio  # not ** : a float power raises on overflow where a product gives inf
    needed = math.ceil(need) if math.isfinite(need) else ceiling
    return min(ceiling, max(first, scored + 1, min(GROWTH * scored, needed)))


def _prefix(half_width: float, reference_sd: float, lo: float, hi: float, paired: bool, n: int) -> np.ndarray:
    """(REFERENCE_ROWS, n): the sequence's half-width after each of the first n trials of the
    reference series, in the metric's units. Paired: the difference of trials 2j and 2j + 1 (two
    independent draws: no credit taken for the twins' shared dice), on lo - hi .. hi - lo. Kept per
    population and grown as asked: bets are predictable, so a longer series' first n widths are these."""
    key = (half_width, reference_sd, lo, hi, paired)  # the bets are tuned to the target: one row per target
    with _LOCK:
        kept = _KEPT.get(key)
        if kept is None or kept.shape[1] < n:
            if paired:
                x = precision.reference_series(2 * n, reference_sd, REFERENCE_ROWS)
                x, a, b = x[:, 0::2] - x[:, 1::2], lo - hi, hi - lo
            else:
                x, a, b = precision.reference_series(n, reference_sd, REFERENCE_ROWS), lo, hi
            low, high = sequence.bounds(x, a, b, half_width=half_width)
            _KEPT.pop(key, None)
            while len(_KEPT) >= KEPT_TARGETS:
                _KEPT.pop(next(iter(_KEPT)))
            _KEPT[key] = kept = (high - low) / 2
        return kept[:, :n]


_KEPT: dict[tuple, np.ndarray] = {}
KEPT_TARGETS = 64  # targets whose reference widths stay kept, oldest dropped first
_LOCK = threading.Lock()  # the dispatcher's thread and the service's requests share the kept widths


def _widths(half_width: float, ceiling: int, reference_sd: float, lo: float, hi: float, paired: bool) -> np.ndarray:
    """The reference widths as far as a figure for this target needs them: up to the ceiling, or to
    twice the trials after which every reference series is within half_width (a wave at most doubles
    the trials), computed in doubling stretches so a loose target never pays for a long ceiling."""
    n = 16
    while True:
        w = _prefix(float(half_width), float(reference_sd), float(lo), float(hi), bool(paired), min(ceiling, n))
        within = w <= half_width
        if w.shape[1] >= ceiling:
            return w
        if within.any(axis=1).all():
            need = min(ceiling, 2 * (int(within.argmax(axis=1).max()) + 1))
            return _prefix(float(half_width), float(reference_sd), float(lo), float(hi), bool(paired), need)
        n *= 2


def first_wave(half_width: float, ceiling: int, reference_sd: float, lo: float, hi: float,
               paired: bool = False) -> int:
    """The mean number of trials after which the reference series' sequence is within half_width
    (a series that never gets there counts the ceiling), from 2 to the ceiling."""
    done = _widths(half_width, ceiling, reference_sd, lo, hi, paired) <= half_width
    stops = np.where(done.any(axis=1), done.argmax(axis=1) + 1, ceiling)
    return int(min(ceiling, max(2, math.ceil(float(stops.mean())))))


def expected_trials(half_width: float, ceiling: int, reference_sd: float, lo: float, hi: float,
                    paired: bool = False) -> int:
    """The mean number of trials the wave rule plays on the reference population, each wave ending
    together (the case of model seats, where every trial of a wave plays at once): the trials launched
    by the wave during which the sequence first comes within half_width."""
    if ceiling < 2:
        raise ValueError(f"a series has at least 2 trials, got a ceiling of {ceiling}")
    w = _widths(half_width, ceiling, reference_sd, lo, hi, paired)
    first = first_wave(half_width, ceiling, reference_sd, lo, hi, paired)
    played = [_played(row, half_width, first, ceiling) for row in w]
    return int(min(ceiling, max(2, math.ceil(float(np.mean(played))))))


def _played(widths: np.ndarray, half_width: float, first: int, ceiling: int) -> int:
    launched = first
    while launched < min(ceiling, widths.size + 1) and not (launched >= 2 and widths[launched - 1] <= half_width):
        launched = allowance(launched, widths[launched - 1] / half_width, first, ceiling)
    return launched


def trials(c: Connection, batch: Series) -> list[list[TrialRun]]:
    """The series' trials in launch order, each the list of its runs: one run, or with a control arm
    trial j of both arms (the twins on one continuation seed)."""
    rows = store.trial_runs(c, batch.id)
    if not batch.paired:
        return [[r] for r in rows]
    groups: dict[int, list] = {}
    seen: Counter = Counter()
    for r in rows:
        groups.setdefault(seen[r.arm], []).append(r)
        seen[r.arm] += 1
    return list(groups.values())


def untouched(trial: list) -> bool:
    """No run of the trial has left the queue."""
    return all(r.status == statuses.QUEUED for r in trial)


def complete(trial: list) -> bool:
    """Every run of the trial ended with a scored match: it is evidence."""
    return all(r.status in statuses.SCORED and r.has_results for r in trial)


def lost(trial: list) -> bool:
    """Every run of the trial ended, and not all of them with a score: it used no room of a wave."""
    return all(r.status in statuses.TERMINAL for r in trial) and not complete(trial)
