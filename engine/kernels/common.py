"""Small kernels every other kernel uses: lazy pools, the event writer, distances, worth."""
from engine.kernels.jit import hot

from engine.kernels.codes import N_RES, P_SHELTER_VALUE, P_TOOL_VALUE, WATER


@hot
def pool_at(world, x, y, t):
    """Amount on tile (x, y) at tick t. Pure read: regrowth since the last write, capped at the pool
    size, so the value never depends on who looked before."""
    cap = world.cap[y, x]
    p = world.pool[y, x] + world.regen[y, x] * (t - world.touched[y, x])
    return cap if p > cap else p


@hot
def take_from_pool(world, x, y, t, amount):
    world.pool[y, x] = pool_at(world, x, y, t) - amount
    world.touched[y, x] = t


@hot
def emit(log, t, agent, kind, ok, reason, a, b, c, d, e, f, g, v):
    i = log.n[0]
    log.tick[i] = t
    log.agent[i] = agent
    log.kind[i] = kind
    log.ok[i] = ok
    log.reason[i] = reason
    log.a[i] = a
    log.b[i] = b
    log.c[i] = c
    log.d[i] = d
    log.e[i] = e
    log.f[i] = f
    log.g[i] = g
    log.v[i] = v
    log.n[0] = i + 1


@hot
def chebyshev(agents, i, j):
    return max(abs(agents.pos[i, 0] - agents.pos[j, 0]), abs(agents.pos[i, 1] - agents.pos[j, 1]))


@hot
def passable(world, x, y):
    H, W = world.terrain.shape
    return 0 <= x < W and 0 <= y < H and world.terrain[y, x] != WATER


@hot
def worth(agents, i, price, P):
    s = 0.0
    for r in range(N_RES):
        s += agents.inv[i, r] * price[r]
    return s + agents.shelter[i] * P[P_SHELTER_VALUE] + agents.tool[i] * P[P_TOOL_VALUE]


@hot
def find_offer(offers, oid):
    if oid < 0:
        return -1
    for k in range(offers.oid.shape[0]):
        if offers.oid[k] == oid:
            return k
    return -1


@hot
def open_offers_of(offers, src):
    c = 0
    for k in range(offers.oid.shape[0]):
        if offers.oid[k] >= 0 and offers.src[k] == src:
            c += 1
    return c


