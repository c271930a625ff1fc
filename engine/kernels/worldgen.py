"""Map generation and spawn placement.

Terrain comes from two smooth value-noise fields (elevation, moisture) plus per-tile noise, all
drawn from the map seed's stream; spawns come from the spawn seed's stream alone, so the map and
the roster's landing spots can be pinned independently.
"""
import numpy as np
from engine.kernels.jit import alloc, hot

from engine.kernels.codes import (
    A_X, A_Y, BERRIES, FOREST, GRASS, ORE_VEIN, ROCK, RUINS, T_CAP, T_POOL, T_REGEN, T_TOUCHED, WATER,
)
from engine.kernels.rng import uniform
from engine.rules import TERRAIN_RES

_CELL = 8


@hot
def _smooth(t):
    return t * t * (3.0 - 2.0 * t)


@alloc
def _noise_field(rng, H, W, out):
    """Bilinear value noise on an 8-tile lattice, values in [0, 1): out float64[H, W]."""
    gh = H // _CELL + 2
    gw = W // _CELL + 2
    lattice = np.empty((gh, gw), dtype=np.float64)
    for j in range(gh):
        for i in range(gw):
            lattice[j, i] = uniform(rng, 0)
    for y in range(H):
        gy = y // _CELL
        fy = _smooth((y % _CELL) / _CELL)
        for x in range(W):
            gx = x // _CELL
            fx = _smooth((x % _CELL) / _CELL)
            a = lattice[gy, gx] * (1.0 - fx) + lattice[gy, gx + 1] * fx
            b = lattice[gy + 1, gx] * (1.0 - fx) + lattice[gy + 1, gx + 1] * fx
            out[y, x] = a * (1.0 - fy) + b * fy


@alloc
def generate(rng, terrain, tiles, res_max, res_regen, mult_max, mult_regen):
    """Fill terrain uint8[H, W] and tiles float64[H, W, 4] from the map stream rng uint64[1].

    res_* are the base table (float64[R]); mult_* the scenario's multipliers (float64[R]).
    Every pool starts full.
    """
    H, W = terrain.shape
    elev = np.empty((H, W), dtype=np.float64)
    moist = np.empty((H, W), dtype=np.float64)
    _noise_field(rng, H, W, elev)
    _noise_field(rng, H, W, moist)
    for y in range(H):
        for x in range(W):
            e = elev[y, x]
            m = moist[y, x]
            u = uniform(rng, 0)
            if e < 0.2:
                t = WATER
            elif e > 0.74:
                t = ORE_VEIN if u < 0.22 else ROCK
            elif u < 0.006:
                t = RUINS
            elif m > 0.6:
                t = FOREST
            elif m < 0.42 and u < 0.3:
                t = BERRIES
            elif u < 0.04:
                t = BERRIES
            else:
                t = GRASS
            terrain[y, x] = t
            r = TERRAIN_RES[t]
            tiles[y, x, T_TOUCHED] = 0.0
            if r < 0:
                tiles[y, x, T_CAP] = 0.0
                tiles[y, x, T_REGEN] = 0.0
            else:
                tiles[y, x, T_CAP] = res_max[r] * mult_max[r]
                tiles[y, x, T_REGEN] = res_regen[r] * mult_regen[r]
            tiles[y, x, T_POOL] = tiles[y, x, T_CAP]


@alloc
def place_spawns(rng, terrain, n, min_distance, ag):
    """Land n agents on distinct dry tiles, spread at least min_distance apart when room allows.

    Writes ag[:, A_X], ag[:, A_Y]. Draws only from the spawn stream rng uint64[1].
    A count of the agents landed on each tile answers "is anyone too close" from the tiles around
    a candidate instead of a pass over every agent landed so far (the answer, not who, matters).
    """
    H, W = terrain.shape
    landed = np.zeros((H, W), dtype=np.int64)
    for k in range(n):
        best_x = -1
        best_y = -1
        for attempt in range(400):
            x = np.int64(uniform(rng, 0) * W)
            y = np.int64(uniform(rng, 0) * H)
            if terrain[y, x] == WATER:
                continue
            clash = False
            reach = max(min_distance if attempt < 200 else 0, 1) - 1  # too close: chebyshev <= reach
            for yy in range(max(0, y - reach), min(H, y + reach + 1)):
                for xx in range(max(0, x - reach), min(W, x + reach + 1)):
                    if landed[yy, xx] > 0:
                        clash = True
            if not clash:
                best_x = x
                best_y = y
                break
        if best_x < 0:  # a crowded or drowned map: fall back to a scan for any free dry tile
            for y in range(H):
                for x in range(W):
                    if terrain[y, x] != WATER and best_x < 0 and landed[y, x] == 0:
                        best_x = x
                        best_y = y
        ag[k, A_X] = best_x
        ag[k, A_Y] = best_y
        if best_x >= 0:
            landed[best_y, best_x] += 1
