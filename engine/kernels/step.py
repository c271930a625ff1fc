"""The one step function: apply actions, then the end-of-tick rules. Both ways of playing call it."""
import numpy as np
from engine.kernels.jit import hot

from engine.kernels.codes import (
    ACCEPT, BUILD, CRAFT, DECLINE, EAT, EXPIRE, EXTERNAL, FOOD, GATHER, INVALID, MOVE, N_ACTIONS, N_RES,
    NO_ACTION, OFFER, ORE, P_CARRY_MAX, P_EAT_SATIETY, P_GATHER_YIELD, P_HEAL, P_HEAL_ABOVE,
    P_HEALTH_MAX, P_HUNGER, P_OFFER_QTY_MAX, P_OFFER_RANGE, P_OFFER_TTL, P_OPEN_OFFERS_MAX, P_RAID_BASE,
    P_RAID_DIVISOR, P_RAID_EFFORT, P_RAID_FAIL, P_RAID_MAX, P_RAID_MIN, P_RAID_SHELTER, P_RAID_TOOL,
    P_SATIETY_MAX, P_SHELTER_STONE, P_SHELTER_WOOD, P_SNAPSHOT_EVERY, P_STARVE_DAMAGE, P_TOOL_BONUS,
    P_TOOL_ORE, P_TOOL_STONE, P_TOOL_WOOD, R_ALREADY_OWNED, R_BAD_DIRECTION, R_BAD_QUANTITY,
    R_BAD_RESOURCE, R_BAD_TARGET, R_BLOCKED, R_FULL, R_INVENTORY_FULL, R_LACKS_GOODS, R_LACKS_MATERIALS,
    R_NO_FOOD, R_NO_SUCH_OFFER, R_NOTHING_HERE, R_OFFERER_LACKS_GOODS, R_OK, R_OUT_OF_RANGE,
    R_TOO_MANY_OFFERS, R_UNKNOWN_ACTION, RAID, RELICS, SAY, SNAPSHOT, STARVE, STONE, WAIT, WOOD,
)
from engine.kernels.common import (
    chebyshev, emit, find_offer, open_offers_of, passable, pool_at, take_from_pool, worth,
)
from engine.kernels.policies import decide
from engine.kernels.rng import randint, uniform


@hot
def _refuse(log, t, i, kind, reason, p):
    emit(log, t, i, kind, 0, reason, p[1], p[2], p[3], p[4], p[5], 0, 0, 0.0)


@hot
def _valid_agent(agents, j):
    return 0 <= j < agents.alive.shape[0] and agents.alive[j] == 1


