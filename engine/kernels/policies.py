"""The scripted policies (anchors and local/<policy> seats) in compiled code.

Each decides one action at the moment it acts, from the live state, writing (kind, a..e) into act.
They draw randomness only from their own stream (1 + agent index), so the world's stream is the
same whether a seat is scripted or replayed from its logged actions.
"""
import numpy as np
from engine.kernels.jit import hot, inlined

from engine.kernels.codes import (
    A_ALIVE, A_INV, A_POLICY, A_SATIETY, A_SHELTER, A_TOOL, A_X, A_Y, ACCEPT, AGGRESSIVE_RAIDER, BUILD,
    CRAFT, DECLINE, DIR_DX, DIR_DY, EAT, FOOD, GATHER, GREEDY_HARVESTER, HONEST_TRADER, M_RESCAN, M_TRES,
    M_TX, M_TY, M_VICTIM, M_VICTIM_UNTIL, MOVE, N_RES, O_GIVE_Q, O_GIVE_R, O_ID, O_WANT_Q,
    O_WANT_R, OC_IN, OC_OUT, OFFER, ORE, P_CARRY_MAX, P_COST, P_OFFER_RANGE, P_OPEN_OFFERS_MAX, P_PRICE,
    P_ITEM_VALUE, RAID, SAY, SHELTER, STONE, TOOL, WAIT, WOOD,
)
from engine.rules import TERRAIN_RES
from engine.kernels.common import lowest_bit, chebyshev, inbox_next, passable, pool_at, worth
from engine.kernels.rng import randint, uniform
from engine.kernels.spatial import ONE, near_word, span

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
def _has_pool(terrain, tiles, x, y, t, res):
    r = TERRAIN_RES[terrain[y, x]]
    if r < 0 or (res >= 0 and r != res):
        return False
    return pool_at(tiles, x, y, t) >= 1.0


@hot
def _nearest_tile(masks, tiles, x0, y0, t, res, radius):
    """Nearest tile holding resource res (-1: any) with a whole unit; (-1, -1) if none.

    Ring d is visited by k = -d..d, and for each k its top (x0 + k, y0 - d), bottom (x0 + k, y0 + d),
    left (x0 - d, y0 + k) and right (x0 + d, y0 + k) tile (the corners once, as top and bottom).
    The terrain masks give each side's tiles of that resource as bits by k, so only those are
    checked for a whole unit, in that same order."""
    r = N_RES if res < 0 else res
    H, W = tiles.shape[0], tiles.shape[1]
    for d in range(1, radius + 1):
        n = 2 * d + 1
        inner = ((ONE << n) - 1) & ~ONE & ~(ONE << (n - 1))
        top = span(masks, r, 0, y0 - d, x0 - d, n) if y0 - d >= 0 else 0
        bottom = span(masks, r, 0, y0 + d, x0 - d, n) if y0 + d < H else 0
        left = span(masks, r, 1, x0 - d, y0 - d, n) & inner if x0 - d >= 0 else 0
        right = span(masks, r, 1, x0 + d, y0 - d, n) & inner if x0 + d < W else 0
        todo = top | bottom | left | right
        while todo != 0:
            b = lowest_bit(todo)
            todo &= todo - 1
            k = b - d
            if (top >> b) & 1 and pool_at(tiles, x0 + k, y0 - d, t) >= 1.0:
                return x0 + k, y0 - d
            if (bottom >> b) & 1 and pool_at(tiles, x0 + k, y0 + d, t) >= 1.0:
                return x0 + k, y0 + d
            if (left >> b) & 1 and pool_at(tiles, x0 - d, y0 + k, t) >= 1.0:
                return x0 - d, y0 + k
            if (right >> b) & 1 and pool_at(tiles, x0 + d, y0 + k, t) >= 1.0:
                return x0 + d, y0 + k
    return -1, -1


@inlined
def _wander(terrain, ag, rng, i, act):
    start = randint(rng, 1 + i, 4)
    for k in range(4):
        d = (start + k) % 4
        if passable(terrain, ag[i, A_X] + DIR_DX[d], ag[i, A_Y] + DIR_DY[d]):
            _set(act, MOVE, d, 0, 0, 0, 0)
            return
    _set(act, WAIT, 0, 0, 0, 0, 0)


@inlined
def _step_toward(terrain, ag, rng, i, tx, ty, act):
    x = ag[i, A_X]
    y = ag[i, A_Y]
    dx = tx - x
    dy = ty - y
    hor = 1 if dx > 0 else 3
    ver = 2 if dy > 0 else 0
    if abs(dx) >= abs(dy):
        first = hor if dx != 0 else -1
        second = ver if dy != 0 else -1
    else:
        first = ver
        second = hor if dx != 0 else -1
    if first >= 0 and passable(terrain, x + DIR_DX[first], y + DIR_DY[first]):
        _set(act, MOVE, first, 0, 0, 0, 0)
    elif second >= 0 and passable(terrain, x + DIR_DX[second], y + DIR_DY[second]):
        _set(act, MOVE, second, 0, 0, 0, 0)
    else:
        _wander(terrain, ag, rng, i, act)


