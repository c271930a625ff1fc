"""A perfect Connect Four solver after Pascal Pons (blog.gamesolver.org), compiled with numba.

Negamax with alpha-beta over bitboards, a transposition table of upper bounds, null-window
iterative search, losing-move pruning and threat-count move ordering. Positions with exactly 12
discs are looked up in the MIT 12-ply opening book of `bitbully-databases` (exact distances), so
early positions cost a shallow search instead of a full one.

Score (Pons): positive when the side to move wins, 22 minus the winner's disc count at the win;
0 a draw. The table holds exact-key upper bounds, so reusing it across positions never changes a
score: results are the same whatever was solved before.
"""
from __future__ import annotations

import functools

import numpy as np
from engine.kernels.jit import alloc, cached

from engine.arena.connect4 import (CELLS, HEIGHT, MIN_SCORE, ORDER, WIDTH, can_play, column_bits, from_moves,
                                   is_winning_move, play, popcount, possible, winning_cells)

BOOK_PLIES = 12
FULL = 100  # the score array's mark for a full column
TT_SIZE = 8388617  # a prime above 2**23: the key (49 bits) is recoverable from its low 32 bits and slot


@alloc
def non_losing(pos, mask):
    """Playable cells that do not hand the opponent a win at once (0: every move loses)."""
    moves = possible(mask)
    opp = winning_cells(pos ^ mask, mask)
    forced = moves & opp
    if forced:
        if forced & (forced - 1):
            return np.int64(0)
        moves = forced
    return moves & ~(opp >> 1)


@alloc
def huffman(pos, mask, mirror):
    """bitbully-databases' 32-bit key of a 12-disc position (side to move = first player)."""
    key = np.int64(0)
    for i in range(WIDTH):
        c = WIDTH - 1 - i if mirror else i
        for r in range(HEIGHT):
            bit = np.int64(1) << np.int64(c * (HEIGHT + 1) + r)
            if not (mask & bit):
                key = key << 1
                break
            key = (key << 2) | (2 if (pos & bit) else 3)
            if r == HEIGHT - 1:
                key = key << 1
    key = key << 1
    if key >= 2 ** 31:
        key -= 2 ** 32
    return key


