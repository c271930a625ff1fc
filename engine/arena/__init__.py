"""Two-seat arena games beside the world: chess and Connect Four, every move graded by an oracle.

Rules (python-chess; Connect Four bitboards in numba), scripted seats, the play loop, the oracles
(Stockfish over UCI; a perfect Connect Four solver) and the results object. No store, no HTTP.
"""
from engine.arena.games import CHESS, CONNECT_FOUR, GAMES

__all__ = ["CHESS", "CONNECT_FOUR", "GAMES"]
