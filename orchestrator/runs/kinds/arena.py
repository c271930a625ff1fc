"""An arena game's rules at admission (docs/ARENA.md); the game's own facts come from its
module in the engine's games registry.

Arena ids launch only from the web console's caller; REST and MCP are told so with bad_scenario.
A game's "season" is its longest possible game counted in moves per seat: agent turns are reserved
for that and settled as moves answered.
"""
from __future__ import annotations

from engine.arena.game import Game
from engine.hashing import content_hash
from engine.rules import ARENA_TURN_TIMEOUT_MS
from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.play import arena_seats
from orchestrator.runs.kinds.world import Scenario
from orchestrator.provider_kinds import LOCAL
from orchestrator.seats.seat import ROUTED, seat_label

ENV_FIELDS = ("seed", "turn_timeout_ms")
TURN_TIMEOUT_MS = ARENA_TURN_TIMEOUT_MS


class Arena:
    in_chunks = False  # a game costs its oracle's search, not agents x ticks, and varies too much to chunk
    resumable = False  # an arena game that lost its worker fails keeping what was metered (no replay yet)
    grades_decisions = False  # a game keeps its own oracle; no decision grading

    def __init__(self, game: Game):
        self.game = game

    def scenario(self, core: Core, principal: Principal, scenario_id: str, console: bool) -> Scenario:
        if not console:
            raise DomainError("bad_scenario", f"{scenario_id} is an arena game: arena games launch from the web "
                              "console's game picker (/console/arena), not through the API or MCP; their runs are "
                              "read through the same endpoints")
        why = self.game.unavailable()
        if why:
            raise DomainError("bad_scenario", f"{scenario_id} is unavailable on this server: {why}")
        ticks = self.game.moves_per_seat
        return Scenario(id=scenario_id, base=scenario_id, hash=content_hash(scenario_id, ticks, {}),
                        season_ticks=ticks, env={}, seed_policy="drawn",
                        roster={"min_agents": 2, "max_agents": 2}, kind=self)

    def check_body(self, body: dict) -> None:
        if "season_ticks" in body:
            raise DomainError("bad_season_ticks", "arena games end by their own rules; drop season_ticks")
        extra = sorted(set(body.get("env") or {}) - set(ENV_FIELDS))
        if extra:
            raise DomainError("bad_env", f"arena games take only env.seed and env.turn_timeout_ms, not "
                              f"{', '.join(extra)}")
        if len(body["roster"]) != 2:
            raise DomainError("bad_roster", f"an arena game takes exactly 2 seats; the roster has "
                              f"{len(body['roster'])}")

    def system_text(self, seat: dict) -> str:
        return arena_seats.system_text(seat)

    def observations(self, core: Core, row, seats: set[int]) -> dict[tuple[int, int], str]:
        """A game's positions are not rebuilt into the texts its seats read: none (docs/FORMATS.md)."""
        return {}

    def provider(self, k: int, seat: dict) -> str:
        """The world's providers, but `local` seats play this game's scripted seats and no built-in
        skill (written for the world) is taken."""
        provider = seat.get("provider") or (LOCAL if seat["model"].startswith("local/") else "router")
        if provider not in ROUTED:
            raise DomainError("bad_provider", f"{seat_label(k, seat)}: provider '{provider}' is not routed; "
                              f"send one of {', '.join(ROUTED)}")
        if any(str(s).startswith("builtin:") for s in seat.get("skills") or []):
            raise DomainError("bad_roster", f"{seat_label(k, seat)}: built-in skills are written for the world and "
                              "cannot play arena games; attach your own skills")
        if provider == LOCAL:
            why = self.game.check(seat["model"])
            if why:
                raise DomainError("bad_roster", f"{seat_label(k, seat)}: {why}")
        return provider

    def effective(self, scen: Scenario, season_ticks: int, env: dict, seeds: dict, trial: int) -> dict:
        """Sides alternate in a series: seat 0 moves first in even trials, seat 1 in odd ones."""
        first = trial % 2
        env = {"seed": seeds["seed"], "spawn_seed": seeds["spawn_seed"], "first_seat": first,
               "turn_timeout_ms": env.get("turn_timeout_ms", TURN_TIMEOUT_MS)}
        return {"season_ticks": season_ticks, "env": env, **seeds, "first_seat": first,
                "hash": content_hash(scen.id, season_ticks, env)}

    def funded(self, seats: list[dict]) -> list[dict]:
        """The seats the launch's funding check sets: the model seats. The game's scripted seats are
        not world policies, and free."""
        for s in seats:
            if s["provider"] == LOCAL:
                s["funding"] = "free"
        return [s for s in seats if s["provider"] != LOCAL]

    def span_ms(self, adm, waves: int) -> dict:
        if adm.scripted:
            lo, hi = self.game.scripted_ms
            return {"low": lo * waves, "high": hi * waves}
        timeout = (adm.seats and adm.trial_envs[0]["env"].get("turn_timeout_ms")) or TURN_TIMEOUT_MS
        return {"low": 500 * adm.season_ticks * waves, "high": 2 * timeout * adm.season_ticks * waves}