@alloc
def book_score(pos, mask, book_keys, book_vals):
    """The Pons score of a 12-disc position from the book, or 127 when it is not there."""
    if book_keys.shape[0] == 0:
        return 127
    for mirror in (False, True):
        k = huffman(pos, mask, mirror)
        i = np.searchsorted(book_keys, k)
        if i < book_keys.shape[0] and book_keys[i] == k:
            v = int(book_vals[i])
            if v == 0:
                return 0
            if v > 0:  # the first player (to move) wins after 100 - v more plies
                total = BOOK_PLIES + 100 - v
                return 22 - (total + 1) // 2
            total = BOOK_PLIES + 100 + v
            return -(22 - total // 2)
    return 127


@cached("int64(int64, int64, int64, int64, int64, uint32[:], uint8[:], int64[:], int8[:])")
def negamax(pos, mask, plies, alpha, beta, tt_keys, tt_vals, book_keys, book_vals):
    moves = non_losing(pos, mask)
    if moves == 0:
        return -((CELLS - plies) // 2)
    if plies >= CELLS - 2:
        return 0
    if plies == BOOK_PLIES:
        s = book_score(pos, mask, book_keys, book_vals)
        if s != 127:
            return s
    lo = -((CELLS - 2 - plies) // 2)
    if alpha < lo:
        alpha = lo
        if alpha >= beta:
            return alpha
    hi = (CELLS - 1 - plies) // 2
    key = pos + mask
    slot = key % TT_SIZE
    if tt_vals[slot] != 0 and tt_keys[slot] == np.uint32(key & 0xFFFFFFFF):
        hi = int(tt_vals[slot]) + MIN_SCORE - 1
    if beta > hi:
        beta = hi
        if alpha >= beta:
            return beta
    # order by threats created (insertion sort, stable so the centre wins ties)
    cols = np.empty(WIDTH, np.int64)
    vals = np.empty(WIDTH, np.int64)
    n = 0
    for i in range(WIDTH):
        c = ORDER[i]
        m = moves & column_bits(c)
        if m:
            v = popcount(winning_cells(pos | m, mask))
            j = n
            while j > 0 and vals[j - 1] < v:
                cols[j] = cols[j - 1]
                vals[j] = vals[j - 1]
                j -= 1
            cols[j] = c
            vals[j] = v
            n += 1
    for i in range(n):
        p2, m2 = play(pos, mask, cols[i])
        score = -negamax(p2, m2, plies + 1, -beta, -alpha, tt_keys, tt_vals, book_keys, book_vals)
        if score >= beta:
            return score
        if score > alpha:
            alpha = score
    tt_keys[slot] = np.uint32(key & 0xFFFFFFFF)
    tt_vals[slot] = np.uint8(alpha - MIN_SCORE + 1)
    return alpha


@alloc
def solve(pos, mask, plies, tt_keys, tt_vals, book_keys, book_vals):
    """The exact score of a position where nobody has four yet."""
    if winning_cells(pos, mask) & possible(mask):
        return (CELLS + 1 - plies) // 2
    lo = -((CELLS - plies) // 2)
    hi = (CELLS + 1 - plies) // 2
    while lo < hi:
        med = lo + (hi - lo) // 2
        if med <= 0 and -(-lo // 2) < med:  # C's truncating division, as in Pons' code
            med = -(-lo // 2)
        elif med >= 0 and hi // 2 > med:
            med = hi // 2
        r = negamax(pos, mask, plies, med, med + 1, tt_keys, tt_vals, book_keys, book_vals)
        if r <= med:
            hi = r
        else:
            lo = r
    return lo


@alloc
def column_scores(pos, mask, plies, tt_keys, tt_vals, book_keys, book_vals):
    """Score of playing each column, from the mover's side; FULL where the column is full."""
    out = np.full(WIDTH, FULL, np.int64)
    for c in range(WIDTH):
        if not can_play(mask, c):
            continue
        if is_winning_move(pos, mask, c):
            out[c] = (CELLS + 1 - plies) // 2
        else:
            p2, m2 = play(pos, mask, c)
            out[c] = -solve(p2, m2, plies + 1, tt_keys, tt_vals, book_keys, book_vals)
    return out


# Recursive kernels carry explicit signatures: numba's cache reloads a recursive function safely only
# when every call matches one compiled type exactly (else a segfault, numba issues 6061/6713).
@cached("int64(int64, int64, int64, int64, int64, int64)")
def shallow(pos, mask, plies, alpha, beta, depth):
    """Depth-limited search: 1 a forced win seen, -1 a forced loss, 0 nothing seen (or a draw)."""
    if winning_cells(pos, mask) & possible(mask):
        return 1
    moves = non_losing(pos, mask)
    if moves == 0:
        return -1
    if plies >= CELLS - 2 or depth == 0:
        return 0
    for i in range(WIDTH):
        c = ORDER[i]
        m = moves & column_bits(c)
        if m:
            p2, m2 = play(pos, mask, c)
            score = -shallow(p2, m2, plies + 1, -beta, -alpha, depth - 1)
            if score >= beta:
                return score
            if score > alpha:
                alpha = score
    return alpha


@alloc
def shallow_scores(pos, mask, plies, depth):
    out = np.full(WIDTH, FULL, np.int64)
    for c in range(WIDTH):
        if not can_play(mask, c):
            continue
        if is_winning_move(pos, mask, c):
            out[c] = 1
        else:
            p2, m2 = play(pos, mask, c)
            out[c] = -shallow(p2, m2, plies + 1, -1, 1, depth - 1)
    return out


@functools.lru_cache(maxsize=1)
def book() -> tuple[np.ndarray, np.ndarray]:
    """The 12-ply book with distances as sorted (int32 keys, int8 values): about 0.1 s, 21 MB."""
    from bitbully_databases import BitBullyDatabases

    raw = np.fromfile(BitBullyDatabases.get_database_path("12-ply-dist"), dtype=np.dtype([("k", ">i4"), ("v", "i1")]))
    return raw["k"].astype(np.int64), raw["v"].astype(np.int8)


class Solver:
    """One per process: the transposition table (40 MB) is reused across positions and games."""

    def __init__(self, use_book: bool = True):
        self.tt_keys = np.zeros(TT_SIZE, np.uint32)
        self.tt_vals = np.zeros(TT_SIZE, np.uint8)
        empty = (np.zeros(0, np.int64), np.zeros(0, np.int8))
        self.book_keys, self.book_vals = book() if use_book else empty
        self._early: dict[tuple[int, int], list[int]] = {}  # openings repeat across a series

    def scores(self, columns: list[int]) -> list[int | None]:
        """Exact score of each column (0-based moves so far); None where the column is full."""
        pos, mask, plies = from_moves(columns)
        key = (pos, mask)
        if plies < BOOK_PLIES and key in self._early:
            out = self._early[key]
        else:
            out = column_scores(np.int64(pos), np.int64(mask), plies, self.tt_keys, self.tt_vals,
                                self.book_keys, self.book_vals).tolist()
            if plies < BOOK_PLIES:
                self._early[key] = out
        return [None if s == FULL else int(s) for s in out]

    def score(self, columns: list[int]) -> int:
        """Exact score of the position (side to move)."""
        return self.score_position(*from_moves(columns))

    def score_position(self, pos: int, mask: int, plies: int) -> int:
        return int(solve(np.int64(pos), np.int64(mask), plies, self.tt_keys, self.tt_vals, self.book_keys,
                         self.book_vals))


def shallow_column_scores(columns: list[int], depth: int) -> list[int | None]:
    pos, mask, plies = from_moves(columns)
    out = shallow_scores(np.int64(pos), np.int64(mask), plies, depth).tolist()
    return [None if s == FULL else int(s) for s in out]
