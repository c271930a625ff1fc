"""A series' per-seat summary kept up to date as its matches land: each landed match's seat rows are
folded in once (each seat's scores kept in match order, its wins, survivals, ranks and achievement
counts as running counts), so a summary reads no rows again and builds no table. A final summary is
summarize(table_rows(...)) over the same rows to the last bit. While the series plays, an interval
whose method resamples (a bootstrap) is computed once per seat, metric and method and then held: it
stays as it was, its own n saying which sample it covers, until the final summary computes it again.
"""
from __future__ import annotations

import bisect
import math

import numpy as np
import pyarrow as pa

from analytics import intervals, stats
from analytics.choice import BCA_MIN_N, BOUNDED, SCALE, method_for
from analytics.data import DIMENSIONS
from analytics.summary import RATE_DIGITS, SCORE_DIGITS, _interval, _round, empty
from engine import rubric

METRICS = ("fitness_index", *DIMENSIONS)
_CODE = {a: k for k, a in enumerate(rubric.ACHIEVEMENTS)}
CACHED_INTERVALS = 4096  # intervals kept per series, by sample


class _Seat:
    """One group of the summary (seat, name, model, anchor): its rows in match order."""

    __slots__ = ("matches", "values", "rank", "won", "alive", "unlocked", "unknown")

    def __init__(self) -> None:
        self.matches: list[str] = []
        self.values: dict[str, list[float]] = {m: [] for m in METRICS}
        self.rank: list[float] = []
        self.won = 0
        self.alive = 0
        self.unlocked = [0] * len(rubric.ACHIEVEMENTS)
        self.unknown = {d: 0 for d in DIMENSIONS}  # rows without the dimension (an arena game's)

    def add(self, match_id: str, row: dict) -> None:
        at = bisect.bisect(self.matches, match_id)
        self.matches.insert(at, match_id)
        for m in METRICS:
            v = row[m]
            if v is None:
                if m in self.unknown:
                    self.unknown[m] += 1
                v = math.nan
            self.values[m].insert(at, float(v))
        rank = row["rank"]
        self.rank.insert(at, math.nan if rank is None else float(rank))
        self.won += rank is not None and rank == 1
        self.alive += row["status"] == "alive"
        for a in row["achievements"] or ():
            k = _CODE.get(a)
            if k is not None:
                self.unlocked[k] += 1


def _key(value):
    # the groups' order as a sorted groupby gives it, a missing value last
    return (value is None, value)


