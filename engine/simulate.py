"""`studio simulate`: one match in-process, no server, scripted seats only."""
from __future__ import annotations

from engine import library
from engine.anchors import AnchorError
from engine.scenario import build_match, draw_seed, resolve_env, seat_specs


class SimulateError(ValueError):
    pass


def simulate(scenario: str | dict, *, seed: int | None = None, spawn_seed: int | None = None,
             ticks: int | None = None, anchors: list[str] | None = None, seats: list[str] | None = None,
             with_match: bool = False):
    """Play one match. scenario: a library id, or a definition {season_ticks, env}.

    Returns the results object (and the Match when with_match)."""
    if isinstance(scenario, str):
        definition = library.definition(scenario)
        if definition is None:
            raise SimulateError(f"unknown scenario '{scenario}'; library ids: {', '.join(library.LIBRARY)}")
        if definition["seed_policy"] == "fixed" and seed is not None:
            raise SimulateError(f"{scenario} plays a fixed map; --seed cannot override it")
    else:
        definition = scenario
    env = resolve_env(definition.get("env"))
    if anchors is not None:
        env["anchors"] = [a for a in anchors if a]
    for key, value in (("seed", seed), ("spawn_seed", spawn_seed)):
        if value is not None:
            env[key] = value
        if env[key] is None:
            env[key] = draw_seed()
    season = ticks if ticks is not None else (definition.get("season_ticks") or 300)
    if not 10 <= season <= 2000:
        raise SimulateError("--ticks must lie in 10..2000")
    seats = seats or []
    bad = [s for s in seats if not s.startswith("local/")]
    if bad:
        raise SimulateError(f"simulate plays local/<policy> seats only, not {', '.join(bad)}")
    try:
        field = seat_specs(seats)
        match = build_match(season, env, field)
    except (AnchorError, ValueError) as e:
        raise SimulateError(str(e)) from e
    match.run()
    results = match.results()
    results["effective"] = {"season_ticks": season, "seed": env["seed"], "spawn_seed": env["spawn_seed"]}
    return (results, match) if with_match else results
