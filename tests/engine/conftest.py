import numpy as np
import pytest

from engine.match import AgentSpec, Match, MatchConfig
from engine.scenario import build_match, resolve_env, seat_specs


def make_match(ticks=300, seed=11, spawn_seed=22, seats=("local/honest-trader", "local/random"),
               anchors=("anchors-v1",), **env_over) -> Match:
    env = resolve_env({"anchors": list(anchors), **env_over})
    env["seed"], env["spawn_seed"] = seed, spawn_seed
    return build_match(ticks, env, seat_specs(list(seats)))


def external_match(n=2, ticks=50, apt=2, seed=5, spawn_seed=6, resources=None) -> Match:
    """n seats played from outside, no anchors: the tests place and equip them by hand."""
    agents = [AgentSpec(name=f"s{i}", model="test/model") for i in range(n)]
    return Match(MatchConfig(season_ticks=ticks, seed=seed, spawn_seed=spawn_seed, actions_per_turn=apt,
                             resources=resources or {}, agents=agents))


def place(m: Match, i: int, x: int, y: int) -> None:
    m.world.terrain[y, x] = 0  # grass: nothing to gather, never water
    m.agents.pos[i] = (x, y)


def last_event(m: Match, agent: int) -> dict:
    cols = m.columns()
    rows = np.nonzero(cols["agent"] == agent)[0]
    r = rows[-1]
    return {k: (v[r].item() if hasattr(v[r], "item") else v[r]) for k, v in cols.items()}


@pytest.fixture
def ext2():
    return external_match()
