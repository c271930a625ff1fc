"""A run's kind, from its scenario id: the world, or one of the arena games the engine's
registry names. The run path asks the kind what differs (admission, whether the dispatcher
chunks its runs) instead of forking on the id; this is the one place that tells them apart."""
from __future__ import annotations

from engine.arena.games import GAMES
from orchestrator.runs.kinds.arena import Arena
from orchestrator.runs.kinds.world import WORLD, World

ARENAS = {game_id: Arena(game) for game_id, game in GAMES.items()}


def of(scenario_id: str) -> World | Arena:
    return ARENAS.get(scenario_id, WORLD)
