"""The scripted policies (anchors and local/<policy> seats) in compiled code.

Each decides one action at the moment it acts, from the live state, writing (kind, a..e) into act.
They draw randomness only from their own stream (1 + agent index), so the world's stream is the
same whether a seat is scripted or replayed from its logged actions.
"""
import numpy as np
from engine.kernels.jit import hot

from engine.kernels.codes import (
    ACCEPT, AGGRESSIVE_RAIDER, BUILD, CRAFT, DECLINE, EAT, FOOD, GATHER, GREEDY_HARVESTER,
    HONEST_TRADER, MOVE, N_RES, OFFER, ORE, P_CARRY_MAX, P_OFFER_RANGE, P_OPEN_OFFERS_MAX,
    P_SHELTER_STONE, P_SHELTER_WOOD, P_TOOL_ORE, P_TOOL_STONE, P_TOOL_WOOD, RAID, SAY, STONE,
    WAIT, WOOD,
)
from engine.kernels.common import chebyshev, open_offers_of, passable, pool_at, worth
from engine.kernels.rng import randint, uniform

N_CANNED = 4  # canned messages the random policy may say (engine/match.py CANNED_MESSAGES)


@hot
def _set(act, kind, a, b, c, d, e):
    act[0] = kind
    act[1] = a
    act[2] = b
    act[3] = c
    act[4] = d
    act[5] = e


@hot
def _has_pool(world, x, y, t, terrain_res, res):
    r = terrain_res[world.terrain[y, x]]
    if r < 0 or (res >= 0 and r != res):
        return False
    return pool_at(world, x, y, t) >= 1.0


@hot
def _nearest_tile(world, x0, y0, t, terrain_res, res, radius):
    """Nearest tile (ring by ring) holding resource res (-1: any) with a whole unit; (-1, -1) if none."""
    H, W = world.terrain.shape
    for d in range(1, radius + 1):
        for k in range(-d, d + 1):
            for side in range(4):
                if side == 0:
                    x, y = x0 + k, y0 - d
                elif side == 1:
                    x, y = x0 + k, y0 + d
                elif side == 2:
                    if k == -d or k == d:
                        continue
                    x, y = x0 - d, y0 + k
                else:
                    if k == -d or k == d:
                        continue
                    x, y = x0 + d, y0 + k
                if 0 <= x < W and 0 <= y < H and _has_pool(world, x, y, t, terrain_res, res):
                    return x, y
    return -1, -1


@hot
def _step_toward(world, agents, rng, i, tx, ty, dir_dx, dir_dy, act):
    x = agents.pos[i, 0]
    y = agents.pos[i, 1]
    dx = tx - x
    dy = ty - y
    first = -1
    second = -1
    hor = 1 if dx > 0 else 3
    ver = 2 if dy > 0 else 0
    if abs(dx) >= abs(dy):
        first = hor if dx != 0 else -1
        second = ver if dy != 0 else -1
    else:
        first = ver
        second = hor if dx != 0 else -1
    for d in (first, second):
        if d >= 0 and passable(world, x + dir_dx[d], y + dir_dy[d]):
            _set(act, MOVE, d, 0, 0, 0, 0)
            return
    _wander(world, agents, rng, i, dir_dx, dir_dy, act)


@hot
def _wander(world, agents, rng, i, dir_dx, dir_dy, act):
    start = randint(rng, 1 + i, 4)
    for k in range(4):
        d = (start + k) % 4
        if passable(world, agents.pos[i, 0] + dir_dx[d], agents.pos[i, 1] + dir_dy[d]):
            _set(act, MOVE, d, 0, 0, 0, 0)
            return
    _set(act, WAIT, 0, 0, 0, 0, 0)


