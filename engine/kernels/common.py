"""Small kernels every other kernel uses: lazy pools, the event writer, distances, worth, offers."""
import numpy as np

from engine.kernels.codes import (
    A_ALIVE, A_DEATH, A_HEALTH, A_INV, A_SATIETY, A_SHELTER, A_TOOL, A_X, A_Y, FINAL, L_A, L_AGENT, L_B, L_C,
    L_D, L_E, L_F, L_G, L_KIND, L_OK, L_REASON, L_TICK, META_ROWS, N_RES, O_DST, O_ID, O_SRC, OC_BOX, OC_IN,
    OC_OUT, P_ITEM_VALUE, P_PRICE, R_OK, SHELTER, SPAWN, STOCK, TOOL, T_CAP, T_POOL, T_REGEN, T_TOUCHED, WATER,
)
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.kernels.jit import hot


@hot
def pool_at(tiles, x, y, t):
    """Amount on tile (x, y) at tick t. Pure read: regrowth since the last write, capped at the pool
    size, so the value never depends on who looked before."""
    cap = tiles[y, x, T_CAP]
    p = tiles[y, x, T_POOL] + tiles[y, x, T_REGEN] * (t - tiles[y, x, T_TOUCHED])
    return cap if p > cap else p


@hot
def take_from_pool(tiles, x, y, t, amount):
    tiles[y, x, T_POOL] = max(0.0, pool_at(tiles, x, y, t) - amount)  # gather's 1e-9 tolerance may overshoot
    tiles[y, x, T_TOUCHED] = t


@hot
def emit(logi, logv, meta, t, agent, kind, ok, reason, a, b, c, d, e, f, g, v):
    i = meta[META_ROWS]
    logi[i, L_TICK] = t
    logi[i, L_AGENT] = agent
    logi[i, L_KIND] = kind
    logi[i, L_OK] = ok
    logi[i, L_REASON] = reason
    logi[i, L_A] = a
    logi[i, L_B] = b
    logi[i, L_C] = c
    logi[i, L_D] = d
    logi[i, L_E] = e
    logi[i, L_F] = f
    logi[i, L_G] = g
    logv[i] = v
    meta[META_ROWS] = i + 1


@hot
def chebyshev(ag, i, j):
    return max(abs(ag[i, A_X] - ag[j, A_X]), abs(ag[i, A_Y] - ag[j, A_Y]))


@hot
def passable(terrain, x, y):
    H, W = terrain.shape
    return 0 <= x < W and 0 <= y < H and terrain[y, x] != WATER


@hot
def worth(ag, i, P):
    s = 0.0
    for r in range(N_RES):
        s += ag[i, A_INV + r] * P[P_PRICE + r]
    return s + ag[i, A_SHELTER] * P[P_ITEM_VALUE + SHELTER] + ag[i, A_TOOL] * P[P_ITEM_VALUE + TOOL]


@hot
def lowest_bit(x):
    """Place of the lowest set bit of a non-zero int64 (bit 63 included): one tzcnt instruction, where
    halving took a dozen branches the predictor could not learn."""
    return np.int64(trailing_zeros(x))


@hot
def inbox_next(ocount, i, k):
    """The lowest offer slot >= k addressed to agent i, or -1: the inbox bits stand in for a scan of
    every slot, in the same slot order."""
    words = ocount.shape[1] - OC_BOX
    w = k >> 6
    if w >= words:
        return -1
    bits = ocount[i, OC_BOX + w] & (np.int64(-1) << np.int64(k & 63))
    while True:
        if bits != 0:
            return (w << 6) + lowest_bit(bits)
        w += 1
        if w >= words:
            return -1
        bits = ocount[i, OC_BOX + w]


@hot
def find_offer(offers, ocount, i, oid):
    """Slot of open offer oid addressed to agent i, or -1 (an offer to someone else is no offer to i)."""
    if oid < 0:
        return -1
    k = inbox_next(ocount, i, 0)
    while k >= 0:
        if offers[k, O_ID] == oid:
            return k
        k = inbox_next(ocount, i, k + 1)
    return -1


@hot
def open_offer(ocount, src, dst, k):
    ocount[dst, OC_IN] += 1
    ocount[src, OC_OUT] += 1
    ocount[dst, OC_BOX + (k >> 6)] |= np.int64(1) << np.int64(k & 63)


@hot
def close_offer(offers, ocount, k):
    """Free slot k and keep the per-agent counts and inbox in step."""
    dst = offers[k, O_DST]
    ocount[dst, OC_IN] -= 1
    ocount[offers[k, O_SRC], OC_OUT] -= 1
    ocount[dst, OC_BOX + (k >> 6)] &= ~(np.int64(1) << np.int64(k & 63))
    offers[k, O_ID] = -1


@hot
def emit_spawns(logi, logv, meta, ag, anchor):
    """A spawn row per agent at tick 0: (x, y, 0, anchor flag)."""
    for i in range(ag.shape[0]):
        emit(logi, logv, meta, 0, i, SPAWN, 1, R_OK, ag[i, A_X], ag[i, A_Y], 0, anchor[i], 0, 0, 0, 0.0)


@hot
def emit_finals(logi, logv, meta, ag, t, P):
    """Each agent's final and stock rows at tick t: one compiled call instead of three per agent."""
    for i in range(ag.shape[0]):
        alive_ticks = t if ag[i, A_ALIVE] == 1 else ag[i, A_DEATH] + 1
        emit(logi, logv, meta, t, i, FINAL, 1, R_OK, ag[i, A_HEALTH], ag[i, A_SATIETY], ag[i, A_ALIVE],
             ag[i, A_SHELTER], ag[i, A_TOOL], alive_ticks, 0, worth(ag, i, P))
        emit(logi, logv, meta, t, i, STOCK, 1, R_OK, ag[i, A_INV], ag[i, A_INV + 1], ag[i, A_INV + 2],
             ag[i, A_INV + 3], ag[i, A_INV + 4], 0, 0, 0.0)