@inlined
def _seek(terrain, masks, tiles, ag, rng, t, i, res, radius, act):
    """Gather res here, or walk toward the remembered (or nearest) tile holding it."""
    x = ag[i, A_X]
    y = ag[i, A_Y]
    if _has_pool(terrain, tiles, x, y, t, res):
        _set(act, GATHER, 0, 0, 0, 0, 0)
        return
    tx = ag[i, M_TX]
    ty = ag[i, M_TY]
    searching = ag[i, M_TRES] != res or (tx >= 0 and not _has_pool(terrain, tiles, tx, ty, t, res))
    # a failed search is not repeated for a few ticks: the scan is the policies' costliest step
    if searching or (tx < 0 and t >= ag[i, M_RESCAN]):
        tx, ty = _nearest_tile(masks, tiles, x, y, t, res, radius)
        ag[i, M_TX] = tx
        ag[i, M_TY] = ty
        ag[i, M_TRES] = res
        ag[i, M_RESCAN] = t + (6 if tx >= 0 else 15)
    if tx < 0:
        _wander(terrain, ag, rng, i, act)
    else:
        _step_toward(terrain, ag, rng, i, tx, ty, act)


@hot
def _can_make(ag, i, P, k):
    """Item k (SHELTER, TOOL) not yet owned and every good of its recipe at hand."""
    if ag[i, A_SHELTER + k] != 0:
        return False
    for r in range(N_RES):
        if ag[i, A_INV + r] < P[P_COST + k * N_RES + r]:
            return False
    return True


@hot
def _can_build(ag, i, P):
    return _can_make(ag, i, P, SHELTER)


@hot
def _can_craft(ag, i, P):
    return _can_make(ag, i, P, TOOL)


@hot
def _eat(ag, i, hungry_below, act):
    if ag[i, A_SATIETY] < hungry_below and ag[i, A_INV + FOOD] > 0:
        _set(act, EAT, 0, 0, 0, 0, 0)
        return True
    return False


@hot
def _make(ag, i, P, build, act):
    """Craft the tool, then (if build) the shelter, as soon as the materials are there."""
    if _can_craft(ag, i, P):
        _set(act, CRAFT, 0, 0, 0, 0, 0)
        return True
    if build and _can_build(ag, i, P):
        _set(act, BUILD, 0, 0, 0, 0, 0)
        return True
    return False


@hot
def _answer_offers(ag, offers, ocount, i, P, ratio, act):
    """Accept the first open offer to i worth at least ratio x what it costs; decline one that is not.
    Returns True when it chose an action."""
    if ocount[i, OC_IN] == 0:
        return False
    k = inbox_next(ocount, i, 0)
    if k >= 0:
        gain = offers[k, O_GIVE_Q] * P[P_PRICE + offers[k, O_GIVE_R]]
        cost = offers[k, O_WANT_Q] * P[P_PRICE + offers[k, O_WANT_R]]
        if ratio > 0 and gain >= ratio * cost and ag[i, A_INV + offers[k, O_WANT_R]] >= offers[k, O_WANT_Q]:
            _set(act, ACCEPT, offers[k, O_ID], 0, 0, 0, 0)
        else:
            _set(act, DECLINE, offers[k, O_ID], 0, 0, 0, 0)
        return True
    return False


@inlined
def _honest_trader(terrain, cells, tiles, ag, offers, ocount, t, i, P, act):
    if _eat(ag, i, 50, act) or _answer_offers(ag, offers, ocount, i, P, 0.8, act) or _make(ag, i, P, True, act):
        return -1, 0
    need = FOOD
    if ag[i, A_INV + FOOD] >= 3:
        need = WOOD
        for r in (WOOD, STONE, ORE):
            if ag[i, A_INV + r] < ag[i, A_INV + need]:
                need = r
    surplus = -1
    for r in (WOOD, STONE, FOOD, ORE):
        keep = 4 if r == FOOD else 0
        if ag[i, A_INV + r] - keep >= 6 and (surplus < 0 or ag[i, A_INV + r] > ag[i, A_INV + surplus]):
            surplus = r
    if surplus >= 0 and surplus != need and (t + i) % 4 == 0 and ocount[i, OC_OUT] < P[P_OPEN_OFFERS_MAX]:
        best = -1
        reach = np.int64(P[P_OFFER_RANGE])
        best_d = reach + 1
        for w in range(cells.shape[2]):  # the agents near i, in index order: the nearest, lowest index wins
            near = near_word(cells, ag[i, A_X], ag[i, A_Y], reach, w)
            while near != 0:
                j = (w << 6) + lowest_bit(near)
                near &= near - 1
                if j != i and ag[j, A_ALIVE] == 1:
                    dd = chebyshev(ag, i, j)
                    if dd < best_d:
                        best_d = dd
                        best = j
        if best >= 0:
            want_q = max(1, np.int64(np.round(2 * P[P_PRICE + surplus] / P[P_PRICE + need])))
            _set(act, OFFER, best, surplus, 2, need, want_q)
            return -1, 0
    here = TERRAIN_RES[terrain[ag[i, A_Y], ag[i, A_X]]]
    if here >= 0 and here != need and ag[i, A_INV + here] < 4 and pool_at(tiles, ag[i, A_X], ag[i, A_Y], t) >= 1.0:
        _set(act, GATHER, 0, 0, 0, 0, 0)  # a little of what lies underfoot is worth the action
        return -1, 0
    return need, 6


