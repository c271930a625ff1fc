"""Connect Four on bitboards (Pascal Pons' layout), compiled with numba.

A position is two int64 bitboards: `pos`, the stones of the side to move, and `mask`, every stone.
Column c owns bits c*7 .. c*7+5 (bottom to top); bit c*7+6 stays empty so shifts never carry from
one column into the next. 49 bits in all, so int64 holds everything and right shifts only ever see
non-negative values.
"""
from __future__ import annotations

import numpy as np
from engine.kernels.jit import alloc

WIDTH, HEIGHT = 7, 6
H1 = HEIGHT + 1
CELLS = WIDTH * HEIGHT
BOTTOM = 0
for _c in range(WIDTH):
    BOTTOM |= 1 << (_c * H1)
BOARD = BOTTOM * ((1 << HEIGHT) - 1)
MIN_SCORE = -(CELLS // 2) + 3
MAX_SCORE = (CELLS + 1) // 2 - 3
ORDER = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)  # centre first: better cut-offs


@alloc
def top_bit(c):
    return np.int64(1) << np.int64(HEIGHT - 1 + c * H1)


@alloc
def bottom_bit(c):
    return np.int64(1) << np.int64(c * H1)


@alloc
def column_bits(c):
    return np.int64((1 << HEIGHT) - 1) << np.int64(c * H1)


@alloc
def can_play(mask, c):
    return (mask & top_bit(c)) == 0


@alloc
def popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@alloc
def winning_cells(pos, mask):
    """Empty cells that would complete four for the stones in `pos`."""
    r = (pos << 1) & (pos << 2) & (pos << 3)
    for s in (H1, HEIGHT, HEIGHT + 2):  # horizontal, and the two diagonals
        p = (pos << s) & (pos << 2 * s)
        r |= p & (pos << 3 * s)
        r |= p & (pos >> s)
        p = (pos >> s) & (pos >> 2 * s)
        r |= p & (pos << s)
        r |= p & (pos >> 3 * s)
    return r & (np.int64(BOARD) ^ mask)


@alloc
def possible(mask):
    return (mask + np.int64(BOTTOM)) & np.int64(BOARD)


@alloc
def is_winning_move(pos, mask, c):
    return (winning_cells(pos, mask) & possible(mask) & column_bits(c)) != 0


@alloc
def play(pos, mask, c):
    """Drop the mover's disc in column c; returns the position seen by the other side."""
    return pos ^ mask, mask | (mask + bottom_bit(c))


@alloc
def four_in_row(p):
    """Whether the bitboard p holds four in a row."""
    for s in (1, H1, HEIGHT, HEIGHT + 2):
        m = p & (p >> s)
        if m & (m >> 2 * s):
            return True
    return False


def from_moves(columns) -> tuple[int, int, int]:
    """(pos, mask, plies) after playing the 0-based columns in order (legality checked by the caller)."""
    pos = mask = 0
    for c in columns:
        pos, mask = int(pos ^ mask), int(mask | (mask + (1 << (c * H1))))
    return pos, mask, len(columns)


def grid(columns) -> list[list[int]]:
    """6 rows top to bottom of 7 cells: 0 empty, 1 the first player's disc, 2 the second's."""
    rows = [[0] * WIDTH for _ in range(HEIGHT)]
    heights = [0] * WIDTH
    for i, c in enumerate(columns):
        rows[HEIGHT - 1 - heights[c]][c] = 1 + i % 2
        heights[c] += 1
    return rows


def column_full(mask: int, c: int) -> bool:
    return bool(mask & (1 << (HEIGHT - 1 + c * H1)))


def from_grid(rows: list[list[int]]) -> tuple[int, int, int]:
    """(pos, mask, plies) of a grid as `grid` draws it (1 the first player's discs, 2 the second's)."""
    first = mask = 0
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if v:
                bit = 1 << (c * H1 + HEIGHT - 1 - r)
                mask |= bit
                if v == 1:
                    first |= bit
    plies = bin(mask).count("1")
    return (first if plies % 2 == 0 else first ^ mask), mask, plies
