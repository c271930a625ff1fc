"""validate_env: the env check shared by scenarios and (next issue) per-run env overrides."""
from __future__ import annotations

import pytest

from orchestrator.envspec import SEED_MAX, validate_env
from orchestrator.errors import DomainError


def test_env_is_returned_exactly_as_given():
    env = {"seed": 0, "spawn_seed": SEED_MAX, "turn_timeout_ms": 5000, "actions_per_turn": 5,
           "resources": {"food": {"max": 1, "regen": 0.5}, "relics": {}}, "anchors": ["random", "random"]}
    out = validate_env(env)
    assert out == env
    assert type(out["resources"]["food"]["max"]) is int  # ints stay ints, floats stay floats
    assert validate_env({}) == {}


@pytest.mark.parametrize("env,path", [
    ({"seed": -1}, "env.seed"), ({"spawn_seed": 1.5}, "env.spawn_seed"), ({"actions_per_turn": 6}, "env.actions_per_turn"),
    ({"resources": {"wood": {"regen": 10.5}}}, "env.resources.wood.regen"), ({"anchors": ["x"]}, "env.anchors"),
    ({"unknown": 1}, "env.unknown"), ([], "env"),
])
def test_every_failure_is_bad_env_naming_the_path(env, path):
    with pytest.raises(DomainError) as e:
        validate_env(env)
    assert e.value.code == "bad_env" and e.value.status == 400
    assert e.value.message.startswith(path)
