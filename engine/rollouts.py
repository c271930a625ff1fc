"""The exact state before any tick of a played match, and rollouts from it (engine/kernels/rollout.py).

`rebuild` plays a match's event log forward once, as replay does, and keeps a snapshot of the
packed tables before each tick asked for, with each graded seat's rubric counts so far. Anchors play
their own (deterministic) policies; roster seats are fed their logged actions, or play the scripted
policy the config gives them, as a fork's do. The rebuilt log is checked row for row, so a log
today's engine does not reproduce (its rules changed since) is refused.

`Rollouts` holds the work tables and plays, from a snapshot, each candidate turn of one seat
forward under scripted policies, many rollouts per compiled call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import events, rubric
from engine.kernels import rollout as K
from engine.kernels.codes import MATCH_START, POLICIES, SEASON_END, STOP_REASONS
from engine.kernels.rng import derive
from engine.kernels.spatial import cell_shape, mask_shape
from engine.kernels.state import log_capacity
from engine.match import AgentSpec, Match, MatchConfig
from engine.replay import logged_actions, messages_from_columns
from engine.rules import WORLD, param_array


class RebuildError(ValueError):
    """The log cannot be rebuilt: its field or config does not match, or today's engine plays it differently."""


def config_of(meta: dict, cols: dict) -> MatchConfig:
    """A match's config from its archive meta (field, seed, spawn_seed, season_ticks; resources when the
    scenario changed them; a fork's reseeds) and its log (actions per turn, from the match_start row)."""
    start = np.nonzero(cols["kind"] == MATCH_START)[0]
    if not len(start) or "field" not in meta:
        raise RebuildError("the log has no match_start row or the meta no field")
    agents = []
    for a in meta["field"]:
        policy = a["model"].split("/", 1)[1] if a.get("anchor") else None
        if a.get("anchor") and policy not in POLICIES:
            raise RebuildError(f"anchor {a['name']!r} names no scripted policy ({a['model']})")
        agents.append(AgentSpec(name=a["name"], model=a["model"], policy=policy, anchor=bool(a.get("anchor"))))
    resources = meta.get("resources") or (meta.get("env") or {}).get("resources") or {}
    return MatchConfig(season_ticks=int(meta["season_ticks"]), seed=int(meta["seed"]),
                       spawn_seed=int(meta["spawn_seed"]), actions_per_turn=int(cols["e"][start[0]]),
                       resources=resources, agents=agents,
                       reseeds=[(int(t), int(s)) for t, s in meta.get("reseeds") or []])


def stop_of(cols: dict) -> tuple[int, str]:
    """The tick the match stopped at and why (its season_end row)."""
    end = np.nonzero(cols["kind"] == SEASON_END)[0]
    if not len(end):
        raise RebuildError("the log has no season_end row: the match is not finished")
    return int(cols["a"][end[0]]), STOP_REASONS[int(cols["b"][end[0]])]


@dataclass
class Snapshots:
    """The state before each tick of `ticks`, stacked: snapshot s is the state before tick ticks[s].
    counts, partners and seen: each graded seat's (`seats`, in order) rubric counts so far."""
    config: MatchConfig
    terrain: np.ndarray
    ticks: np.ndarray
    seats: list[int]
    tiles: np.ndarray      # float64[S, H, W, 4]
    ag: np.ndarray         # int64[S, N, A_COLS]
    offers: np.ndarray     # int64[S, K, 8]
    ocount: np.ndarray     # int64[S, N, C]
    next_offer: np.ndarray  # int64[S]
    rng: np.ndarray        # uint64[S, 1 + N]
    rows: np.ndarray       # int64[S]: event rows the log held before each tick (a fork keeps them)
    counts: np.ndarray     # int64[S, G, N_K]
    partners: np.ndarray   # bool[S, G, N]
    seen: np.ndarray       # bool[S, G, side, side]
    actions: np.ndarray    # int64[stop, N, apt, 6]: every agent's logged turn at each tick
    stop_tick: int

    def index(self, tick: int) -> int:
        s = int(np.searchsorted(self.ticks, tick))
        if s >= len(self.ticks) or self.ticks[s] != tick:
            raise KeyError(f"no snapshot before tick {tick}")
        return s


def rebuild(config: MatchConfig, cols: dict, ticks, seats: list[int]) -> Snapshots:
    """Play the log forward once, keeping the state before each tick of `ticks` (sorted, below the stop
    tick) and the counts of `seats`. Raises RebuildError when the replayed log differs from `cols`."""
    stop, reason = stop_of(cols)
    ticks = np.unique(np.asarray(list(ticks), dtype=np.int64))
    if len(ticks) and (ticks[0] < 0 or ticks[-1] >= stop):
        raise RebuildError(f"decision ticks must lie in 0..{stop - 1}")
    m = Match(config)
    if m.n != int(cols["c"][np.nonzero(cols["kind"] == MATCH_START)[0][0]]):
        raise RebuildError("the field does not match the log's agents")
    m.messages = messages_from_columns(cols)
    acts = logged_actions(cols, m.n, m.apt, max(stop, 1))
    tb = m.tables
    S, G = len(ticks), len(seats)
    side = tb.terrain.shape[0]
    snap = Snapshots(
        config=config, terrain=tb.terrain.copy(), ticks=ticks, seats=list(seats),
        tiles=np.empty((S, *tb.tiles.shape)), ag=np.empty((S, *tb.ag.shape), dtype=np.int64),
        offers=np.empty((S, *tb.offers.shape), dtype=np.int64), ocount=np.empty((S, *tb.ocount.shape), dtype=np.int64),
        next_offer=np.empty(S, dtype=np.int64), rng=np.empty((S, m.n + 1), dtype=np.uint64),
        rows=np.empty(S, dtype=np.int64),
        counts=np.zeros((S, G, K.N_K), dtype=np.int64), partners=np.zeros((S, G, m.n), dtype=bool),
        seen=np.zeros((S, G, side, side), dtype=bool), actions=acts, stop_tick=stop)
    counts = np.zeros((G, K.N_K), dtype=np.int64)
    partners = np.zeros((G, m.n), dtype=bool)
    seen = np.zeros((G, side, side), dtype=bool)
    radius = WORLD["view_radius"]
    counted = 0
    s = 0
    external = [i for i, a in enumerate(config.agents) if a.policy is None]
    for t in range(stop):
        for g, i in enumerate(seats):
            K.count_rows(tb.logi, counted, m.rows, i, counts[g], partners[g], seen[g], radius)
        counted = m.rows
        if s < S and ticks[s] == t:
            snap.tiles[s], snap.ag[s], snap.offers[s], snap.ocount[s] = tb.tiles, tb.ag, tb.offers, tb.ocount
            snap.next_offer[s] = tb.meta[1]
            snap.rng[s] = m.rng
            snap.rows[s] = m.rows
            snap.counts[s], snap.partners[s], snap.seen[s] = counts, partners, seen
            s += 1
        m.submit({i: list(acts[t, i]) for i in external if m.agents.alive[i] == 1})
    if not m.done:
        m.finish(reason)
    if not events.equal(cols, m.columns()):
        raise RebuildError("today's engine does not reproduce this log (its rules changed since it was played)")
    return snap


