"""The world's rules at admission: a library scenario or one of the account's saved ones, every seat
resolved by the seat layer, the world's env and seeds, the engine's speed for the estimate.

`Scenario` is what admission resolves an id to, whatever its kind; an
arena game takes the same shape.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import library
from engine.anchors import expand as expand_anchors
from engine.hashing import BASE_ID, content_hash
from engine.scenario import resolve_env
from orchestrator import scenarios as saved_scenarios
from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs.kinds.observations import world_observations
from orchestrator.seats.prompt import compose_directions, system_prompt
from orchestrator.seats.seat import resolve_provider

SCRIPTED_STEPS_PER_S = 2_000_000  # conservative engine speed for wall-clock estimates


@dataclass
class Scenario:
    id: str
    base: str           # the base its effective hash is computed over
    hash: str           # the scenario's own content hash
    season_ticks: int
    env: dict
    seed_policy: str
    roster: dict | None  # library roster bounds
    kind: Any            # its rules at admission: WORLD or an arena game's


class World:
    in_chunks = True  # a deep queue of its small scripted runs goes to the workers in chunks
    resumable = True  # a model run that lost its worker replays its recorded turns and plays on
    grades_decisions = True  # its seats' decisions are graded after the match

    def scenario(self, core: Core, principal: Principal, scenario_id: str, console: bool) -> Scenario:
        d = library.definition(scenario_id)
        if d is not None:
            return Scenario(id=scenario_id, base=scenario_id, hash=library.entry(scenario_id)["hash"],
                            season_ticks=d["season_ticks"], env=d["env"], seed_policy=d["seed_policy"],
                            roster=d["roster"], kind=self)
        if scenario_id.startswith("usc_"):
            try:
                view = saved_scenarios.load(core, principal, scenario_id)
            except DomainError:
                view = None
            if view is not None:
                return Scenario(id=scenario_id, base=BASE_ID, hash=view["hash"], season_ticks=view["season_ticks"],
                                env=view["env"], seed_policy="drawn", roster=None, kind=self)
        raise DomainError("bad_scenario", f"scenario_id '{scenario_id}' names nothing launchable; send a library id "
                          "(GET /api/v1/library/scenarios) or one of your saved scenario ids (usc_...)")

    def check_body(self, body: dict) -> None:
        """Every world body field is checked by check_run_body already."""

    def system_text(self, seat: dict) -> str:
        """What a model seat of this kind is told before its first turn (its system prompt)."""
        return system_prompt(seat.get("format") or "tools",
                             compose_directions(seat.get("skills") or [], seat.get("instructions")))

    def observations(self, core: Core, row, seats: set[int]) -> dict[tuple[int, int], str]:
        """{(tick, seat): what the seat was shown}, rebuilt for an ended match."""
        return world_observations(core, row, seats)

    def provider(self, k: int, seat: dict) -> str:
        return resolve_provider(k, seat)[0]

    def effective(self, scen: Scenario, season_ticks: int, env: dict, seeds: dict, trial: int) -> dict:
        resolved = resolve_env(env)
        resolved["seed"], resolved["spawn_seed"] = seeds["seed"], seeds["spawn_seed"]
        return {"season_ticks": season_ticks, "env": resolved, **seeds,
                "hash": content_hash(scen.base, season_ticks, resolved)}

    def funded(self, seats: list[dict]) -> list[dict]:
        """The seats the launch's funding check sets: every one (local policies are free there)."""
        return seats

    def span_ms(self, adm, waves: int) -> dict:
        """Scripted seasons at engine speed; model seats between 0.5 s and the turn timeout per tick."""
        if adm.scripted:
            field_size = len(adm.seats) + len(expand_anchors(adm.trial_envs[0]["env"]["anchors"]))
            per = 1000 * adm.season_ticks * field_size / SCRIPTED_STEPS_PER_S + 50
            return {"low": round(per * waves), "high": round(5 * per * waves + 2000)}
        timeout = adm.trial_envs[0]["env"]["turn_timeout_ms"]
        return {"low": round(500 * adm.season_ticks * waves), "high": round(timeout * adm.season_ticks * waves)}


WORLD = World()