@hot
def _seek(world, agents, rng, t, i, res, radius, dir_dx, dir_dy, terrain_res, act):
    """Gather res here, or walk toward the remembered (or nearest) tile holding it."""
    x = agents.pos[i, 0]
    y = agents.pos[i, 1]
    if _has_pool(world, x, y, t, terrain_res, res):
        _set(act, GATHER, 0, 0, 0, 0, 0)
        return
    tx = agents.mem[i, 0]
    ty = agents.mem[i, 1]
    searching = agents.mem[i, 2] != res or (tx >= 0 and not _has_pool(world, tx, ty, t, terrain_res, res))
    # a failed search is not repeated for a few ticks: the scan is the policies' costliest step
    if searching or (tx < 0 and t >= agents.mem[i, 3]):
        tx, ty = _nearest_tile(world, x, y, t, terrain_res, res, radius)
        agents.mem[i, 0] = tx
        agents.mem[i, 1] = ty
        agents.mem[i, 2] = res
        agents.mem[i, 3] = t + 6
    if tx < 0:
        _wander(world, agents, rng, i, dir_dx, dir_dy, act)
    else:
        _step_toward(world, agents, rng, i, tx, ty, dir_dx, dir_dy, act)


@hot
def _can_build(agents, i, P):
    return (agents.shelter[i] == 0 and agents.inv[i, WOOD] >= P[P_SHELTER_WOOD]
            and agents.inv[i, STONE] >= P[P_SHELTER_STONE])


@hot
def _can_craft(agents, i, P):
    return (agents.tool[i] == 0 and agents.inv[i, WOOD] >= P[P_TOOL_WOOD]
            and agents.inv[i, STONE] >= P[P_TOOL_STONE] and agents.inv[i, ORE] >= P[P_TOOL_ORE])


@hot
def _answer_offers(agents, offers, i, price, ratio, act):
    """Accept the first open offer to i worth at least ratio x what it costs; decline one that is not.
    Returns True when it chose an action."""
    for k in range(offers.oid.shape[0]):
        if offers.oid[k] < 0 or offers.dst[k] != i:
            continue
        gain = offers.give_q[k] * price[offers.give_r[k]]
        cost = offers.want_q[k] * price[offers.want_r[k]]
        if ratio > 0 and gain >= ratio * cost and agents.inv[i, offers.want_r[k]] >= offers.want_q[k]:
            _set(act, ACCEPT, offers.oid[k], 0, 0, 0, 0)
        else:
            _set(act, DECLINE, offers.oid[k], 0, 0, 0, 0)
        return True
    return False


@hot
def _honest_trader(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act):
    inv = agents.inv
    if agents.satiety[i] < 50 and inv[i, FOOD] > 0:
        _set(act, EAT, 0, 0, 0, 0, 0)
        return
    if _answer_offers(agents, offers, i, price, 0.8, act):
        return
    if _can_craft(agents, i, P):
        _set(act, CRAFT, 0, 0, 0, 0, 0)
        return
    if _can_build(agents, i, P):
        _set(act, BUILD, 0, 0, 0, 0, 0)
        return
    need = FOOD
    if inv[i, FOOD] >= 3:
        need = WOOD
        for r in (WOOD, STONE, ORE):
            if inv[i, r] < inv[i, need]:
                need = r
    surplus = -1
    for r in (WOOD, STONE, FOOD, ORE):
        keep = 4 if r == FOOD else 0
        if inv[i, r] - keep >= 6 and (surplus < 0 or inv[i, r] > inv[i, surplus]):
            surplus = r
    if surplus >= 0 and surplus != need and (t + i) % 4 == 0 and open_offers_of(offers, i) < P[P_OPEN_OFFERS_MAX]:
        best = -1
        best_d = np.int64(P[P_OFFER_RANGE]) + 1
        for j in range(agents.alive.shape[0]):
            if j != i and agents.alive[j] == 1:
                dd = chebyshev(agents, i, j)
                if dd < best_d:
                    best_d = dd
                    best = j
        if best >= 0:
            want_q = max(1, np.int64(np.round(2 * price[surplus] / price[need])))
            _set(act, OFFER, best, surplus, 2, need, want_q)
            return
    _seek(world, agents, rng, t, i, need, 8, dir_dx, dir_dy, terrain_res, act)


