"""From a scenario definition (season_ticks, env) to a ready Match: defaults, seeds, the field."""
from __future__ import annotations

import secrets

from engine import anchors as anchor_lib
from engine import rules
from engine.match import AgentSpec, Match, MatchConfig

DEFAULT_ANCHORS = ["anchors-v1"]


def draw_seed() -> int:
    return secrets.randbelow(rules.SEED_MAX + 1)


def resolve_env(env: dict | None) -> dict:
    """Every env field resolved: the given values over the base world's defaults. Seeds left out stay
    None here; the caller draws them and records where they came from."""
    env = dict(env or {})
    resources = {}
    for name in rules.RESOURCES:
        given = (env.get("resources") or {}).get(name, {})
        resources[name] = {"max": given.get("max", 1), "regen": given.get("regen", 1)}
    return {
        "seed": env.get("seed"),
        "spawn_seed": env.get("spawn_seed"),
        "turn_timeout_ms": env.get("turn_timeout_ms", rules.WORLD["turn_timeout_ms"]),
        "actions_per_turn": env.get("actions_per_turn", rules.WORLD["actions_per_turn"]),
        "resources": resources,
        "anchors": list(env["anchors"]) if "anchors" in env else list(DEFAULT_ANCHORS),
    }


def local_policy(model: str) -> str | None:
    """The scripted policy a `local/<policy>` model names (known or not), else None."""
    return model.split("/", 1)[1] if model.startswith("local/") else None


def seat_names(models: list[str], names: list[str | None] | None = None) -> list[str]:
    """Each seat's name: the one given, else the model's last path part, numbered when repeated."""
    out, used = [], {}
    for model, name in zip(models, names or [None] * len(models)):
        base = name or model.rsplit("/", 1)[-1]
        used[base] = used.get(base, 0) + 1
        out.append(base if name or used[base] == 1 else f"{base} {used[base]}")
    return out


def seat_specs(models: list[str], names: list[str | None] | None = None) -> list[AgentSpec]:
    """Roster seats: `local/<policy>` seats are scripted, anything else is played from outside."""
    policy_of = {}  # each distinct model read once: a large field repeats a few models
    for model in dict.fromkeys(models):
        policy = local_policy(model)
        if policy is not None and policy not in rules.POLICIES:
            raise ValueError(f"unknown local policy '{policy}'; known: {', '.join(rules.POLICIES)}")
        policy_of[model] = policy
    return [AgentSpec(name, model, policy_of[model]) for model, name in zip(models, seat_names(models, names))]


def anchor_specs(anchor_ids: list[str]) -> list[AgentSpec]:
    policies = anchor_lib.expand(anchor_ids)
    count: dict[str, int] = {}
    out = []
    for p in policies:
        count[p] = count.get(p, 0) + 1
        out.append(AgentSpec(name=f"{p} #{count[p]}", model=f"anchor/{p}", policy=p, anchor=True))
    return out


def build_match(season_ticks: int, env: dict, seats: list[AgentSpec]) -> Match:
    """env must be resolved with both seeds set (resolve_env, then seeds filled)."""
    field = list(seats) + anchor_specs(env["anchors"])
    return Match(MatchConfig(season_ticks=season_ticks, seed=env["seed"], spawn_seed=env["spawn_seed"],
                             actions_per_turn=env["actions_per_turn"],
                             resources=env["resources"], agents=field))
