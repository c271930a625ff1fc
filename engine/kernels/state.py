"""Match state: a few packed tables the kernels take, and NamedTuples of named views over them.

Kernels get the tables (few arrays per call: every call passes them all by value); Python code and
tests read and write through the views (World, Agents, Offers), which share the same memory.
"""
from typing import NamedTuple

import numpy as np

from engine.kernels.codes import (
    A_ALIVE, A_COLS, A_DEATH, A_HEALTH, A_INV, A_MEM, A_POLICY, A_SATIETY, A_SHELTER, A_TOOL, A_X,
    N_RES, O_DST, O_EXPIRES, O_GIVE_Q, O_GIVE_R, O_ID, O_SRC,
    O_WANT_Q, O_WANT_R, OC_BOX, OC_IN, OC_OUT, T_CAP, T_POOL, T_REGEN, T_TOUCHED,
)


class Tables(NamedTuple):
    terrain: np.ndarray   # uint8[H, W]
    tiles: np.ndarray     # float64[H, W, 4]: pool at last write, tick of last write, pool size, regrowth
    ag: np.ndarray        # int64[N, A_COLS]
    offers: np.ndarray    # int64[K, 8], O_ID -1 marks a free slot
    ocount: np.ndarray    # int64[N, 2 + ceil(K / 64)]: open offers in, out, then the inbox bits
    logi: np.ndarray      # int32[C, 12]
    logv: np.ndarray      # float64[C]
    meta: np.ndarray      # int64[2]: rows written, next offer id


class World(NamedTuple):
    terrain: np.ndarray
    pool: np.ndarray      # float64[H, W] amount at the last write (regrowth is computed lazily)
    touched: np.ndarray   # float64[H, W] tick of the last write
    cap: np.ndarray       # float64[H, W] pool size (base max x multiplier)
    regen: np.ndarray     # float64[H, W] regrowth per tick (base regen x multiplier)


class Agents(NamedTuple):
    pos: np.ndarray       # int64[N, 2] (x, y)
    health: np.ndarray
    satiety: np.ndarray
    inv: np.ndarray       # int64[N, R]
    shelter: np.ndarray
    tool: np.ndarray
    alive: np.ndarray
    death_tick: np.ndarray
    policy: np.ndarray    # policy code, EXTERNAL for seats played from outside
    mem: np.ndarray       # int64[N, 6] scripted policies' memory


class Offers(NamedTuple):
    oid: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    give_r: np.ndarray
    give_q: np.ndarray
    want_r: np.ndarray
    want_q: np.ndarray
    expires: np.ndarray
    inbox: np.ndarray
    outbox: np.ndarray


def new_tables(side: int, policies: np.ndarray, health: int, satiety: int, food: int, offer_slots: int,
               log_rows: int) -> Tables:
    n = len(policies)
    ag = np.zeros((n, A_COLS), dtype=np.int64)
    ag[:, A_HEALTH] = health
    ag[:, A_SATIETY] = satiety
    ag[:, A_INV + 2] = food
    ag[:, A_ALIVE] = 1
    ag[:, A_DEATH] = -1
    ag[:, A_POLICY] = policies
    ag[:, A_MEM:] = -1
    offers = np.zeros((offer_slots, 8), dtype=np.int64)
    offers[:, O_ID] = -1
    return Tables(terrain=np.zeros((side, side), dtype=np.uint8), tiles=np.zeros((side, side, 4)), ag=ag,
                  offers=offers, ocount=np.zeros((n, OC_BOX + (offer_slots + 63) // 64), dtype=np.int64),
                  logi=np.empty((log_rows, 12), dtype=np.int32), logv=np.empty(log_rows, dtype=np.float64),
                  meta=np.zeros(2, dtype=np.int64))


def world_view(t: Tables) -> World:
    return World(t.terrain, t.tiles[:, :, T_POOL], t.tiles[:, :, T_TOUCHED], t.tiles[:, :, T_CAP],
                 t.tiles[:, :, T_REGEN])


def agents_view(t: Tables) -> Agents:
    ag = t.ag
    return Agents(ag[:, A_X:A_X + 2], ag[:, A_HEALTH], ag[:, A_SATIETY], ag[:, A_INV:A_INV + N_RES],
                  ag[:, A_SHELTER], ag[:, A_TOOL], ag[:, A_ALIVE], ag[:, A_DEATH], ag[:, A_POLICY], ag[:, A_MEM:])


def offers_view(t: Tables) -> Offers:
    o = t.offers
    return Offers(o[:, O_ID], o[:, O_SRC], o[:, O_DST], o[:, O_GIVE_R], o[:, O_GIVE_Q], o[:, O_WANT_R],
                  o[:, O_WANT_Q], o[:, O_EXPIRES], t.ocount[:, OC_IN], t.ocount[:, OC_OUT])


LOG_INT_COLUMNS = ("tick", "agent", "kind", "ok", "reason", "a", "b", "c", "d", "e", "f", "g")
LOG_DTYPES = {"kind": np.int8, "ok": np.int8, "reason": np.int8}


def log_capacity(ticks: int, n_agents: int, actions_per_turn: int) -> int:
    """Rows a season can write at most: each action one row, each accept at most one voided-offer row,
    each offer one lapse row, plus a starve and a snapshot row per agent-tick, the header, spawns and
    the closing rows."""
    per_agent_tick = 3 * actions_per_turn + 2
    return ticks * n_agents * per_agent_tick + 4 * n_agents + 8