def rubric_numbers() -> np.ndarray:
    """The rubric's weights and constants in the order kernels/rollout.py reads them."""
    w = rubric.WEIGHTS
    return np.array([w["survival"], w["economy"], w["social"], w["competitiveness"], w["exploration"],
                     rubric.SEEN_FULL_SHARE, float(WORLD["health_max"])], dtype=np.float64)


def rollout_base(seed: int, spawn_seed: int, rollout_seed: int = 0) -> np.uint64:
    """Where every rollout stream of a match starts; kernels/rollout.py salts it with the tick and the
    rollout's number (salt 5: the match's own streams use 1-4)."""
    return derive(int(seed), 5, int(spawn_seed), int(rollout_seed))


class Rollouts:
    """Work tables for playing candidate turns from a match's snapshots: one per process, reused by
    every call (the kernels allocate nothing)."""

    def __init__(self, snap: Snapshots, horizon: int):
        self.snap = snap
        n = snap.ag.shape[1]
        apt = snap.actions.shape[2]
        side = snap.terrain.shape[0]
        self.n, self.apt = n, apt
        self.horizon = int(horizon)
        self.P = param_array()
        self.R = rubric_numbers()
        rows = log_capacity(self.horizon, n, apt)
        self.work = (np.empty(snap.tiles.shape[1:]), np.empty(snap.ag.shape[1:], dtype=np.int64),
                     np.empty(snap.offers.shape[1:], dtype=np.int64), np.empty(snap.ocount.shape[1:], dtype=np.int64),
                     np.empty((rows, 12), dtype=np.int32), np.empty(rows), np.zeros(2, dtype=np.int64),
                     np.empty(n + 1, dtype=np.uint64), np.empty((n, apt, 6), dtype=np.int64),
                     np.empty(n, dtype=np.int64), np.empty(6, dtype=np.int64),
                     np.empty(mask_shape(side), dtype=np.int64), np.empty(cell_shape(side, n), dtype=np.int64))
        self.counts = (np.empty(K.N_K, dtype=np.int64), np.empty(n, dtype=bool), np.empty((side, side), dtype=bool))

    def end_tick(self, tick: int) -> int:
        """Where a rollout from tick stops: horizon ticks on, or the season's end."""
        return min(tick + self.horizon, self.snap.config.season_ticks)

    def policy_turns(self, tick: int, seat: int, policies=POLICIES[:3]) -> np.ndarray:
        """int64[len(policies), apt, 6]: the turn each scripted policy would take for seat at tick."""
        s = self.snap.index(tick)
        sn = self.snap
        codes = np.array([POLICIES.index(p) for p in policies], dtype=np.int64)
        out = np.empty((len(codes), self.apt, 6), dtype=np.int64)
        K.policy_turns(sn.terrain, sn.tiles[s], sn.ag[s], sn.offers[s], sn.ocount[s], sn.next_offer[s], sn.rng[s],
                       sn.actions[tick], np.int64(seat), np.int64(tick), codes, out, self.P, *self.work)
        return out

    def values(self, tick: int, seat: int, cands: np.ndarray, rollouts: int, base: np.uint64,
               reference: str, own: int = 0) -> np.ndarray:
        """float64[C, rollouts]: seat's standing at end_tick(tick) after each candidate turn cands[c], the
        seat playing its own logged turns over the next `own` ticks and `reference` after them."""
        s = self.snap.index(tick)
        sn = self.snap
        g = sn.seats.index(seat)
        cands = np.ascontiguousarray(cands, dtype=np.int64)
        out = np.empty((len(cands), rollouts))
        K.rollouts(sn.terrain, sn.tiles[s], sn.ag[s], sn.offers[s], sn.ocount[s], sn.next_offer[s], sn.actions,
                   np.int64(seat), cands, np.int64(len(cands)), np.int64(rollouts), np.int64(tick),
                   np.int64(self.end_tick(tick)), np.int64(sn.config.season_ticks), np.int64(POLICIES.index(reference)),
                   np.int64(own), np.uint64(base),
                   sn.counts[s, g], sn.partners[s, g], sn.seen[s, g], np.int64(WORLD["view_radius"]), self.P, self.R,
                   out, *self.work, *self.counts)
        return out