@hot
def apply_action(world, agents, offers, log, rng, t, i, p, P, price, dir_dx, dir_dy, terrain_res):
    """Validate and apply one action p int64[6] = (kind, a, b, c, d, e) of agent i at tick t.

    A refused action is logged with its reason and changes nothing. rng: uint64[1 + N], stream 0
    is the world's (raid rolls).
    """
    kind = p[0]
    if kind == NO_ACTION:
        return
    if kind == INVALID:  # a reply the seat layer could not turn into an action; a = reason
        emit(log, t, i, INVALID, 0, p[1], p[1], p[2], 0, 0, 0, 0, 0, 0.0)
        return
    if kind < 0 or kind >= N_ACTIONS:
        emit(log, t, i, INVALID, 0, R_UNKNOWN_ACTION, R_UNKNOWN_ACTION, 0, 0, 0, 0, 0, 0, 0.0)
        return
    carry = np.int64(P[P_CARRY_MAX])
    if kind == WAIT:
        emit(log, t, i, WAIT, 1, R_OK, p[1], 0, 0, 0, 0, 0, 0, 0.0)
    elif kind == MOVE:
        d = p[1]
        if d < 0 or d > 3:
            _refuse(log, t, i, kind, R_BAD_DIRECTION, p)
            return
        nx = agents.pos[i, 0] + dir_dx[d]
        ny = agents.pos[i, 1] + dir_dy[d]
        if not passable(world, nx, ny):
            _refuse(log, t, i, kind, R_BLOCKED, p)
            return
        agents.pos[i, 0] = nx
        agents.pos[i, 1] = ny
        emit(log, t, i, MOVE, 1, R_OK, d, 0, 0, 0, 0, nx, ny, 0.0)
    elif kind == GATHER:
        x = agents.pos[i, 0]
        y = agents.pos[i, 1]
        r = terrain_res[world.terrain[y, x]]
        if r < 0:
            _refuse(log, t, i, kind, R_NOTHING_HERE, p)
            return
        avail = np.int64(np.floor(pool_at(world, x, y, t) + 1e-9))
        if avail < 1:
            _refuse(log, t, i, kind, R_NOTHING_HERE, p)
            return
        if agents.inv[i, r] >= carry:
            _refuse(log, t, i, kind, R_INVENTORY_FULL, p)
            return
        y_ = np.int64(P[P_GATHER_YIELD]) + (np.int64(P[P_TOOL_BONUS]) if agents.tool[i] == 1 and r != RELICS else 0)
        q = min(avail, y_, carry - agents.inv[i, r])
        take_from_pool(world, x, y, t, q)
        agents.inv[i, r] += q
        emit(log, t, i, GATHER, 1, R_OK, 0, 0, 0, 0, 0, r, q, 0.0)
    elif kind == EAT:
        if agents.inv[i, FOOD] < 1:
            _refuse(log, t, i, kind, R_NO_FOOD, p)
            return
        smax = np.int64(P[P_SATIETY_MAX])
        if agents.satiety[i] >= smax:
            _refuse(log, t, i, kind, R_FULL, p)
            return
        agents.inv[i, FOOD] -= 1
        agents.satiety[i] = min(smax, agents.satiety[i] + np.int64(P[P_EAT_SATIETY]))
        emit(log, t, i, EAT, 1, R_OK, 0, 0, 0, 0, 0, agents.satiety[i], agents.inv[i, FOOD], 0.0)
    elif kind == BUILD:
        if agents.shelter[i] == 1:
            _refuse(log, t, i, kind, R_ALREADY_OWNED, p)
            return
        w = np.int64(P[P_SHELTER_WOOD])
        s = np.int64(P[P_SHELTER_STONE])
        if agents.inv[i, WOOD] < w or agents.inv[i, STONE] < s:
            _refuse(log, t, i, kind, R_LACKS_MATERIALS, p)
            return
        agents.inv[i, WOOD] -= w
        agents.inv[i, STONE] -= s
        agents.shelter[i] = 1
        emit(log, t, i, BUILD, 1, R_OK, 0, 0, 0, 0, 0, 0, 0, 0.0)
    elif kind == CRAFT:
        if agents.tool[i] == 1:
            _refuse(log, t, i, kind, R_ALREADY_OWNED, p)
            return
        w = np.int64(P[P_TOOL_WOOD])
        s = np.int64(P[P_TOOL_STONE])
        o = np.int64(P[P_TOOL_ORE])
        if agents.inv[i, WOOD] < w or agents.inv[i, STONE] < s or agents.inv[i, ORE] < o:
            _refuse(log, t, i, kind, R_LACKS_MATERIALS, p)
            return
        agents.inv[i, WOOD] -= w
        agents.inv[i, STONE] -= s
        agents.inv[i, ORE] -= o
        agents.tool[i] = 1
        emit(log, t, i, CRAFT, 1, R_OK, 0, 0, 0, 0, 0, 0, 0, 0.0)
    elif kind == OFFER:
        _offer(world, agents, offers, log, t, i, p, P)
    elif kind == ACCEPT:
        _accept(agents, offers, log, t, i, p, carry)
    elif kind == DECLINE:
        k = find_offer(offers, p[1])
        if k < 0 or offers.dst[k] != i:
            _refuse(log, t, i, kind, R_NO_SUCH_OFFER, p)
            return
        src = offers.src[k]
        offers.oid[k] = -1
        emit(log, t, i, DECLINE, 1, R_OK, p[1], 0, 0, 0, 0, src, 0, 0.0)
    elif kind == RAID:
        _raid(agents, log, rng, t, i, p, P, price, carry)
    elif kind == SAY:
        j = p[1]
        if j != -1 and (not _valid_agent(agents, j) or j == i):
            _refuse(log, t, i, kind, R_BAD_TARGET, p)
            return
        emit(log, t, i, SAY, 1, R_OK, j, p[2], 0, 0, 0, 0, 0, 0.0)