@hot
def _greedy_harvester(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act):
    inv = agents.inv
    if agents.satiety[i] < 40 and inv[i, FOOD] > 0:
        _set(act, EAT, 0, 0, 0, 0, 0)
        return
    if _can_craft(agents, i, P):
        _set(act, CRAFT, 0, 0, 0, 0, 0)
        return
    if _can_build(agents, i, P):
        _set(act, BUILD, 0, 0, 0, 0, 0)
        return
    if t % 3 == 0 and _answer_offers(agents, offers, i, price, 1.5, act):
        return
    x = agents.pos[i, 0]
    y = agents.pos[i, 1]
    here = terrain_res[world.terrain[y, x]]
    if here >= 0 and pool_at(world, x, y, t) >= 1.0 and inv[i, here] < P[P_CARRY_MAX]:
        _set(act, GATHER, 0, 0, 0, 0, 0)
        return
    res = -1
    if inv[i, FOOD] < 2:
        res = FOOD
    elif agents.tool[i] == 0 and inv[i, ORE] < P[P_TOOL_ORE]:
        res = ORE
    _seek(world, agents, rng, t, i, res, 8, dir_dx, dir_dy, terrain_res, act)


@hot
def _aggressive_raider(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act):
    inv = agents.inv
    if agents.satiety[i] < 45 and inv[i, FOOD] > 0:
        _set(act, EAT, 0, 0, 0, 0, 0)
        return
    if _answer_offers(agents, offers, i, price, 0.0, act):
        return
    if _can_craft(agents, i, P):
        _set(act, CRAFT, 0, 0, 0, 0, 0)
        return
    if inv[i, FOOD] == 0 and agents.satiety[i] < 40:
        _seek(world, agents, rng, t, i, FOOD, 10, dir_dx, dir_dy, terrain_res, act)
        return
    victim = -1
    best = 0.0
    for j in range(agents.alive.shape[0]):
        if j != i and agents.alive[j] == 1 and chebyshev(agents, i, j) <= 10:
            w = worth(agents, j, price, P) - 10.0 * agents.shelter[j]
            if w > best:
                best = w
                victim = j
    if victim < 0:
        _seek(world, agents, rng, t, i, -1, 6, dir_dx, dir_dy, terrain_res, act)
    elif chebyshev(agents, i, victim) <= 1:
        _set(act, RAID, victim, 0, 0, 0, 0)
    else:
        _step_toward(world, agents, rng, i, agents.pos[victim, 0], agents.pos[victim, 1], dir_dx, dir_dy, act)


@hot
def _random(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act):
    s = 1 + i
    n = agents.alive.shape[0]
    u = uniform(rng, s)
    if u < 0.40:
        _set(act, MOVE, randint(rng, s, 4), 0, 0, 0, 0)
    elif u < 0.60:
        _set(act, GATHER, 0, 0, 0, 0, 0)
    elif u < 0.70:
        _set(act, EAT, 0, 0, 0, 0, 0)
    elif u < 0.76:
        _set(act, WAIT, 0, 0, 0, 0, 0)
    elif u < 0.81:
        _set(act, OFFER, randint(rng, s, n), randint(rng, s, N_RES), 1 + randint(rng, s, 3),
             randint(rng, s, N_RES), 1 + randint(rng, s, 3))
    elif u < 0.86:
        if not _answer_offers(agents, offers, i, price, uniform(rng, s) * 2.0, act):
            _set(act, WAIT, 0, 0, 0, 0, 0)
    elif u < 0.90:
        _set(act, RAID, randint(rng, s, n), 0, 0, 0, 0)
    elif u < 0.94:
        _set(act, BUILD if uniform(rng, s) < 0.5 else CRAFT, 0, 0, 0, 0, 0)
    else:
        _set(act, SAY, -1, randint(rng, s, N_CANNED), 0, 0, 0)


@hot
def decide(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act):
    pol = agents.policy[i]
    if pol == HONEST_TRADER:
        _honest_trader(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act)
    elif pol == GREEDY_HARVESTER:
        _greedy_harvester(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act)
    elif pol == AGGRESSIVE_RAIDER:
        _aggressive_raider(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act)
    else:
        _random(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act)


