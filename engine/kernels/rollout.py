"""Rollouts from a rebuilt state: a turn of one seat replaced by a candidate, the world played on
under scripted policies, and that seat's standing on the rubric's scale where the rollout stops.

The state before a tick comes from engine/rollouts.py's snapshots (the packed tables of state.py,
copied): a rollout copies it into work tables, so a snapshot serves every candidate and rollout.
The rubric reads counts a live state does not hold (trades, partners, raids, relics, tiles seen):
they are carried per seat as `k` int64[N_K], `partners` bool[N] and `seen` bool[side, side],
counted from the log rows as kernels/tally.py counts them (tests/grading checks the two agree).
"""
import numpy as np

from engine.kernels.codes import (
    A_ALIVE, A_DEATH, A_HEALTH, A_POLICY, ACCEPT, EXPIRE, EXTERNAL, GATHER, INVALID, L_A, L_AGENT, L_B, L_F,
    L_G, L_KIND, L_OK, META_NEXT_OFFER, META_ROWS, MOVE, NO_ACTION, RAID, RELICS, SPAWN, WAIT,
)
from engine.kernels.common import worth
from engine.kernels.jit import hot
from engine.kernels.rng import _salted
from engine.kernels.spatial import build_cells, build_masks
from engine.kernels.step import play_tick, play_ticks

K_TRADES, K_SETTLED, K_VOIDED, K_WON, K_REPELLED, K_RELICS = range(6)
N_K = 6
# The rubric's numbers a standing needs, in this order (engine/rollouts.py fills them from the rubric)
(R_W_SURVIVAL, R_W_ECONOMY, R_W_SOCIAL, R_W_COMPETITIVENESS, R_W_EXPLORATION, R_SEEN_FULL, R_HEALTH_MAX) = range(7)
N_R = 7


@hot
def _see(seen, x, y, r):
    H = seen.shape[0]
    W = seen.shape[1]
    for yy in range(max(0, y - r), min(H, y + r + 1)):
        for xx in range(max(0, x - r), min(W, x + r + 1)):
            seen[yy, xx] = True


@hot
def count_rows(logi, r0, r1, i, k, partners, seen, radius):
    """Add log rows [r0, r1) to seat i's counts, by tally.py's rules for the rows that concern i."""
    for r in range(r0, r1):
        kind = logi[r, L_KIND]
        a = logi[r, L_AGENT]
        if kind <= INVALID and logi[r, L_OK] == 0:
            continue
        if kind == SPAWN or kind == MOVE:
            if a == i:
                if kind == SPAWN:
                    _see(seen, logi[r, L_A], logi[r, L_B], radius)
                else:
                    _see(seen, logi[r, L_F], logi[r, L_G], radius)
        elif kind == GATHER:
            if a == i and logi[r, L_F] == RELICS:
                k[K_RELICS] += logi[r, L_G]
        elif kind == ACCEPT:
            src = logi[r, L_F]
            if a == i:
                k[K_TRADES] += 1
                partners[src] = True
            elif src == i:
                k[K_TRADES] += 1
                k[K_SETTLED] += 1
                partners[a] = True
        elif kind == EXPIRE:
            if a == i and logi[r, L_B] == 2:
                k[K_VOIDED] += 1
        elif kind == RAID:
            if logi[r, L_F] == 1 and logi[r, L_G] > 0:
                if a == i:
                    k[K_WON] += 1
            elif logi[r, L_F] == 0 and logi[r, L_A] == i:
                k[K_REPELLED] += 1


@hot
def _clip(x):
    return min(100.0, max(0.0, x))


@hot
def standing(ag, i, season_ticks, k, partners, seen, P, R):
    """Seat i's fitness_index (engine/rubric.py's formulas, unrounded) if the season of season_ticks
    ended with the world as it is now: a seat alive now counts as alive to the end, a dead one as dead
    from its death tick on (at the season's end this is the rubric's own figure); the whole field's
    net worth from the live tables, i's counts from k."""
    n = ag.shape[0]
    alive_ticks = season_ticks if ag[i, A_ALIVE] == 1 else ag[i, A_DEATH] + 1
    survival = 100.0 * (0.7 * alive_ticks / max(season_ticks, 1) + 0.3 * ag[i, A_HEALTH] / R[R_HEALTH_MAX])
    mine = worth(ag, i, P)
    top = 0.0
    above = 0
    for j in range(n):
        w = worth(ag, j, P)
        top = max(top, w)
        if w > mine:
            above += 1
    economy = 100.0 * mine / top if top > 0 else 0.0
    den = k[K_SETTLED] + k[K_VOIDED]
    honour = k[K_SETTLED] / den if den > 0 else 0.0
    n_partners = 0
    for j in range(n):
        if partners[j]:
            n_partners += 1
    social = 50.0 * min(k[K_TRADES], 10) / 10 + 30.0 * min(n_partners, 5) / 5 + 20.0 * honour
    stand = (n - 1 - above) / (n - 1) if n > 1 else 1.0
    competitiveness = 60.0 * stand + 40.0 * min(k[K_WON] + k[K_REPELLED], 10) / 10
    n_seen = 0
    for y in range(seen.shape[0]):
        for x in range(seen.shape[1]):
            if seen[y, x]:
                n_seen += 1
    share = n_seen / (seen.shape[0] * seen.shape[1])
    exploration = 80.0 * min(1.0, share / R[R_SEEN_FULL]) + 20.0 * min(k[K_RELICS], 3) / 3
    return (R[R_W_SURVIVAL] * _clip(survival) + R[R_W_ECONOMY] * _clip(economy) + R[R_W_SOCIAL] * _clip(social)
            + R[R_W_COMPETITIVENESS] * _clip(competitiveness) + R[R_W_EXPLORATION] * _clip(exploration))


