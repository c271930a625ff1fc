"""One pass over a match's event columns, counting what the rubric needs per agent."""
import numpy as np
from engine.kernels.jit import alloc, hot

from engine.kernels.codes import (
    ACCEPT, BUILD, CRAFT, EAT, EXPIRE, FINAL, GATHER, INVALID, MATCH_START, MOVE, OFFER, RAID, RELICS,
    SAY, SEASON_END, SPAWN,
)

C_TICKS_ALIVE, C_HEALTH, C_ALIVE, C_TRADES, C_SETTLED, C_VOIDED, C_RAIDS_WON, C_RAIDS_LOST, \
    C_REPELLED, C_RAIDED, C_RELICS, C_EAT, C_BUILD, C_CRAFT, C_SAY, C_OFFERS, C_REFUSED, C_MOVES, \
    C_PARTNERS, C_SEEN, C_G_WOOD, C_G_STONE, C_G_FOOD, C_G_ORE, C_G_RELICS = range(25)
N_COUNTERS = 25


@hot
def _see(seen, i, x, y, r):
    H = seen.shape[1]
    W = seen.shape[2]
    for yy in range(max(0, y - r), min(H, y + r + 1)):
        for xx in range(max(0, x - r), min(W, x + r + 1)):
            seen[i, yy, xx] = True


@alloc
def tally(n_agents, tick, agent, kind, ok, a, b, c, d, f, g, v):
    """counters int64[N, N_COUNTERS], worth float64[N], header int64[4] = (side, match_ticks, radius,
    season_ticks)."""
    cnt = np.zeros((n_agents, N_COUNTERS), dtype=np.int64)
    worth = np.zeros(n_agents, dtype=np.float64)
    header = np.zeros(4, dtype=np.int64)
    side = 1
    radius = 0
    for r in range(kind.shape[0]):
        if kind[r] == MATCH_START:
            side = a[r]
            radius = f[r]
            header[0] = side
            header[2] = radius
            header[3] = d[r]
            break
    seen = np.zeros((n_agents, side, side), dtype=np.bool_)
    partners = np.zeros((n_agents, n_agents), dtype=np.bool_)
    for r in range(kind.shape[0]):
        k = kind[r]
        i = agent[r]
        if k <= INVALID and ok[r] == 0:  # refused actions and replies that named no valid action
            cnt[i, C_REFUSED] += 1
            continue
        if k == SPAWN:
            _see(seen, i, a[r], b[r], radius)
        elif k == MOVE:
            cnt[i, C_MOVES] += 1
            _see(seen, i, f[r], g[r], radius)
        elif k == GATHER:
            cnt[i, C_G_WOOD + f[r]] += g[r]
            if f[r] == RELICS:
                cnt[i, C_RELICS] += g[r]
        elif k == EAT:
            cnt[i, C_EAT] += 1
        elif k == BUILD:
            cnt[i, C_BUILD] += 1
        elif k == CRAFT:
            cnt[i, C_CRAFT] += 1
        elif k == SAY:
            cnt[i, C_SAY] += 1
        elif k == OFFER:
            cnt[i, C_OFFERS] += 1
        elif k == ACCEPT:
            j = f[r]
            cnt[i, C_TRADES] += 1
            cnt[j, C_TRADES] += 1
            cnt[j, C_SETTLED] += 1
            partners[i, j] = True
            partners[j, i] = True
        elif k == EXPIRE:
            if b[r] == 2:
                cnt[i, C_VOIDED] += 1
        elif k == RAID:
            j = a[r]
            if f[r] == 1 and g[r] > 0:
                cnt[i, C_RAIDS_WON] += 1
                cnt[j, C_RAIDED] += 1
            else:
                # world-rubric-3: a raid that got through but took nothing (g units) is no win either;
                # only one the target's odds stopped (f 0) counts as repelled
                cnt[i, C_RAIDS_LOST] += 1
                if f[r] == 0:
                    cnt[j, C_REPELLED] += 1
        elif k == FINAL:
            cnt[i, C_HEALTH] = a[r]
            cnt[i, C_ALIVE] = c[r]
            cnt[i, C_TICKS_ALIVE] = f[r]
            worth[i] = v[r]
        elif k == SEASON_END:
            header[1] = a[r]
    for i in range(n_agents):
        cnt[i, C_PARTNERS] = partners[i].sum()
        cnt[i, C_SEEN] = seen[i].sum()
    return cnt, worth, header
