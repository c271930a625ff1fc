"""The arena's games, one module each, and the table that names them by id (as PufferLib keeps one
folder per environment and a table of makers). A new game is a module holding one Game
and a line here; nothing outside this package names a game."""
from __future__ import annotations

from engine.arena.game import Game
from engine.arena.games import chess, connect_four

# The console's picker lists the games in this order and checks the first: Connect Four needs
# nothing outside PyPI, so it is always playable.
GAMES: dict[str, Game] = {g.id: g for g in (connect_four.GAME, chess.GAME)}


def get(scenario_id: str) -> Game | None:
    """The arena game a scenario id names; None for the world's scenarios."""
    return GAMES.get(scenario_id)