@inlined
def _greedy_harvester(terrain, tiles, ag, offers, ocount, t, i, P, act):
    if _eat(ag, i, 40, act) or _make(ag, i, P, True, act):
        return -1, 0
    if t % 3 == 0 and _answer_offers(ag, offers, ocount, i, P, 1.5, act):
        return -1, 0
    x = ag[i, A_X]
    y = ag[i, A_Y]
    here = TERRAIN_RES[terrain[y, x]]
    if here >= 0 and pool_at(tiles, x, y, t) >= 1.0 and ag[i, A_INV + here] < P[P_CARRY_MAX]:
        _set(act, GATHER, 0, 0, 0, 0, 0)
        return -1, 0
    res = -1
    if ag[i, A_INV + FOOD] < 2:
        res = FOOD
    elif ag[i, A_TOOL] == 0 and ag[i, A_INV + ORE] < P[P_COST + TOOL * N_RES + ORE]:
        res = ORE
    return res, 8


@inlined
def _aggressive_raider(terrain, cells, tiles, ag, offers, ocount, rng, t, i, P, act):
    if _eat(ag, i, 45, act) or _answer_offers(ag, offers, ocount, i, P, 0.0, act) or _make(ag, i, P, False, act):
        return -1, 0
    if ag[i, A_INV + FOOD] == 0 and ag[i, A_SATIETY] < 40:
        return FOOD, 10
    # the victim is chosen anew every few ticks, not every action: it is a search of the neighbourhood
    victim = ag[i, M_VICTIM]
    if t >= ag[i, M_VICTIM_UNTIL] or victim < 0 or ag[victim, A_ALIVE] == 0:
        victim = -1
        best = 0.0
        for w in range(cells.shape[2]):  # the agents near i, in index order: the richest, lowest index wins
            near = near_word(cells, ag[i, A_X], ag[i, A_Y], 10, w)
            while near != 0:
                j = (w << 6) + lowest_bit(near)
                near &= near - 1
                if j != i and ag[j, A_ALIVE] == 1 and chebyshev(ag, i, j) <= 10:
                    value = worth(ag, j, P) - P[P_ITEM_VALUE + SHELTER] * ag[j, A_SHELTER]
                    if value > best:
                        best = value
                        victim = j
        ag[i, M_VICTIM] = victim
        ag[i, M_VICTIM_UNTIL] = t + 4
    if victim < 0:
        return -1, 6
    if chebyshev(ag, i, victim) <= 1:
        _set(act, RAID, victim, 0, 0, 0, 0)
    else:
        _step_toward(terrain, ag, rng, i, ag[victim, A_X], ag[victim, A_Y], act)
    return -1, 0


@inlined
def _random(ag, offers, ocount, rng, i, P, act):
    s = 1 + i
    n = ag.shape[0]
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
        if not _answer_offers(ag, offers, ocount, i, P, uniform(rng, s) * 2.0, act):
            _set(act, WAIT, 0, 0, 0, 0, 0)
    elif u < 0.90:
        _set(act, RAID, randint(rng, s, n), 0, 0, 0, 0)
    elif u < 0.94:
        _set(act, BUILD if uniform(rng, s) < 0.5 else CRAFT, 0, 0, 0, 0, 0)
    else:
        _set(act, SAY, -1, randint(rng, s, N_CANNED), 0, 0, 0)


@inlined
def decide(terrain, masks, cells, tiles, ag, offers, ocount, rng, t, i, P, act):
    """The scripted policies either choose an action or ask to seek a resource (res, radius > 0):
    the seek is written once here rather than inlined into each policy (a shorter compile)."""
    pol = ag[i, A_POLICY]
    res, radius = -1, 0
    if pol == HONEST_TRADER:
        res, radius = _honest_trader(terrain, cells, tiles, ag, offers, ocount, t, i, P, act)
    elif pol == GREEDY_HARVESTER:
        res, radius = _greedy_harvester(terrain, tiles, ag, offers, ocount, t, i, P, act)
    elif pol == AGGRESSIVE_RAIDER:
        res, radius = _aggressive_raider(terrain, cells, tiles, ag, offers, ocount, rng, t, i, P, act)
    else:
        _random(ag, offers, ocount, rng, i, P, act)
    if radius > 0:
        _seek(terrain, masks, tiles, ag, rng, t, i, res, radius, act)
