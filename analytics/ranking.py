"""Leaderboard of models across runs: Bradley-Terry strengths from finishing orders.

Every match is decomposed into pairwise results (a model beats every model it finished ahead of; a shared
rank counts half a win each way) and the strengths are fitted with choix's iterative Luce spectral ranking on
the summed win matrix. Pairs inside one match are not independent, so the intervals come from a bootstrap
over whole matches, never over pairs. Speed: each match's win matrix is built once; a bootstrap resample is
then a multinomial weighting of matches, so all resampled win matrices are one matrix product (counts[B, M] @
wins[M, K*K]) and each refit is a K x K problem.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Hashable, Iterable, Sequence

import numpy as np
import pandas as pd

# choix's alpha adds this many virtual comparisons' worth of rate between every
# pair of models. Tiny next to real counts, but it keeps a model that never
# loses (or never wins) at a finite strength and joins models that never met.
REGULARISATION = 0.01
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
_MAX_ITER = 10_000
# Bound on the float64 cells of one block of bootstrap counts (32 MiB).
_BLOCK_CELLS = 4_000_000


@dataclass(frozen=True)
class Strength:
    """One model's row on the leaderboard. Log-strengths are centred at 0:
    a difference d means odds exp(d) of finishing ahead of the other model."""

    model: Hashable
    estimate: float
    low: float
    high: float
    n: int  # matches the model took part in
    method: str
    rank: int  # 1 = strongest point estimate
    group: int  # contiguous tie group, 1 = the leader's
    tied_with_leader: bool


@dataclass(frozen=True)
class Leaderboard:
    rows: list[Strength]  # strongest first
    n_matches: int
    n_resamples: int
    confidence: float
    method: str
    note: str | None = None  # what the selection left out (failed runs)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(row) for row in self.rows])

    def to_dict(self) -> dict:
        return asdict(self)


def _encode(matches: Sequence[Iterable[tuple[Hashable, float]]]) -> tuple[list, np.ndarray, np.ndarray]:
    """Matches as padded arrays: model index [M, S] (-1 pads) and rank [M, S]."""
    matches = [list(match) for match in matches]
    if not matches:
        raise ValueError("no matches")
    names = {model for match in matches for model, _ in match}
    # Sorted so that the model order, hence the fit, does not depend on input order.
    models = sorted(names, key=lambda m: (type(m).__name__, m))
    index = {model: i for i, model in enumerate(models)}
    seats = max(len(match) for match in matches)
    model_idx = np.full((len(matches), seats), -1, dtype=np.int64)
    ranks = np.full((len(matches), seats), np.inf)
    for m, match in enumerate(matches):
        for s, (model, rank) in enumerate(match):
            if not np.isfinite(rank):
                raise ValueError(f"match {m}: rank of {model!r} is not finite")
            model_idx[m, s] = index[model]
            ranks[m, s] = rank
    return models, model_idx, ranks


def match_win_matrices(model_idx: np.ndarray, ranks: np.ndarray, n_models: int) -> np.ndarray:
    """Per-match pairwise wins, shape [M, K*K]: cell (i, j) of match m counts
    how often model i finished ahead of model j (lower rank is better; equal
    ranks give 0.5 each way). Seats of the same model are not compared."""
    n_matches = model_idx.shape[0]
    ahead = ranks[:, :, None] < ranks[:, None, :]
    level = ranks[:, :, None] == ranks[:, None, :]
    score = ahead + 0.5 * level
    valid = model_idx >= 0
    pair = valid[:, :, None] & valid[:, None, :] & (model_idx[:, :, None] != model_idx[:, None, :])
    match_of = np.broadcast_to(np.arange(n_matches)[:, None, None], pair.shape)
    cell = (match_of * n_models + model_idx[:, :, None]) * n_models + model_idx[:, None, :]
    flat = np.bincount(cell[pair], weights=score[pair], minlength=n_matches * n_models * n_models)
    return flat.reshape(n_matches, n_models * n_models)


def _fit(wins: np.ndarray, alpha: float, start: np.ndarray | None = None) -> np.ndarray:
    """Centred log-strengths from a K x K win matrix."""
    import choix  # it imports scipy.stats: loaded on the first fit, not with the service

    return choix.ilsr_pairwise_dense(wins, alpha=alpha, initial_params=start, max_iter=_MAX_ITER)


def tie_groups(estimates: Sequence[float], lows: Sequence[float], highs: Sequence[float]) -> list[int]:
    """Contiguous tie groups over models sorted strongest first.

    Walking down the order, a model joins the current group while its interval
    reaches the group leader's low end; the first one that does not starts a new
    group and leads it. Anchoring on the leader (not on the previous model)
    stops a chain of small overlaps from tying the whole table.
    """
    est = np.asarray(estimates, dtype=float)
    if np.any(np.diff(est) > 0):
        raise ValueError("estimates must be sorted strongest first")
    groups: list[int] = []
    leader_low = None
    for low, high in zip(lows, highs):
        if leader_low is None or high < leader_low:
            leader_low = low
            groups.append(len(set(groups)) + 1)
        else:
            groups.append(groups[-1])
    return groups


def _resample_counts(rng: np.random.Generator, n_matches: int, n_rows: int) -> np.ndarray:
    """How often each match appears in each of n_rows bootstrap resamples."""
    draws = rng.integers(0, n_matches, (n_rows, n_matches))
    draws += np.arange(n_rows)[:, None] * n_matches
    return np.bincount(draws.ravel(), minlength=n_rows * n_matches).reshape(n_rows, n_matches).astype(float)


def bradley_terry(
    matches: Sequence[Iterable[tuple[Hashable, float]]],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
    regularisation: float = REGULARISATION,
) -> Leaderboard:
    """Bradley-Terry leaderboard with percentile bootstrap intervals over matches.

    ``matches`` is a list of finishing orders, each a list of (model, rank)
    pairs; rank 1 finished first and equal ranks are ties.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    models, model_idx, ranks = _encode(matches)
    k, n_matches = len(models), model_idx.shape[0]
    appearances = [
        int(np.any(model_idx == i, axis=1).sum()) for i in range(k)
    ]
    method = "Bradley-Terry (choix ILSR), match bootstrap percentile"

    if k == 1:
        row = Strength(models[0], 0.0, 0.0, 0.0, appearances[0], method, 1, 1, True)
        return Leaderboard([row], n_matches, n_resamples, confidence, method)

    per_match = match_win_matrices(model_idx, ranks, k)
    estimate = _fit(per_match.sum(axis=0).reshape(k, k), regularisation)

    rng = np.random.default_rng(seed)
    boot = np.empty((n_resamples, k))
    block = max(1, _BLOCK_CELLS // n_matches)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        wins = _resample_counts(rng, n_matches, rows) @ per_match
        for r in range(rows):
            # Warm start from the full-data fit: resamples land close to it.
            boot[start + r] = _fit(wins[r].reshape(k, k), regularisation, estimate)

    alpha = (1.0 - confidence) / 2.0
    lows, highs = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)

    order = np.argsort(-estimate, kind="stable")
    groups = tie_groups(estimate[order], lows[order], highs[order])
    leader_low = lows[order[0]]
    rows = [
        Strength(
            model=models[i],
            estimate=float(estimate[i]),
            low=float(lows[i]),
            high=float(highs[i]),
            n=appearances[i],
            method=method,
            rank=position + 1,
            group=groups[position],
            tied_with_leader=bool(highs[i] >= leader_low),
        )
        for position, i in enumerate(order)
    ]
    return Leaderboard(rows, n_matches, n_resamples, confidence, method)
