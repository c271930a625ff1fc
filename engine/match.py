"""A match: the world, its agents and the event log, played one of two ways through one step.

- `run()` plays whole stretches of the season inside compiled code (every agent scripted);
- `observe()` then `submit()` plays one tick with actions from outside (model seats).
Both call the one step kernel (`play_ticks`), so identical actions give identical logs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine import rules
from engine.actions import EMPTY_ROW, encode
from engine.kernels import step as _step
from engine.kernels.codes import (
    EXTERNAL, MATCH_START, POLICIES, R_OK, SEASON_END, STOP_REASONS,
)
from engine.kernels.common import emit, emit_finals, emit_spawns
from engine.kernels.rng import continuation_streams, derive, match_streams
from engine.kernels.spatial import cell_shape, mask_shape
from engine.kernels.state import agents_view, log_capacity, new_tables, offers_view, world_view
from engine.kernels.worldgen import generate, place_spawns

CANNED_MESSAGES = ("Hello!", "Anyone trading?", "Stay away.", "Nice weather.")
SEED_MAX = rules.SEED_MAX


@dataclass(frozen=True)
class AgentSpec:
    """One agent of the field: a roster seat (scripted `local/<policy>` or external) or an anchor."""
    name: str
    model: str
    policy: str | None = None  # a POLICIES id, or None for a seat played from outside
    anchor: bool = False


@dataclass
class MatchConfig:
    season_ticks: int
    seed: int
    spawn_seed: int
    actions_per_turn: int = rules.WORLD["actions_per_turn"]
    resources: dict = field(default_factory=dict)  # {resource: {"max": m, "regen": r}} multipliers
    agents: list[AgentSpec] = field(default_factory=list)
    # [(tick, continuation_seed)]: at the start of each such tick every stream is drawn afresh from the
    # seed (a fork's continuation, engine/fork.py), so a replay of the log reseeds where the play did
    reseeds: list = field(default_factory=list)


def multipliers(resources: dict) -> tuple[np.ndarray, np.ndarray]:
    mult_max = np.ones(rules.N_RES, dtype=np.float64)
    mult_regen = np.ones(rules.N_RES, dtype=np.float64)
    for name, m in (resources or {}).items():
        r = rules.RESOURCES.index(name)
        mult_max[r] = float(m.get("max", 1.0))
        mult_regen[r] = float(m.get("regen", 1.0))
    return mult_max, mult_regen


class Match:
    def __init__(self, config: MatchConfig):
        if not config.agents:
            raise ValueError("a match needs at least one agent")
        for s in (config.seed, config.spawn_seed):
            if not 0 <= s <= SEED_MAX:
                raise ValueError(f"seeds must lie in 0..{SEED_MAX}")
        self.config = config
        self.specs = list(config.agents)
        n = len(self.specs)
        self.n = n
        self.apt = int(config.actions_per_turn)
        self.season_ticks = int(config.season_ticks)
        self.tick = 0
        self.start_tick = 0  # the first tick this match plays: a fork (engine/fork.py) loads those before it
        self.stop_reason: str | None = None
        self.messages: list[str] = list(CANNED_MESSAGES)
        arr = rules.rule_arrays()
        self._P = rules.param_array()
        W = rules.WORLD

        side = rules.map_side(n)
        codes = np.array([EXTERNAL if s.policy is None else POLICIES.index(s.policy) for s in self.specs])
        self.tables = new_tables(side, codes, W["start_health"], W["start_satiety"], W["start_food"],
                                 n * W["open_offers_max"], log_capacity(self.season_ticks, n, self.apt))
        tb = self.tables
        mult_max, mult_regen = multipliers(config.resources)
        generate(np.array([derive(config.seed, 1)]), tb.terrain, tb.tiles, arr["res_max"], arr["res_regen"],
                 mult_max, mult_regen)
        place_spawns(np.array([derive(config.spawn_seed, 2)]), tb.terrain, n, W["spawn_min_distance"], tb.ag)
        self.world, self.agents, self.offers = world_view(tb), agents_view(tb), offers_view(tb)
        self.rng = np.empty(1 + n, dtype=np.uint64)
        match_streams(config.seed, config.spawn_seed, self.rng)  # derive(seed, 3 | 4, spawn_seed[, i])
        self._ext = np.zeros((n, self.apt, 6), dtype=np.int64)
        self._scratch = (np.empty(n, dtype=np.int64), np.empty(6, dtype=np.int64),
                         np.empty(mask_shape(side), dtype=np.int64), np.empty(cell_shape(side, n), dtype=np.int64))
        self.emit(0, -1, MATCH_START, side, side, n, self.season_ticks, self.apt, W["view_radius"])
        emit_spawns(tb.logi, tb.logv, tb.meta, tb.ag, np.array([int(s.anchor) for s in self.specs], dtype=np.int64))

    # -- state ---------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    @property
    def external(self) -> list[int]:
        """Indexes of living agents whose actions come from outside."""
        return [i for i, s in enumerate(self.specs) if s.policy is None and self.agents.alive[i] == 1]

    @property
    def rows(self) -> int:
        """Event rows written so far."""
        return int(self.tables.meta[0])

    def emit(self, t, agent, kind, a=0, b=0, c=0, d=0, e=0, f=0, g=0, v=0.0) -> None:
        tb = self.tables
        emit(tb.logi, tb.logv, tb.meta, t, agent, kind, 1, R_OK, a, b, c, d, e, f, g, v)

    def _play(self, t0: int, t1: int) -> None:
        tb = self.tables
        cuts = sorted({t0, t1} | {int(t) for t, _ in self.config.reseeds if t0 < t < t1})
        for a, b in zip(cuts, cuts[1:]):
            for t, seed in self.config.reseeds:
                if t == a:
                    self.rng[:] = continuation_streams(seed, t, self.n)
            _step.play_ticks(tb.terrain, tb.tiles, tb.ag, tb.offers, tb.ocount, tb.logi, tb.logv, tb.meta, self.rng,
                             a, b, self.apt, self._ext, *self._scratch, self._P)

    # -- playing -------------------------------------------------------------------------------
    def run(self, until: int | None = None) -> None:
        """Play ticks up to `until` (default: the season's end) in compiled code.

        Seats played from outside act only through submit(); here they would only wait, so refuse."""
        if self.external:
            raise RuntimeError("run() plays scripted agents only; use observe()/submit() for external seats")
        end = self.season_ticks if until is None else min(int(until), self.season_ticks)
        if end > self.tick:
            self._play(self.tick, end)
            self.tick = end
        if self.tick >= self.season_ticks:
            self.finish("season_end")

    def submit(self, actions: dict[int, list]) -> None:
        """Play one tick. actions: agent index -> up to actions_per_turn action dicts (or int rows)."""
        if self.done:
            raise RuntimeError("the match is over")
        self._ext[:, :, :] = 0
        self._ext[:, :, 0] = EMPTY_ROW[0]
        for i, acts in actions.items():
            if not 0 <= i < self.n:
                raise ValueError(f"no agent {i} in this match")
            if self.specs[i].policy is not None:
                raise ValueError(f"agent {i} is scripted; it takes no submitted actions")
            say_max = rules.WORLD["say_max_chars"]
            rows = [a if isinstance(a, np.ndarray) else encode(a, self.messages, say_max)
                    for a in list(acts)[: self.apt]]
            # empty rows are dropped so actions fill the first slots, as a replay of the log will
            for slot, row in enumerate(r for r in rows if r[0] != EMPTY_ROW[0]):
                self._ext[i, slot] = row
        self._play(self.tick, self.tick + 1)
        self.tick += 1
        if self.tick >= self.season_ticks:
            self.finish("season_end")

    def finish(self, stop_reason: str = "season_end") -> None:
        """Close the log: every agent's final state and stock, then season_end. Idempotent."""
        if self.done:
            return
        t = self.tick
        tb = self.tables
        emit_finals(tb.logi, tb.logv, tb.meta, tb.ag, t, self._P)
        self.emit(t, -1, SEASON_END, t, STOP_REASONS.index(stop_reason))
        self.stop_reason = stop_reason

    # -- reading -------------------------------------------------------------------------------
    def columns(self) -> dict[str, np.ndarray]:
        """The event log so far as columns (copies), plus `text` for say and invalid rows."""
        from engine.events import columns

        return columns(self.tables, self.messages)

    def results(self) -> dict:
        from engine.rubric import score

        return score(self.columns(), self.specs)

    def observe(self, i: int) -> dict:
        from engine.observe import observation

        return observation(self, i)
