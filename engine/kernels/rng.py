"""Explicit RNG state: one uint64 per stream, advanced by splitmix64.

Each match owns its streams (world, map, spawn, one per agent), so two matches never share state
and iteration order never depends on memory layout.
"""
import numpy as np
from engine.kernels.jit import hot

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0
_START = np.uint64(0x632BE59BD9B4E019)
_SALT = np.uint64(0xD1B54A32D192ED03)
_ONE = np.uint64(1)


@hot
def mix64(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@hot
def next_u64(state, i):
    """Advance stream i of state (uint64[K]) and return 64 random bits."""
    state[i] += _GOLDEN
    return mix64(state[i])


@hot
def uniform(state, i):
    """Float in [0, 1) from stream i."""
    return np.float64(next_u64(state, i) >> _S11) * _INV53


@hot
def randint(state, i, n):
    """Integer in [0, n) from stream i (n small: modulo bias is below 2**-50)."""
    return np.int64(next_u64(state, i) % np.uint64(n))


def derive(seed: int, *salt: int) -> np.uint64:
    """A stream's starting state from a seed and salts, computed in Python (no kernel needed)."""
    mask = (1 << 64) - 1
    z = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & mask
    for s in salt:
        z = (z ^ ((s + 1) * 0xD1B54A32D192ED03)) & mask
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & mask
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB & mask
        z ^= z >> 31
    return np.uint64(z)


def continuation_streams(continuation_seed: int, tick: int, n: int) -> np.ndarray:
    """uint64[1 + n]: the world's and each agent's stream from `tick` on under a fork's continuation
    seed (salts 6 and 7: a match's own streams use 1-4, rollouts 5)."""
    out = np.empty(n + 1, dtype=np.uint64)
    out[0] = derive(int(continuation_seed), 6, int(tick))
    for i in range(n):
        out[1 + i] = derive(int(continuation_seed), 7, int(tick), i)
    return out


@hot
def _salted(z, s):
    """derive's step for one salt s (uint64)."""
    return mix64(z ^ ((s + _ONE) * _SALT))


@hot
def match_streams(seed, spawn_seed, out):
    """out uint64[1 + N]: derive(seed, 3, spawn_seed) (the world's stream), then derive(seed, 4,
    spawn_seed, i) for each agent i; one compiled call instead of a Python loop over the field."""
    base = np.uint64(seed) * _GOLDEN + _START
    sp = np.uint64(spawn_seed)
    out[0] = _salted(_salted(base, np.uint64(3)), sp)
    agents = _salted(_salted(base, np.uint64(4)), sp)
    for i in range(out.shape[0] - 1):
        out[1 + i] = _salted(agents, np.uint64(i))
