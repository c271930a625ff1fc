"""Every tick of an archived world match as the replay page shows it: where each agent stands, whether
it lives, its health, satiety, net worth and what it holds at the end of that tick.

The log alone cannot say what an agent holds (a raid records the units and their value, not which
resources), so the logged actions are fed back through the engine (engine/replay.py: a log reproduces
itself byte for byte) and the state is read after every tick. A log the engine of today no longer
reproduces (its rules changed since the match was played) gets frames from the log's own rows instead:
positions and deaths as logged, health, satiety and net worth as of the last snapshot, no holdings.
"""
from __future__ import annotations

import numpy as np

from engine import events
from engine.kernels.codes import MOVE, N_RES, P_ITEM_VALUE, P_PRICE, SEASON_END, SNAPSHOT, SPAWN, STARVE
from engine.match import Match
from engine.replay import replay
from engine.rules import param_array

# A frame's agent: [x, y, alive, health, satiety, net worth, wood, stone, food, ore, relics, shelter, tool];
# frames read from the log alone stop after net worth.
HOLDINGS = ("wood", "stone", "food", "ore", "relics", "shelter", "tool")


def _worth(inv, shelter: int, tool: int, P) -> float:
    """The kernels' `worth`, summed in the same order so the figure is the log's to the bit."""
    s = 0.0
    for r in range(N_RES):
        s += float(inv[r]) * P[P_PRICE + r]
    return s + shelter * P[P_ITEM_VALUE] + tool * P[P_ITEM_VALUE + 1]


def _state(m: Match, P) -> list[list]:
    a = m.agents
    return [[int(a.pos[i, 0]), int(a.pos[i, 1]), bool(a.alive[i]), int(a.health[i]), int(a.satiety[i]),
             round(_worth(a.inv[i], int(a.shelter[i]), int(a.tool[i]), P), 2),
             *(int(q) for q in a.inv[i]), int(a.shelter[i]), int(a.tool[i])] for i in range(m.n)]


def from_replay(match: Match, cols: dict) -> list[dict] | None:
    """One frame per tick played (the state at the tick's end) and one at the stop tick (the final
    state, as the log's closing rows are stamped); None when the replay does not reproduce the log."""
    P = param_array()
    frames: list[dict] = []

    def keep(m: Match) -> None:
        frames.append({"tick": m.tick - 1, "agents": _state(m, P)})
    m = replay(match.config, cols, on_tick=keep)
    if not events.equal(cols, m.columns()):
        return None
    frames.append({"tick": m.tick, "agents": _state(m, P)})
    return frames


def from_log(cols: dict, n: int) -> list[dict]:
    """Frames from the log's rows: a frame per tick that has rows, with the last snapshot's figures."""
    pos = np.zeros((n, 2), dtype=int)
    alive = np.ones(n, dtype=bool)
    state = np.zeros((n, 3))
    frames, tick = [], 0
    kinds, agents = cols["kind"], cols["agent"]

    def frame() -> dict:
        return {"tick": tick, "agents": [[int(x), int(y), bool(a), int(h), int(s), round(float(w), 2)]
                                         for (x, y), a, (h, s, w) in zip(pos, alive, state)]}
    for r in range(len(kinds)):
        t = int(cols["tick"][r])
        if t != tick:
            frames.append(frame())
            tick = t
        k = kinds[r]
        if k == SPAWN:
            pos[agents[r]] = (cols["a"][r], cols["b"][r])
        elif k == MOVE and cols["ok"][r]:
            pos[agents[r]] = (cols["f"][r], cols["g"][r])
        elif k == STARVE:
            alive[agents[r]] = False
        elif k == SNAPSHOT:
            state[agents[r]] = (cols["c"][r], cols["d"][r], cols["v"][r])
    frames.append(frame())
    return frames


def ticks_played(cols: dict) -> int:
    """The log's season_end row says how many ticks were played."""
    end = np.nonzero(cols["kind"] == SEASON_END)[0]
    return int(cols["a"][end[0]]) if len(end) else int(cols["tick"].max()) + 1
