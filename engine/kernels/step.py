"""The one step function: apply actions, then the end-of-tick rules. Both ways of playing call it.

Every kernel here takes the packed tables of state.py: terrain, tiles, ag, offers, ocount, logi,
logv, meta, plus rng (uint64[1 + N]: stream 0 is the world's) and P (rule numbers, then prices).
"""
import numpy as np

from engine.kernels.codes import (
    A_ALIVE, A_DEATH, A_HEALTH, A_INV, A_POLICY, A_SATIETY, A_SHELTER, A_TOOL, A_X, A_Y, ACCEPT, BUILD,
    CRAFT, DECLINE, DIR_DX, DIR_DY, EAT, EXPIRE, EXTERNAL, FOOD, GATHER, INVALID, MOVE, N_ACTIONS, N_RES,
    NO_ACTION, O_DST, O_EXPIRES, O_GIVE_Q, O_GIVE_R, O_ID, O_SRC, O_WANT_Q, O_WANT_R, OC_OUT,
    OFFER, META_NEXT_OFFER, P_CARRY_MAX, P_COST, P_EAT_SATIETY, P_GATHER_YIELD, P_HEAL, P_HEAL_ABOVE,
    P_HEALTH_MAX, P_HUNGER, P_OFFER_QTY_MAX, P_OFFER_RANGE, P_OFFER_TTL, P_OPEN_OFFERS_MAX, P_PRICE,
    P_RAID_BASE, P_RAID_DIVISOR, P_RAID_EFFORT, P_RAID_FAIL, P_RAID_MAX, P_RAID_MIN, P_RAID_SHELTER,
    P_RAID_TOOL, P_SATIETY_MAX, P_SNAPSHOT_EVERY, P_STARVE_DAMAGE, P_TOOL_BONUS, R_ALREADY_OWNED,
    R_BAD_DIRECTION, R_BAD_QUANTITY, R_BAD_RESOURCE, R_BAD_TARGET, R_BLOCKED, R_FULL, R_INVENTORY_FULL,
    R_LACKS_GOODS, R_LACKS_MATERIALS, R_NO_FOOD, R_NO_SUCH_OFFER, R_NOTHING_HERE, R_OFFERER_LACKS_GOODS,
    R_OK, R_OUT_OF_RANGE, R_TOO_MANY_OFFERS, R_UNKNOWN_ACTION, RAID, RELICS, SAY, SNAPSHOT, STARVE, WAIT,
)
from engine.rules import TERRAIN_RES
from engine.kernels.common import (
    chebyshev, close_offer, emit, find_offer, open_offer, passable, pool_at, take_from_pool, worth,
)
from engine.kernels.jit import hot, inlined
from engine.kernels.policies import decide
from engine.kernels.rng import randint, uniform
from engine.kernels.spatial import build_cells, build_masks, move_cell


@hot
def _refuse(logi, logv, meta, t, i, kind, reason, p):
    emit(logi, logv, meta, t, i, kind, 0, reason, p[1], p[2], p[3], p[4], p[5], 0, 0, 0.0)


@hot
def _living(ag, j):
    return 0 <= j < ag.shape[0] and ag[j, A_ALIVE] == 1


