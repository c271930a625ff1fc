"""Two-seat arena games beside the world: chess and Connect Four, every move graded by an oracle.

The games, one module each, and their registry (the games package), what a game declares (`Game`),
the play loop, the oracles (Stockfish over UCI; a perfect Connect Four solver) and the results object.
No store, no HTTP.
"""
