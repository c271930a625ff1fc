"""Small data dirs of scripted matches for notebooks, tests and the benchmark.

Each match is played by `play_job`, the same code a service worker runs, so the
files (events, seats, runs) are the real archive format, not an imitation of it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from analytics.archive.store import Archive
from engine.scenario import resolve_env
from orchestrator.clock import Clock
from orchestrator.play import Job, play_job
from orchestrator.provider_kinds import LOCAL


def local_seats(policies: Iterable[str], names: Iterable[str] | None = None) -> list[dict]:
    """Roster entries for scripted seats: local/<policy> models, named after the policy unless given."""
    policies = list(policies)
    names = list(names) if names is not None else [f"{p} {i}" for i, p in enumerate(policies)]
    return [{"name": n, "model": f"local/{p}", "provider": LOCAL} for n, p in zip(names, policies)]


def play_series(data_dir: str | Path, batch_id: str, seats: list[dict], seeds: Iterable[int], *,
                scenario_id: str = "base", season_ticks: int = 300, env: dict | None = None,
                anchors: list[str] | None = None, spawn_offset: int = 1_000_000,
                clock: Clock | None = None) -> list[str]:
    """Play one match per seed with the same roster and archive it under ``data_dir``.

    Seeds are shared across series on purpose: two series played on the same seeds are paired
    (same map, same spawns), which is what compare_configs and skill_uplift rely on. Returns the
    run ids in seed order.
    """
    clock = clock or Clock()
    base = resolve_env(env)
    if anchors is not None:
        base["anchors"] = list(anchors)
    store = Archive.of(data_dir)
    run_ids, match_ids = [], []
    for seed in seeds:
        run_env = dict(base, seed=int(seed), spawn_seed=int(seed) + spawn_offset)
        run_id = f"run_{batch_id}_{seed}"
        meta = {"batch_id": batch_id, "scenario_id": scenario_id, "scenario_hash": f"hash:{scenario_id}",
                "config_hash": f"config:{batch_id}"}
        started = clock.now_ms()
        outcome = play_job(Job(run_id, f"match_{batch_id}_{seed}", str(data_dir), season_ticks, run_env,
                               seats, meta))
        store.land(outcome.match_id, outcome.events, outcome.seats)  # as the service's head does
        match_ids.append(outcome.match_id)
        # A minimal run view: the columns analytics may rely on (run_id, status, scenario_id,
        # batch_id, created_at_ms, finished_at_ms) plus the seeds for readers who want them.
        store.write_runs([{
            "run_id": run_id, "status": outcome.status, "scenario_id": scenario_id, "batch_id": batch_id,
            "created_at_ms": started, "finished_at_ms": clock.now_ms(),
            "seed": int(seed), "spawn_seed": run_env["spawn_seed"], "roster": seats,
        }])
        run_ids.append(run_id)
    store.compact(batch_id, match_ids)
    return run_ids