@hot
def _offer(world, agents, offers, log, t, i, p, P):
    j = p[1]
    gr = p[2]
    gq = p[3]
    wr = p[4]
    wq = p[5]
    if not _valid_agent(agents, j) or j == i:
        _refuse(log, t, i, OFFER, R_BAD_TARGET, p)
        return
    if chebyshev(agents, i, j) > np.int64(P[P_OFFER_RANGE]):
        _refuse(log, t, i, OFFER, R_OUT_OF_RANGE, p)
        return
    if gr < 0 or gr >= N_RES or wr < 0 or wr >= N_RES or gr == wr:
        _refuse(log, t, i, OFFER, R_BAD_RESOURCE, p)
        return
    qmax = np.int64(P[P_OFFER_QTY_MAX])
    if gq < 1 or gq > qmax or wq < 1 or wq > qmax:
        _refuse(log, t, i, OFFER, R_BAD_QUANTITY, p)
        return
    if agents.inv[i, gr] < gq:
        _refuse(log, t, i, OFFER, R_LACKS_GOODS, p)
        return
    if open_offers_of(offers, i) >= np.int64(P[P_OPEN_OFFERS_MAX]):
        _refuse(log, t, i, OFFER, R_TOO_MANY_OFFERS, p)
        return
    slot = -1
    for k in range(offers.oid.shape[0]):
        if offers.oid[k] < 0:
            slot = k
            break
    oid = offers.next_id[0]
    offers.next_id[0] = oid + 1
    offers.oid[slot] = oid
    offers.src[slot] = i
    offers.dst[slot] = j
    offers.give_r[slot] = gr
    offers.give_q[slot] = gq
    offers.want_r[slot] = wr
    offers.want_q[slot] = wq
    offers.expires[slot] = t + np.int64(P[P_OFFER_TTL])
    emit(log, t, i, OFFER, 1, R_OK, j, gr, gq, wr, wq, oid, 0, 0.0)


@hot
def _accept(agents, offers, log, t, i, p, carry):
    k = find_offer(offers, p[1])
    if k < 0 or offers.dst[k] != i:
        _refuse(log, t, i, ACCEPT, R_NO_SUCH_OFFER, p)
        return
    src = offers.src[k]
    gr = offers.give_r[k]
    gq = offers.give_q[k]
    wr = offers.want_r[k]
    wq = offers.want_q[k]
    if agents.inv[i, wr] < wq:
        _refuse(log, t, i, ACCEPT, R_LACKS_GOODS, p)
        return
    if agents.inv[i, gr] + gq > carry or agents.inv[src, wr] + wq > carry:
        _refuse(log, t, i, ACCEPT, R_INVENTORY_FULL, p)
        return
    if agents.alive[src] == 0 or agents.inv[src, gr] < gq:
        # the offerer no longer holds what it offered: nothing moves, and the offer is void
        _refuse(log, t, i, ACCEPT, R_OFFERER_LACKS_GOODS, p)
        offers.oid[k] = -1
        emit(log, t, src, EXPIRE, 1, R_OK, p[1], 2, i, 0, 0, 0, 0, 0.0)
        return
    # settle both legs together: every check above passed, so neither can fail now
    agents.inv[src, gr] -= gq
    agents.inv[i, gr] += gq
    agents.inv[i, wr] -= wq
    agents.inv[src, wr] += wq
    offers.oid[k] = -1
    emit(log, t, i, ACCEPT, 1, R_OK, p[1], 0, 0, 0, 0, src, 0, 0.0)


