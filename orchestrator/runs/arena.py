"""What admission does differently for arena games (CONTRACT.md section 11).

Arena ids launch only from the web console's caller; REST and MCP are told so with bad_scenario.
A game's "season" is its longest possible game counted in moves per seat (chess: the 200-ply cap,
Connect Four: 21 discs each): agent turns are reserved for that and settled as moves answered.
"""
from __future__ import annotations

from engine.arena import CHESS, GAMES, policies
from engine.hashing import content_hash
from orchestrator.errors import DomainError
from orchestrator.seats.player import seat_label

MOVES_PER_SEAT = {CHESS: 100, "arena:connect-four": 21}
SCRIPTED_GAME_MS = {CHESS: (5_000, 60_000), "arena:connect-four": (100, 5_000)}
ENV_FIELDS = ("seed", "turn_timeout_ms")
TURN_TIMEOUT_MS = 60_000


def scenario(game: str, console: bool):
    from orchestrator.runs.admission import Scenario

    if not console:
        raise DomainError("bad_scenario", f"{game} is an arena game: arena games launch from the web console's "
                          "game picker (/console/arena), not through the API or MCP; their runs are read through "
                          "the same endpoints")
    if game == CHESS:
        from engine.arena import stockfish

        if not stockfish.available():
            raise DomainError("bad_scenario", f"{game} is unavailable on this server: {stockfish.unavailable_message()}")
    ticks = MOVES_PER_SEAT[game]
    return Scenario(id=game, base=game, hash=content_hash(game, ticks, {}), season_ticks=ticks, env={},
                    seed_policy="drawn", roster={"min_agents": 2, "max_agents": 2})


def check_body(body: dict) -> None:
    if "season_ticks" in body:
        raise DomainError("bad_season_ticks", "arena games end by their own rules; drop season_ticks")
    extra = sorted(set(body.get("env") or {}) - set(ENV_FIELDS))
    if extra:
        raise DomainError("bad_env", f"arena games take only env.seed and env.turn_timeout_ms, not {', '.join(extra)}")
    if len(body["roster"]) != 2:
        raise DomainError("bad_roster", f"an arena game takes exactly 2 seats; the roster has {len(body['roster'])}")


def check_seat(game: str, k: int, seat: dict, provider: str) -> None:
    if any(str(s).startswith("builtin:") for s in seat.get("skills") or []):
        raise DomainError("bad_roster", f"{seat_label(k, seat)}: built-in skills are written for the world and "
                          "cannot play arena games; attach your own skills")
    if provider == "local":
        why = policies.check(game, seat["model"])
        if why:
            raise DomainError("bad_roster", f"{seat_label(k, seat)}: {why}")


def effective(game: str, ticks: int, seeds: dict, trial: int, env: dict) -> dict:
    """Sides alternate in a series: seat 0 moves first in even trials, seat 1 in odd ones."""
    first = trial % 2
    env = {"seed": seeds["seed"], "spawn_seed": seeds["spawn_seed"], "first_seat": first,
           "turn_timeout_ms": env.get("turn_timeout_ms", TURN_TIMEOUT_MS)}
    return {"season_ticks": ticks, "env": env, **seeds, "first_seat": first,
            "hash": content_hash(game, ticks, env)}


def wall_clock_ms(game: str, scripted: bool, moves_per_seat: int, waves: int, timeout_ms: int | None) -> dict:
    if scripted:
        lo, hi = SCRIPTED_GAME_MS[game]
        return {"low": lo * waves, "high": hi * waves}
    timeout = timeout_ms or 60_000
    return {"low": 500 * moves_per_seat * waves, "high": 2 * timeout * moves_per_seat * waves}