@inlined
def apply_action(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, t, i, p, P):
    """Validate and apply one action p int64[6] = (kind, a, b, c, d, e) of agent i at tick t.
    A refused action is logged with its reason and changes nothing."""
    kind = p[0]
    if kind == NO_ACTION:
        return
    if kind == INVALID:  # a reply the seat layer could not turn into an action; a = reason
        emit(logi, logv, meta, t, i, INVALID, 0, p[1], p[1], p[2], 0, 0, 0, 0, 0, 0.0)
        return
    if kind < 0 or kind >= N_ACTIONS:
        emit(logi, logv, meta, t, i, INVALID, 0, R_UNKNOWN_ACTION, R_UNKNOWN_ACTION, 0, 0, 0, 0, 0, 0, 0.0)
        return
    carry = np.int64(P[P_CARRY_MAX])
    if kind == WAIT:
        emit(logi, logv, meta, t, i, WAIT, 1, R_OK, p[1], 0, 0, 0, 0, 0, 0, 0.0)
    elif kind == MOVE:
        d = p[1]
        if d < 0 or d > 3:
            _refuse(logi, logv, meta, t, i, kind, R_BAD_DIRECTION, p)
            return
        nx = ag[i, A_X] + DIR_DX[d]
        ny = ag[i, A_Y] + DIR_DY[d]
        if not passable(terrain, nx, ny):
            _refuse(logi, logv, meta, t, i, kind, R_BLOCKED, p)
            return
        ag[i, A_X] = nx
        ag[i, A_Y] = ny
        emit(logi, logv, meta, t, i, MOVE, 1, R_OK, d, 0, 0, 0, 0, nx, ny, 0.0)
    elif kind == GATHER:
        x = ag[i, A_X]
        y = ag[i, A_Y]
        r = TERRAIN_RES[terrain[y, x]]
        if r < 0:
            _refuse(logi, logv, meta, t, i, kind, R_NOTHING_HERE, p)
            return
        avail = np.int64(np.floor(pool_at(tiles, x, y, t) + 1e-9))
        if avail < 1:
            _refuse(logi, logv, meta, t, i, kind, R_NOTHING_HERE, p)
            return
        if ag[i, A_INV + r] >= carry:
            _refuse(logi, logv, meta, t, i, kind, R_INVENTORY_FULL, p)
            return
        yld = np.int64(P[P_GATHER_YIELD])
        if ag[i, A_TOOL] == 1 and r != RELICS:
            yld += np.int64(P[P_TOOL_BONUS])
        q = min(avail, yld, carry - ag[i, A_INV + r])
        take_from_pool(tiles, x, y, t, q)
        ag[i, A_INV + r] += q
        emit(logi, logv, meta, t, i, GATHER, 1, R_OK, 0, 0, 0, 0, 0, r, q, 0.0)
    elif kind == EAT:
        if ag[i, A_INV + FOOD] < 1:
            _refuse(logi, logv, meta, t, i, kind, R_NO_FOOD, p)
            return
        smax = np.int64(P[P_SATIETY_MAX])
        if ag[i, A_SATIETY] >= smax:
            _refuse(logi, logv, meta, t, i, kind, R_FULL, p)
            return
        ag[i, A_INV + FOOD] -= 1
        ag[i, A_SATIETY] = min(smax, ag[i, A_SATIETY] + np.int64(P[P_EAT_SATIETY]))
        emit(logi, logv, meta, t, i, EAT, 1, R_OK, 0, 0, 0, 0, 0, ag[i, A_SATIETY], ag[i, A_INV + FOOD], 0.0)
    elif kind == BUILD or kind == CRAFT:
        _make(ag, logi, logv, meta, t, i, p, P, kind)
    elif kind == OFFER:
        _offer(ag, offers, ocount, logi, logv, meta, t, i, p, P)
    elif kind == ACCEPT:
        _accept(ag, offers, ocount, logi, logv, meta, t, i, p, carry)
    elif kind == DECLINE:
        k = find_offer(offers, ocount, i, p[1])
        if k < 0:
            _refuse(logi, logv, meta, t, i, kind, R_NO_SUCH_OFFER, p)
            return
        src = offers[k, O_SRC]
        close_offer(offers, ocount, k)
        emit(logi, logv, meta, t, i, DECLINE, 1, R_OK, p[1], 0, 0, 0, 0, src, 0, 0.0)
    elif kind == RAID:
        _raid(ag, logi, logv, meta, rng, t, i, p, P, carry)
    elif kind == SAY:
        j = p[1]
        if j != -1 and (not _living(ag, j) or j == i):
            _refuse(logi, logv, meta, t, i, kind, R_BAD_TARGET, p)
            return
        emit(logi, logv, meta, t, i, SAY, 1, R_OK, j, p[2], 0, 0, 0, 0, 0, 0.0)


@hot
def _make(ag, logi, logv, meta, t, i, p, P, kind):
    """build or craft: item k = kind - BUILD, made once from its recipe's goods (rules.RECIPES)."""
    k = kind - BUILD
    if ag[i, A_SHELTER + k] == 1:
        _refuse(logi, logv, meta, t, i, kind, R_ALREADY_OWNED, p)
        return
    for r in range(N_RES):
        if ag[i, A_INV + r] < np.int64(P[P_COST + k * N_RES + r]):
            _refuse(logi, logv, meta, t, i, kind, R_LACKS_MATERIALS, p)
            return
    for r in range(N_RES):
        ag[i, A_INV + r] -= np.int64(P[P_COST + k * N_RES + r])
    ag[i, A_SHELTER + k] = 1
    emit(logi, logv, meta, t, i, kind, 1, R_OK, 0, 0, 0, 0, 0, 0, 0, 0.0)


