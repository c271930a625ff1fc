"""The compiled stream derivation equals the Python one it replaces in match set-up."""
import numpy as np
import pytest

from engine.kernels.rng import derive, match_streams
from engine.match import SEED_MAX


@pytest.mark.parametrize("seed,spawn_seed", [(0, 0), (11, 22), (SEED_MAX, SEED_MAX), (2**40 + 3, 7)])
def test_match_streams_equal_derive(seed, spawn_seed):
    out = np.empty(1 + 9, dtype=np.uint64)
    match_streams(seed, spawn_seed, out)
    want = [derive(seed, 3, spawn_seed)] + [derive(seed, 4, spawn_seed, i) for i in range(9)]
    assert out.tolist() == [int(w) for w in want]
