"""Replaying a match from its event log: every agent's logged actions fed back tick by tick.

Used to check a log (server-side validation: the log must reproduce itself) and by tests to show
that the compiled season and the tick-by-tick path are one engine.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.kernels.codes import INVALID, N_ACTIONS, SAY, SEASON_END, STOP_REASONS
from engine.match import Match, MatchConfig

_ACTION_COLS = ("a", "b", "c", "d", "e")


def logged_actions(cols: dict, n_agents: int, apt: int, ticks: int) -> np.ndarray:
    """int64[ticks, N, apt, 6]: each agent's action rows in the order it took them, NO_ACTION where it
    took none. A voided-offer row follows its refused accept in the log but is not an action."""
    out = np.zeros((ticks, n_agents, apt, 6), dtype=np.int64)
    out[..., 0] = -1
    used = np.zeros((ticks, n_agents), dtype=np.int64)
    kind = cols["kind"]
    rows = np.nonzero(kind <= INVALID)[0]
    for r in rows:
        t, i = int(cols["tick"][r]), int(cols["agent"][r])
        k = int(kind[r])
        slot = used[t, i]
        out[t, i, slot, 0] = k
        for q, c in enumerate(_ACTION_COLS):
            out[t, i, slot, 1 + q] = cols[c][r]
        used[t, i] = slot + 1
    assert INVALID == N_ACTIONS
    return out


def messages_from_columns(cols: dict) -> list[str]:
    """The message table a log refers to, rebuilt from its text column (say and invalid rows)."""
    from engine.match import CANNED_MESSAGES

    table = dict(enumerate(CANNED_MESSAGES))
    for r in np.nonzero((cols["kind"] == SAY) | (cols["kind"] == INVALID))[0]:
        if cols["text"][r] is not None:
            table[int(cols["b"][r])] = cols["text"][r]
    return [table.get(k, "") for k in range(max(table) + 1)]


def replay(config: MatchConfig, cols: dict, messages: list[str] | None = None, on_tick=None) -> Match:
    """A new match where every agent is external, fed the logged actions; returns it finished the
    same way the original was (the stop tick and reason come from the log's season_end row).
    on_tick(match), if given, is called after every tick played (the replay page reads each tick's state)."""
    external = MatchConfig(**{**config.__dict__,
                              "agents": [replace(a, policy=None) for a in config.agents]})
    m = Match(external)
    m.messages = list(messages) if messages is not None else messages_from_columns(cols)
    end = np.nonzero(cols["kind"] == SEASON_END)[0]
    stop_tick = int(cols["a"][end[0]]) if len(end) else int(cols["tick"].max()) + 1
    acts = logged_actions(cols, m.n, m.apt, max(stop_tick, 1))
    for t in range(stop_tick):
        m.submit({i: list(acts[t, i]) for i in range(m.n) if m.agents.alive[i] == 1})
        if on_tick is not None:
            on_tick(m)
    if not m.done and len(end):
        m.finish(STOP_REASONS[int(cols["b"][end[0]])])
    return m