@hot
def _offer(ag, offers, ocount, logi, logv, meta, t, i, p, P):
    j, gr, gq, wr, wq = p[1], p[2], p[3], p[4], p[5]
    if not _living(ag, j) or j == i:
        _refuse(logi, logv, meta, t, i, OFFER, R_BAD_TARGET, p)
        return
    if chebyshev(ag, i, j) > np.int64(P[P_OFFER_RANGE]):
        _refuse(logi, logv, meta, t, i, OFFER, R_OUT_OF_RANGE, p)
        return
    if gr < 0 or gr >= N_RES or wr < 0 or wr >= N_RES or gr == wr:
        _refuse(logi, logv, meta, t, i, OFFER, R_BAD_RESOURCE, p)
        return
    qmax = np.int64(P[P_OFFER_QTY_MAX])
    if gq < 1 or gq > qmax or wq < 1 or wq > qmax:
        _refuse(logi, logv, meta, t, i, OFFER, R_BAD_QUANTITY, p)
        return
    if ag[i, A_INV + gr] < gq:
        _refuse(logi, logv, meta, t, i, OFFER, R_LACKS_GOODS, p)
        return
    if ocount[i, OC_OUT] >= np.int64(P[P_OPEN_OFFERS_MAX]):
        _refuse(logi, logv, meta, t, i, OFFER, R_TOO_MANY_OFFERS, p)
        return
    slot = 0
    while offers[slot, O_ID] >= 0:  # a free slot exists: slots = agents x open-offer limit
        slot += 1
    oid = meta[META_NEXT_OFFER]
    meta[META_NEXT_OFFER] = oid + 1
    offers[slot, O_ID] = oid
    offers[slot, O_SRC] = i
    offers[slot, O_DST] = j
    offers[slot, O_GIVE_R] = gr
    offers[slot, O_GIVE_Q] = gq
    offers[slot, O_WANT_R] = wr
    offers[slot, O_WANT_Q] = wq
    offers[slot, O_EXPIRES] = t + np.int64(P[P_OFFER_TTL])
    open_offer(ocount, i, j, slot)
    emit(logi, logv, meta, t, i, OFFER, 1, R_OK, j, gr, gq, wr, wq, oid, 0, 0.0)


@hot
def _accept(ag, offers, ocount, logi, logv, meta, t, i, p, carry):
    k = find_offer(offers, ocount, i, p[1])
    if k < 0:
        _refuse(logi, logv, meta, t, i, ACCEPT, R_NO_SUCH_OFFER, p)
        return
    src = offers[k, O_SRC]
    gr, gq, wr, wq = offers[k, O_GIVE_R], offers[k, O_GIVE_Q], offers[k, O_WANT_R], offers[k, O_WANT_Q]
    if ag[i, A_INV + wr] < wq:
        _refuse(logi, logv, meta, t, i, ACCEPT, R_LACKS_GOODS, p)
        return
    if ag[i, A_INV + gr] + gq > carry or ag[src, A_INV + wr] + wq > carry:
        _refuse(logi, logv, meta, t, i, ACCEPT, R_INVENTORY_FULL, p)
        return
    if ag[src, A_INV + gr] < gq:
        # the offerer no longer holds what it offered: nothing moves, and the offer is void
        _refuse(logi, logv, meta, t, i, ACCEPT, R_OFFERER_LACKS_GOODS, p)
        close_offer(offers, ocount, k)
        emit(logi, logv, meta, t, src, EXPIRE, 1, R_OK, p[1], 2, i, 0, 0, 0, 0, 0.0)
        return
    # settle both legs together: every check above passed, so neither can fail now
    ag[src, A_INV + gr] -= gq
    ag[i, A_INV + gr] += gq
    ag[i, A_INV + wr] -= wq
    ag[src, A_INV + wr] += wq
    close_offer(offers, ocount, k)
    emit(logi, logv, meta, t, i, ACCEPT, 1, R_OK, p[1], 0, 0, 0, 0, src, 0, 0.0)


