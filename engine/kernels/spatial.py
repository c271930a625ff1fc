"""Bit tables that let the policies' searches skip what cannot match, in the same scan order.

- Terrain masks, int64[N_RES + 1, 2, L, words]: [r, 0, y] has bit x set when tile (x, y) holds
  resource r, [r, 1, x] has bit y set; r = N_RES stands for any resource. The ring search of
  _nearest_tile reads a whole side of a ring as a few words instead of testing tile by tile.
- Agent cells, int64[blocks down, blocks across, words]: bit j is set while agent j stands in
  that CELL x CELL block. A search within chebyshev range of an agent ORs the blocks the range
  touches and visits their agents in index order, which is the order of a scan of the whole field.
Both are rebuilt at the start of every play_ticks call (the tables may be edited between calls);
agents' moves keep the cells in step during play.
"""
import numpy as np

from engine.kernels.codes import A_X, A_Y, N_RES
from engine.kernels.jit import hot
from engine.rules import TERRAIN_RES

CELL_SHIFT = 3  # blocks of 8 x 8 tiles: the offer range (6) touches at most 3 x 3 of them
ONE = np.int64(1)


def mask_shape(side: int) -> tuple:
    return (N_RES + 1, 2, side, (side + 63) // 64)


def cell_shape(side: int, n_agents: int) -> tuple:
    blocks = (side + (1 << CELL_SHIFT) - 1) >> CELL_SHIFT
    return (blocks, blocks, (n_agents + 63) // 64)


@hot
def build_masks(terrain, masks):
    masks[:] = 0
    H, W = terrain.shape
    for y in range(H):
        for x in range(W):
            r = TERRAIN_RES[terrain[y, x]]
            if r >= 0:
                masks[r, 0, y, x >> 6] |= ONE << (x & 63)
                masks[r, 1, x, y >> 6] |= ONE << (y & 63)
                masks[N_RES, 0, y, x >> 6] |= ONE << (x & 63)
                masks[N_RES, 1, x, y >> 6] |= ONE << (y & 63)


@hot
def span(masks, r, o, line, lo, n):
    """n (< 64) bits of masks[r, o, line] from bit lo on, as bits 0..n-1; bits before 0 or past the
    line's end read as 0."""
    shift = 0
    if lo < 0:
        shift = -lo
        n -= shift
        lo = 0
        if n <= 0:
            return np.int64(0)
    words = masks.shape[3]
    w = lo >> 6
    if w >= words:
        return np.int64(0)
    b = lo & 63
    v = masks[r, o, line, w]
    if b > 0:
        v = (v >> b) & ((ONE << (64 - b)) - 1)  # a logical shift: bit 63 may be set
        if w + 1 < words:
            v |= masks[r, o, line, w + 1] << (64 - b)
    return (v & ((ONE << n) - 1)) << shift


@hot
def build_cells(ag, cells):
    cells[:] = 0
    for j in range(ag.shape[0]):
        cells[ag[j, A_Y] >> CELL_SHIFT, ag[j, A_X] >> CELL_SHIFT, j >> 6] |= ONE << (j & 63)


@hot
def move_cell(cells, j, x0, y0, x1, y1):
    """Agent j stepped from (x0, y0) to (x1, y1)."""
    bx0, by0, bx1, by1 = x0 >> CELL_SHIFT, y0 >> CELL_SHIFT, x1 >> CELL_SHIFT, y1 >> CELL_SHIFT
    if bx0 != bx1 or by0 != by1:
        bit = ONE << (j & 63)
        cells[by0, bx0, j >> 6] &= ~bit
        cells[by1, bx1, j >> 6] |= bit


@hot
def near_word(cells, x, y, reach, w):
    """Word w of the agents standing in the blocks within `reach` tiles (chebyshev) of (x, y): a
    superset of the agents in range; the caller tests each."""
    last = cells.shape[0] - 1
    by0 = max(0, (y - reach) >> CELL_SHIFT)
    by1 = min(last, (y + reach) >> CELL_SHIFT)
    bx0 = max(0, (x - reach) >> CELL_SHIFT)
    bx1 = min(cells.shape[1] - 1, (x + reach) >> CELL_SHIFT)
    v = np.int64(0)
    for by in range(by0, by1 + 1):
        for bx in range(bx0, bx1 + 1):
            v |= cells[by, bx, w]
    return v
