from analytics.archive.format import events_table
from engine.scenario import build_match, resolve_env, seat_specs

POLICY_SEATS = ("local/random", "local/honest-trader", "local/greedy-harvester", "local/aggressive-raider")


def archived(m):
    """A finished match's event log as a worker archives it, with the meta the grader reads."""
    meta = {"field": [{"name": a.name, "model": a.model, "anchor": a.anchor} for a in m.specs],
            "season_ticks": m.season_ticks, "seed": m.config.seed, "spawn_seed": m.config.spawn_seed,
            "resources": m.config.resources}
    return events_table(f"m_{m.config.seed}", m.columns(), meta, m.messages)


def new_match(seed: int, ticks: int, seats=POLICY_SEATS, spawn_seed: int | None = None, **env_over):
    env = resolve_env({"anchors": ["anchors-v1"], **env_over})
    env["seed"], env["spawn_seed"] = seed, seed + 1 if spawn_seed is None else spawn_seed
    return build_match(ticks, env, seat_specs(list(seats)))
