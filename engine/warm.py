"""Compile every engine kernel once, into the shared cache (engine/kernels/jit.py), before any play.

`studio serve` calls warm() before it binds its port, so the first match after an install plays
at full speed, and Ray workers (same sources, same cache directory) load machine code instead of
compiling. Each kernel is called with the argument types the service passes, since a cached kernel
is reused only for the same types.
"""
from __future__ import annotations

import time

from engine.kernels.codes import POLICIES
from engine.kernels.jit import cache_dir


def _world() -> None:
    from engine.match import AgentSpec, Match, MatchConfig

    scripted = [AgentSpec(f"s{k}", f"local/{p}", policy=p) for k, p in enumerate(POLICIES)]
    m = Match(MatchConfig(season_ticks=3, seed=1, spawn_seed=2, agents=scripted))
    m.run()
    m.results()  # the rubric's tally
    seat = Match(MatchConfig(season_ticks=2, seed=1, spawn_seed=2, agents=scripted[:1] + [AgentSpec("x", "ext")]))
    seat.observe(1)
    seat.submit({1: [{"action": "wait"}]})


def _arena() -> None:
    from engine.arena import solver

    solver.Solver(use_book=False).scores([3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4, 1, 1, 1, 1, 5, 5, 5, 5, 0, 0, 0, 0,
                                          6, 6, 6, 6, 0, 0, 6, 6, 5])
    solver.shallow_column_scores([3, 3], 2)


def warm() -> dict:
    """Compile (or load from the cache) every kernel the service runs; returns seconds per part."""
    took = {}
    for name, part in (("world", _world), ("arena", _arena)):
        t0 = time.perf_counter()
        part()
        took[name] = round(time.perf_counter() - t0, 3)
    return {"cache_dir": str(cache_dir()), "seconds": took}