@hot
def _copy2(dst, src):
    """dst[:] = src without the temporary copy Numba makes in case the two overlap (it needs the runtime)."""
    for y in range(src.shape[0]):
        for x in range(src.shape[1]):
            dst[y, x] = src[y, x]


@hot
def _copy3(dst, src):
    for y in range(src.shape[0]):
        _copy2(dst[y], src[y])


@hot
def _load(tiles0, ag0, offers0, ocount0, next_oid, tiles, ag, offers, ocount, meta):
    _copy3(tiles, tiles0)
    _copy2(ag, ag0)
    _copy2(offers, offers0)
    _copy2(ocount, ocount0)
    meta[META_ROWS] = 0
    meta[META_NEXT_OFFER] = next_oid


@hot
def policy_turns(terrain, tiles0, ag0, offers0, ocount0, next_oid, rng0, ext0, seat, t, policies, out, P,
                 tiles, ag, offers, ocount, logi, logv, meta, rng, ext, order, act, masks, cells):
    """out[p] int64[apt, 6]: the turn seat takes at tick t when it plays scripted policy policies[p],
    everyone else as logged (ext0) or scripted, the tick's own streams (rng0): the policy's actions as
    the log records them, refused ones included; slots it did not use stay NO_ACTION."""
    apt = ext0.shape[1]
    for p in range(policies.shape[0]):
        _load(tiles0, ag0, offers0, ocount0, next_oid, tiles, ag, offers, ocount, meta)
        for q in range(rng0.shape[0]):
            rng[q] = rng0[q]
        _copy3(ext, ext0)
        ag[seat, A_POLICY] = policies[p]
        play_ticks(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, t, t + 1, apt, ext, order, act,
                   masks, cells, P)
        for s in range(apt):
            out[p, s, 0] = NO_ACTION
            for q in range(1, 6):
                out[p, s, q] = 0
        slot = 0
        for r in range(meta[META_ROWS]):
            if logi[r, L_AGENT] == seat and logi[r, L_KIND] <= INVALID and slot < apt:
                out[p, slot, 0] = logi[r, L_KIND]
                for q in range(1, 6):
                    out[p, slot, q] = logi[r, L_A + q - 1]
                slot += 1


@hot
def rollouts(terrain, tiles0, ag0, offers0, ocount0, next_oid, acts, seat, cands, n_cands, n_roll, t, t_end, season, ref,
             own, base, k0, partners0, seen0, radius, P, R, out,
             tiles, ag, offers, ocount, logi, logv, meta, rng, ext, order, act, masks, cells, k, partners, seen):
    """out[c, r]: seat's standing at t_end, projected to a season of `season` ticks (`standing`), after
    it plays cands[c] (int64[apt, 6]) at tick t, in rollout r.

    Tick t: the other seats play their logged turns (acts[t]), anchors their policies. From t + 1 every
    seat (EXTERNAL in the rebuilt tables) plays scripted policy `ref`, except the graded seat over
    ticks t + 1 .. t + own: it plays its own logged turns there (acts[tau, seat], a wait past the log),
    the same for every candidate, so a turn is judged by what it leaves the seat's own next turns. Every stream (the world's and
    each agent's) is drawn afresh before each tick from base, the tick and r, the same for every
    candidate: common random numbers tick by tick, so two candidates' rollouts see the same turn
    orders and dice however differently they went, and differ by their own consequences, not by luck.
    k0, partners0 and seen0 are the seat's counts before tick t."""
    n = ag0.shape[0]
    apt = acts.shape[2]
    build_masks(terrain, masks)
    for r in range(n_roll):
        for c in range(n_cands):
            _load(tiles0, ag0, offers0, ocount0, next_oid, tiles, ag, offers, ocount, meta)
            build_cells(ag, cells)
            _copy3(ext, acts[t])
            for s in range(apt):
                for q in range(6):
                    ext[seat, s, q] = cands[c, s, q]
            for tau in range(t, t_end):
                if tau == t + 1:
                    for j in range(n):
                        if ag0[j, A_POLICY] == EXTERNAL and j != seat:
                            ag[j, A_POLICY] = ref
                if tau == t + own + 1:
                    ag[seat, A_POLICY] = ref
                elif tau > t:
                    for s in range(apt):
                        for q in range(6):
                            ext[seat, s, q] = acts[tau, seat, s, q] if tau < acts.shape[0] else 0
                        if tau >= acts.shape[0]:
                            ext[seat, s, 0] = WAIT if s == 0 else NO_ACTION
                stream = _salted(_salted(base, np.uint64(tau)), np.uint64(r))
                for q in range(n + 1):
                    rng[q] = _salted(stream, np.uint64(q))
                play_tick(terrain, tiles, ag, offers, ocount, logi, logv, meta, rng, tau, apt, ext, order, act,
                          masks, cells, P)
            for q in range(k0.shape[0]):
                k[q] = k0[q]
            for q in range(n):
                partners[q] = partners0[q]
            _copy2(seen, seen0)
            count_rows(logi, 0, meta[META_ROWS], seat, k, partners, seen, radius)
            out[c, r] = standing(ag, seat, season, k, partners, seen, P, R)