@hot
def _raid(agents, log, rng, t, i, p, P, price, carry):
    j = p[1]
    if not _valid_agent(agents, j) or j == i:
        _refuse(log, t, i, RAID, R_BAD_TARGET, p)
        return
    if chebyshev(agents, i, j) > 1:
        _refuse(log, t, i, RAID, R_OUT_OF_RANGE, p)
        return
    odds = P[P_RAID_BASE] + P[P_RAID_TOOL] * agents.tool[i] - P[P_RAID_SHELTER] * agents.shelter[j]
    odds = min(P[P_RAID_MAX], max(P[P_RAID_MIN], odds))
    agents.satiety[i] = max(0, agents.satiety[i] - np.int64(P[P_RAID_EFFORT]))
    if uniform(rng, 0) < odds:
        div = np.int64(P[P_RAID_DIVISOR])
        units = 0
        value = 0.0
        for r in range(N_RES):
            q = min(agents.inv[j, r] // div, carry - agents.inv[i, r])
            if q > 0:
                agents.inv[j, r] -= q
                agents.inv[i, r] += q
                units += q
                value += q * price[r]
        emit(log, t, i, RAID, 1, R_OK, j, 0, 0, 0, 0, 1, units, value)
    else:
        agents.satiety[i] = max(0, agents.satiety[i] - np.int64(P[P_RAID_FAIL]))
        emit(log, t, i, RAID, 1, R_OK, j, 0, 0, 0, 0, 0, 0, 0.0)


@hot
def end_of_tick(agents, offers, log, t, P, price):
    """Hunger, healing, starvation, lapsed offers, periodic snapshots."""
    n = agents.alive.shape[0]
    smax_h = np.int64(P[P_HEALTH_MAX])
    for i in range(n):
        if agents.alive[i] == 0:
            continue
        agents.satiety[i] = max(0, agents.satiety[i] - np.int64(P[P_HUNGER]))
        if agents.satiety[i] == 0:
            agents.health[i] = max(0, agents.health[i] - np.int64(P[P_STARVE_DAMAGE]))
        elif agents.satiety[i] >= np.int64(P[P_HEAL_ABOVE]) and agents.health[i] < smax_h:
            agents.health[i] = min(smax_h, agents.health[i] + np.int64(P[P_HEAL]))
        if agents.health[i] == 0:
            agents.alive[i] = 0
            agents.death_tick[i] = t
            emit(log, t, i, STARVE, 1, R_OK, 0, 0, 0, 0, 0, 0, 0, 0.0)
    for k in range(offers.oid.shape[0]):
        if offers.oid[k] < 0:
            continue
        gone = agents.alive[offers.src[k]] == 0 or agents.alive[offers.dst[k]] == 0
        if gone or offers.expires[k] <= t:
            emit(log, t, offers.src[k], EXPIRE, 1, R_OK, offers.oid[k], 1 if gone else 0,
                 offers.dst[k], 0, 0, 0, 0, 0.0)
            offers.oid[k] = -1
    every = np.int64(P[P_SNAPSHOT_EVERY])
    if (t + 1) % every == 0:
        for i in range(n):
            if agents.alive[i] == 1:
                emit(log, t, i, SNAPSHOT, 1, R_OK, agents.pos[i, 0], agents.pos[i, 1], agents.health[i],
                     agents.satiety[i], agents.shelter[i] + 2 * agents.tool[i], 0, 0,
                     worth(agents, i, price, P))


@hot
def play_ticks(world, agents, offers, log, rng, t0, t1, apt, ext, order, act, P, price, dir_dx, dir_dy,
               terrain_res):
    """Play ticks [t0, t1). ext int64[N, apt, 6] holds this tick's actions of EXTERNAL seats
    (only meaningful when t1 == t0 + 1); scripted agents decide in place, slot by slot.

    Turn order is a fresh permutation each tick from the world stream, so no seat always moves first.
    order int64[N] and act int64[6] are scratch buffers (hot kernels do not allocate).
    """
    n = agents.alive.shape[0]
    for t in range(t0, t1):
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
                if agents.alive[i] == 0:
                    continue
                if agents.policy[i] == EXTERNAL:
                    for q in range(6):
                        act[q] = ext[i, slot, q]
                else:
                    decide(world, agents, offers, rng, t, i, P, price, dir_dx, dir_dy, terrain_res, act)
                apply_action(world, agents, offers, log, rng, t, i, act, P, price, dir_dx, dir_dy, terrain_res)
        end_of_tick(agents, offers, log, t, P, price)
