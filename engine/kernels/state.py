"""Match state as struct-of-arrays, grouped in NamedTuples the kernels take whole."""
from typing import NamedTuple

import numpy as np

from engine.kernels.codes import N_RES


class World(NamedTuple):
    terrain: np.ndarray   # uint8[H, W]
    pool: np.ndarray      # float64[H, W]  amount at the last write
    touched: np.ndarray   # int64[H, W]    tick of the last write (regrowth is computed lazily)
    cap: np.ndarray       # float64[H, W]  pool size (base max x multiplier)
    regen: np.ndarray     # float64[H, W]  regrowth per tick (base regen x multiplier)


class Agents(NamedTuple):
    pos: np.ndarray       # int64[N, 2] (x, y)
    health: np.ndarray    # int64[N]
    satiety: np.ndarray   # int64[N]
    inv: np.ndarray       # int64[N, R]
    shelter: np.ndarray   # int64[N] 0/1
    tool: np.ndarray      # int64[N] 0/1
    alive: np.ndarray     # int64[N] 0/1
    death_tick: np.ndarray  # int64[N], -1 while alive
    policy: np.ndarray    # int64[N] policy code, EXTERNAL for model seats
    mem: np.ndarray       # int64[N, 4] policy memory: target x, target y, target resource, spare


class Offers(NamedTuple):
    oid: np.ndarray       # int64[K] offer id, -1 for a free slot
    src: np.ndarray       # int64[K]
    dst: np.ndarray       # int64[K]
    give_r: np.ndarray    # int64[K]
    give_q: np.ndarray    # int64[K]
    want_r: np.ndarray    # int64[K]
    want_q: np.ndarray    # int64[K]
    expires: np.ndarray   # int64[K] tick at whose end the offer lapses
    next_id: np.ndarray   # int64[1]


class Log(NamedTuple):
    tick: np.ndarray      # int32[C]
    agent: np.ndarray     # int32[C], -1 for match-wide events
    kind: np.ndarray      # int8[C]  index into EVENT_KINDS
    ok: np.ndarray        # int8[C]  1 applied, 0 refused
    reason: np.ndarray    # int8[C]  index into REASONS
    a: np.ndarray         # int32[C] ... e: the action's arguments as submitted (or event fields)
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    e: np.ndarray
    f: np.ndarray         # int32[C] outcome fields
    g: np.ndarray
    v: np.ndarray         # float64[C] outcome value (net worth, goods taken)
    n: np.ndarray         # int64[1] rows written


LOG_INT_COLUMNS = ("a", "b", "c", "d", "e", "f", "g")


def new_world(side: int) -> World:
    return World(
        terrain=np.zeros((side, side), dtype=np.uint8),
        pool=np.zeros((side, side), dtype=np.float64),
        touched=np.zeros((side, side), dtype=np.int64),
        cap=np.zeros((side, side), dtype=np.float64),
        regen=np.zeros((side, side), dtype=np.float64),
    )


def new_agents(policies: np.ndarray, health: int, satiety: int, food: int) -> Agents:
    n = len(policies)
    inv = np.zeros((n, N_RES), dtype=np.int64)
    inv[:, 2] = food
    return Agents(
        pos=np.zeros((n, 2), dtype=np.int64),
        health=np.full(n, health, dtype=np.int64),
        satiety=np.full(n, satiety, dtype=np.int64),
        inv=inv,
        shelter=np.zeros(n, dtype=np.int64),
        tool=np.zeros(n, dtype=np.int64),
        alive=np.ones(n, dtype=np.int64),
        death_tick=np.full(n, -1, dtype=np.int64),
        policy=np.asarray(policies, dtype=np.int64).copy(),
        mem=np.full((n, 4), -1, dtype=np.int64),
    )


def new_offers(slots: int) -> Offers:
    z = lambda: np.zeros(slots, dtype=np.int64)  # noqa: E731
    return Offers(oid=np.full(slots, -1, dtype=np.int64), src=z(), dst=z(), give_r=z(), give_q=z(),
                  want_r=z(), want_q=z(), expires=z(), next_id=np.zeros(1, dtype=np.int64))


def new_log(capacity: int) -> Log:
    i32 = lambda: np.empty(capacity, dtype=np.int32)  # noqa: E731
    i8 = lambda: np.empty(capacity, dtype=np.int8)  # noqa: E731
    return Log(tick=i32(), agent=i32(), kind=i8(), ok=i8(), reason=i8(), a=i32(), b=i32(), c=i32(),
               d=i32(), e=i32(), f=i32(), g=i32(), v=np.empty(capacity, dtype=np.float64),
               n=np.zeros(1, dtype=np.int64))


def log_capacity(ticks: int, n_agents: int, actions_per_turn: int) -> int:
    """Rows a season can write at most: every slot acts, each offer later lapses once, each agent
    gets hunger/snapshot rows each tick, plus the header, spawns and the closing rows."""
    per_agent_tick = 3 * actions_per_turn + 2
    return ticks * n_agents * per_agent_tick + 4 * n_agents + 8
