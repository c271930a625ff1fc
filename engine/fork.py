"""A fork: a played match going on from the exact state at the start of one of its ticks, with some
seats handed to other players (docs/FORKS.md).

The state comes from the decision grader's rebuild (engine/rollouts.py), so a log today's engine
does not reproduce is refused (RebuildError). The fork plays on through the same step as any match:
with the played streams, a fork that changes no seat plays the original's log byte for byte; with a
continuation seed, MatchConfig.reseeds records where streams were drawn afresh so a replay reseeds at
the same tick. A changed seat keeps its place, body and goods; its player starts afresh. The played
config must name each scripted seat's policy, so the rebuild replays its memory and stream.
"""
from __future__ import annotations

from dataclasses import replace


from engine.kernels.codes import A_MEM, A_POLICY, EXTERNAL, POLICIES
from engine.kernels.state import LOG_INT_COLUMNS
from engine.match import AgentSpec, Match, MatchConfig
from engine.replay import messages_from_columns
from engine.rollouts import RebuildError, Snapshots, rebuild

__all__ = ["RebuildError", "at_tick", "fork", "forked_config"]


def forked_config(played: MatchConfig, tick: int, seats: dict[int, AgentSpec],
                  continuation_seed: int | None = None) -> MatchConfig:
    """The played config with roster seats replaced (index -> the new seat; anchors stay) and its
    streams: the original's (its own reseeds kept), or drawn from continuation_seed at `tick`."""
    agents = [seats.get(i, a) for i, a in enumerate(played.agents)]
    reseeds = list(played.reseeds) if continuation_seed is None else \
        [(t, s) for t, s in played.reseeds if t < tick] + [(int(tick), int(continuation_seed))]
    return replace(played, agents=agents, reseeds=reseeds)


def at_tick(config: MatchConfig, snap: Snapshots, s: int, cols: dict) -> Match:
    """A Match standing where snapshot s stands (before tick snap.ticks[s]): the tables, the streams,
    the log's rows so far and its messages; each agent plays as `config` says."""
    m = Match(config)
    tb = m.tables
    rows = int(snap.rows[s])
    tb.tiles[:] = snap.tiles[s]
    tb.ag[:] = snap.ag[s]
    tb.offers[:] = snap.offers[s]
    tb.ocount[:] = snap.ocount[s]
    for k, name in enumerate(LOG_INT_COLUMNS):
        tb.logi[:rows, k] = cols[name][:rows]
    tb.logv[:rows] = cols["v"][:rows]
    tb.meta[0], tb.meta[1] = rows, snap.next_offer[s]
    m.rng[:] = snap.rng[s]
    prefix = {k: v[:rows] for k, v in cols.items()}
    m.messages = messages_from_columns(prefix)
    m.tick = m.start_tick = int(snap.ticks[s])
    tb.ag[:, A_POLICY] = [EXTERNAL if a.policy is None else POLICIES.index(a.policy) for a in config.agents]
    return m


def fork(played: MatchConfig, cols: dict, tick: int, seats: dict[int, AgentSpec] | None = None,
         continuation_seed: int | None = None, snap: Snapshots | None = None) -> Match:
    """The match `cols` logs, rebuilt to the start of `tick` and ready to play on, seats (index -> new
    seat) changed. continuation_seed None plays the original's own streams, else streams drawn from it.
    snap: a rebuild holding `tick` already (one rebuild serves every trial of a series)."""
    seats = dict(seats or {})
    if not 1 <= tick:
        raise RebuildError("a fork starts at tick 1 or later")
    if snap is None:
        snap = rebuild(played, cols, [tick], [])
    m = at_tick(forked_config(played, tick, seats, continuation_seed), snap, snap.index(tick), cols)
    for i in seats:
        m.tables.ag[i, A_MEM:] = -1  # a new player: no scripted memory carried over
    return m