@hot
def _raid(ag, logi, logv, meta, rng, t, i, p, P, carry):
    j = p[1]
    if not _living(ag, j) or j == i:
        _refuse(logi, logv, meta, t, i, RAID, R_BAD_TARGET, p)
        return
    if chebyshev(ag, i, j) > 1:
        _refuse(logi, logv, meta, t, i, RAID, R_OUT_OF_RANGE, p)
        return
    odds = P[P_RAID_BASE] + P[P_RAID_TOOL] * ag[i, A_TOOL] - P[P_RAID_SHELTER] * ag[j, A_SHELTER]
    odds = min(P[P_RAID_MAX], max(P[P_RAID_MIN], odds))
    ag[i, A_SATIETY] = max(0, ag[i, A_SATIETY] - np.int64(P[P_RAID_EFFORT]))
    if uniform(rng, 0) < odds:
        div = np.int64(P[P_RAID_DIVISOR])
        units = 0
        value = 0.0
        for r in range(N_RES):
            q = min(ag[j, A_INV + r] // div, carry - ag[i, A_INV + r])
            if q > 0:
                ag[j, A_INV + r] -= q
                ag[i, A_INV + r] += q
                units += q
                value += q * P[P_PRICE + r]
        emit(logi, logv, meta, t, i, RAID, 1, R_OK, j, 0, 0, 0, 0, 1, units, value)
    else:
        ag[i, A_SATIETY] = max(0, ag[i, A_SATIETY] - np.int64(P[P_RAID_FAIL]))
        emit(logi, logv, meta, t, i, RAID, 1, R_OK, j, 0, 0, 0, 0, 0, 0, 0.0)


@inlined
def end_of_tick(ag, offers, ocount, logi, logv, meta, t, P):
    """Hunger, healing, starvation, lapsed offers, periodic snapshots."""
    n = ag.shape[0]
    hmax = np.int64(P[P_HEALTH_MAX])
    for i in range(n):
        if ag[i, A_ALIVE] == 0:
            continue
        ag[i, A_SATIETY] = max(0, ag[i, A_SATIETY] - np.int64(P[P_HUNGER]))
        if ag[i, A_SATIETY] == 0:
            ag[i, A_HEALTH] = max(0, ag[i, A_HEALTH] - np.int64(P[P_STARVE_DAMAGE]))
        elif ag[i, A_SATIETY] >= np.int64(P[P_HEAL_ABOVE]) and ag[i, A_HEALTH] < hmax:
            ag[i, A_HEALTH] = min(hmax, ag[i, A_HEALTH] + np.int64(P[P_HEAL]))
        if ag[i, A_HEALTH] == 0:
            ag[i, A_ALIVE] = 0
            ag[i, A_DEATH] = t
            emit(logi, logv, meta, t, i, STARVE, 1, R_OK, 0, 0, 0, 0, 0, 0, 0, 0.0)
    for k in range(offers.shape[0]):
        if offers[k, O_ID] < 0:
            continue
        gone = ag[offers[k, O_SRC], A_ALIVE] == 0 or ag[offers[k, O_DST], A_ALIVE] == 0
        if gone or offers[k, O_EXPIRES] <= t:
            emit(logi, logv, meta, t, offers[k, O_SRC], EXPIRE, 1, R_OK, offers[k, O_ID], 1 if gone else 0,
                 offers[k, O_DST], 0, 0, 0, 0, 0.0)
            close_offer(offers, ocount, k)
    if (t + 1) % np.int64(P[P_SNAPSHOT_EVERY]) == 0:
        for i in range(n):
            if ag[i, A_ALIVE] == 1:
                emit(logi, logv, meta, t, i, SNAPSHOT, 1, R_OK, ag[i, A_X], ag[i, A_Y], ag[i, A_HEALTH],
                     ag[i, A_SATIETY], ag[i, A_SHELTER] + 2 * ag[i, A_TOOL], 0, 0, worth(ag, i, P))


@inlined
def play_tick(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, t, apt, ext, order, act, masks, cells, P):
    """Tick t: a fresh turn order from the world stream, every living agent's actions slot by slot, then
    the end-of-tick rules. masks and cells must be current (play_ticks builds them)."""
    n = ag.shape[0]
    for k in range(n):
        order[k] = k
    for k in range(n - 1, 0, -1):
        j = randint(rng, 0, k + 1)
        tmp = order[k]
        order[k] = order[j]
        order[j] = tmp
    for slot in range(apt):
        for k in range(n):
            i = order[k]
            if ag[i, A_ALIVE] == 0:
                continue
            if ag[i, A_POLICY] == EXTERNAL:
                for q in range(6):
                    act[q] = ext[i, slot, q]
            else:
                decide(terrain, masks, cells, tiles, ag, offers, ocount, rng, t, i, P, act)
            x, y = ag[i, A_X], ag[i, A_Y]  # a move mid-tick must reach the cells before the next search
            apply_action(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, t, i, act, P)
            move_cell(cells, i, x, y, ag[i, A_X], ag[i, A_Y])
    end_of_tick(ag, offers, ocount, logi, logv, meta, t, P)


@hot
def play_ticks(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, t0, t1, apt, ext, order, act, masks, cells,
               P):
    """Play ticks [t0, t1). ext int64[N, apt, 6] holds this tick's actions of EXTERNAL seats (only
    meaningful when t1 == t0 + 1); scripted agents decide in place, slot by slot. order int64[N],
    act int64[6], masks (spatial.mask_shape) and cells (spatial.cell_shape) are scratch buffers.

    Turn order is a fresh permutation each tick from the world stream, so no seat always moves first.
    """
    build_masks(terrain, masks)
    build_cells(ag, cells)
    for t in range(t0, t1):
        play_tick(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, t, apt, ext, order, act, masks, cells, P)