class RunningSummary:
    """summarize(table_rows(seats, decisions, batch_id), batch_id) by seat, kept as matches land."""

    def __init__(self, batch_id: str | None, confidence: float = 0.95):
        self.batch_id, self.confidence = batch_id, confidence
        self.matches: set[str] = set()
        self.run_ids: set[str] = set()
        self.scenario_ids: set[str] = set()
        self.seeds: set = set()
        self.rows = 0
        self._seats: dict[tuple, _Seat] = {}
        self._intervals: dict[tuple, dict] = {}
        self._held: dict[tuple, dict] = {}  # (metric, group, method) -> a resampled interval of a playing series

    def add(self, seats: pa.Table) -> None:
        """Fold in seat rows (SUMMARY_COLUMNS) of matches not folded in before; rows of a match already
        in are left out, so the same landing read twice counts once."""
        columns = seats.to_pydict()
        fresh: set[str] = set()
        for i, match_id in enumerate(columns["match_id"]):
            if match_id in self.matches or (self.batch_id is not None and columns["batch_id"][i] != self.batch_id):
                continue
            row = {k: v[i] for k, v in columns.items()}
            fresh.add(match_id)
            self.rows += 1
            self.run_ids.add(str(row["run_id"]))
            if row["scenario_id"] is not None:
                self.scenario_ids.add(str(row["scenario_id"]))
            if row["seed"] is not None:
                self.seeds.add(row["seed"])
            key = (row["seat"], row["name"], row["model"], row["anchor"])
            self._seats.setdefault(key, _Seat()).add(match_id, row)
        self.matches |= fresh

    def summary(self, decisions: pa.Table | None = None, final: bool = True) -> dict:
        """The summary over every match folded in; decisions: (match_id, seat, accuracy) of the graded seats.
        final=False (the series still plays): resampled intervals held as computed the first time."""
        if not self.rows:
            return empty(self.batch_id, confidence=self.confidence)
        keys = sorted(self._seats, key=lambda k: tuple(_key(v) for v in k))
        seats = [self._seats[k] for k in keys]
        scores = self._scores(keys, seats, final)
        accuracy = self._accuracy(keys, seats, decisions, final)
        groups = []
        for g, (key, s) in enumerate(zip(keys, seats)):
            n = len(s.matches)
            rates = {a: 100.0 * k / n for a, k in zip(rubric.ACHIEVEMENTS, s.unlocked)}
            rank = np.asarray(s.rank, dtype=float)
            ranked = rank[~np.isnan(rank)]
            groups.append(dict(zip(("seat", "name", "model", "anchor"), key)) | {
                "n": n,
                "matches": n,
                "fitness_index": scores["fitness_index", g],
                "dimensions": {d: scores[d, g] for d in DIMENSIONS if (d, g) in scores},
                "win_rate": _interval(stats.wilson(s.won, n, self.confidence), RATE_DIGITS),
                "survival_rate": _interval(stats.wilson(s.alive, n, self.confidence), RATE_DIGITS),
                "mean_rank": _round(ranked.sum() / len(ranked) if len(ranked) else np.nan, SCORE_DIGITS),
                "crafter_score": _round(rubric.crafter_score(list(rates.values())), SCORE_DIGITS),
                "achievement_rates": {a: round(r, SCORE_DIGITS) for a, r in rates.items()},
                "decision_accuracy": accuracy.get(g),
            })
        return {"batch_id": self.batch_id, "run_ids": sorted(self.run_ids), "by": "seat", "runs": len(self.run_ids),
                "matches": len(self.matches), "scenario_ids": sorted(self.scenario_ids), "seeds": len(self.seeds),
                "confidence": self.confidence, "seats": groups}

    def _cached(self, wanted: list[tuple], samples: list[np.ndarray], metric) -> list[dict]:
        """The intervals of these samples, each computed once per distinct sample; wanted: cache keys."""
        keys = [(k[0], s.tobytes()) for k, s in zip(wanted, samples)]
        missing = [i for i, k in enumerate(keys) if k not in self._intervals]
        if missing:
            metrics = metric if metric is None else [metric[i] for i in missing]
            found = stats.mean_intervals([samples[i] for i in missing], self.confidence, metric=metrics)
            if len(self._intervals) + len(missing) > CACHED_INTERVALS:
                self._intervals.clear()
            for i, iv in zip(missing, found):
                self._intervals[keys[i]] = _interval(iv, SCORE_DIGITS)
        return [self._intervals[k] for k in keys]

    def _found(self, wanted: list[tuple], groups: list[tuple], samples: list[np.ndarray], final: bool) -> list[dict]:
        """The intervals of these samples (wanted: (metric, group index); groups: each one's group key).
        While the series plays, one whose method resamples is the one held for its group, metric and
        method when there is one, else computed now and held."""
        held = {}
        if not final:
            for i, ((metric, _), group, sample) in enumerate(zip(wanted, groups, samples)):
                method = resampled(metric, sample)
                if method is not None and (metric, group, method) in self._held:
                    held[i] = self._held[metric, group, method]
        rest = [i for i in range(len(wanted)) if i not in held]
        metrics = [None if wanted[i][0] == "decision_accuracy" else wanted[i][0] for i in rest]
        found = dict(zip(rest, self._cached([wanted[i] for i in rest], [samples[i] for i in rest], metrics)))
        if not final:
            for i in rest:
                method = resampled(wanted[i][0], samples[i])
                if method is not None:
                    self._held[wanted[i][0], groups[i], method] = found[i]
        return [held[i] if i in held else found[i] for i in range(len(wanted))]

    def _scores(self, keys: list[tuple], seats: list[_Seat], final: bool) -> dict[tuple[str, int], dict]:
        wanted, groups, samples = [], [], []
        for metric in METRICS:
            for g, s in enumerate(seats):
                if metric not in s.unknown or not s.unknown[metric]:
                    wanted.append((metric, g))
                    groups.append(keys[g])
                    samples.append(np.asarray(s.values[metric], dtype=float))
        return dict(zip(wanted, self._found(wanted, groups, samples, final)))

    def _accuracy(self, keys: list[tuple], seats: list[_Seat], decisions: pa.Table | None,
                  final: bool) -> dict[int, dict]:
        """Each graded group's decision accuracy over its graded rows, in match order."""
        if decisions is None or not decisions.num_rows:
            return {}
        graded = dict(zip(zip(decisions["match_id"].to_pylist(), decisions["seat"].to_pylist()),
                          decisions["accuracy"].to_pylist()))
        wanted, groups, samples = [], [], []
        for g, (key, s) in enumerate(zip(keys, seats)):
            got = [graded.get((m, key[0])) for m in s.matches]
            values = np.asarray([math.nan if a is None else a for a in got], dtype=float)
            values = values[~np.isnan(values)]
            if len(values):
                wanted.append(("decision_accuracy", g))
                groups.append(key)
                samples.append(values)
        return dict(zip((g for _, g in wanted), self._found(wanted, groups, samples, final)))


def resampled(metric: str, sample: np.ndarray) -> str | None:
    """The resampling method (a bootstrap) stats.mean_intervals gives this sample's mean, else None.
    A constant sample gets no bootstrap either way; holding its interval only keeps it as it was."""
    n = len(sample)
    if n < 2:
        return None
    if metric in BOUNDED and sample.min() >= SCALE[0] and sample.max() <= SCALE[1]:
        method = method_for(metric, n)
        return method if method in intervals.BOOTSTRAP else None
    return "bca" if n >= BCA_MIN_N else None
