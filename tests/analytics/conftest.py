"""One small archive for the analytics tests, played and written by the service's own code.

bat_a: 32 seeds (enough for the BCa path), bat_b: a different roster on 12 of the same seeds
(paired comparisons), bat_c: bat_a's roster on another scenario (aggregates over scenarios).
Short seasons keep the whole archive under a second or two to make.
"""
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from orchestrator.sample import local_seats, play_series

SEASON = 40
ANCHORS = ["random", "greedy-harvester"]
ROSTER_A = local_seats(["honest-trader", "aggressive-raider"], ["trader", "raider"])
ROSTER_B = local_seats(["greedy-harvester", "aggressive-raider"], ["trader", "raider"])
SEEDS_A = list(range(32))
SEEDS_B = list(range(0, 24, 2))
SEEDS_C = list(range(10))


@pytest.fixture(scope="session")
def archive_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    play_series(root, "bat_a", ROSTER_A, SEEDS_A, season_ticks=SEASON, anchors=ANCHORS)
    play_series(root, "bat_b", ROSTER_B, SEEDS_B, season_ticks=SEASON, anchors=ANCHORS)
    play_series(root, "bat_c", ROSTER_A, SEEDS_C, scenario_id="lush", season_ticks=SEASON, anchors=ANCHORS,
                env={"resources": {"food": {"max": 2, "regen": 2}}})
    return root


def direct_seats(root: Path) -> pd.DataFrame:
    """Every seat row read with pyarrow alone, no DuckDB: the reference the views are checked against."""
    frames = [pq.read_table(p).to_pandas() for p in sorted((root / "archive" / "seats").glob("*.parquet"))]
    # one file per series, its matches in play order: sort as the views' readers do
    return pd.concat(frames, ignore_index=True).sort_values(["match_id", "seat"], ignore_index=True)


def play_games(root: Path, batch_id: str, game: str, models: list[str], seeds) -> None:
    """Arena games archived as the service's head archives them: played by play_job (the worker's own
    code), landed with their graded log, compacted as one series, with a run view each."""
    from analytics.archive.store import Archive
    from orchestrator.play import Job, play_job

    store = Archive.of(root)
    roster = [{"name": f"{m} {i}", "model": m, "provider": "local"} for i, m in enumerate(models)]
    matches = []
    for k, seed in enumerate(seeds):
        run_id, match_id = f"run_{batch_id}_{seed}", f"match_{batch_id}_{seed}"
        meta = {"batch_id": batch_id, "scenario_id": game, "scenario_hash": f"hash:{game}",
                "config_hash": f"config:{batch_id}"}
        out = play_job(Job(run_id, match_id, str(root), 0, {"seed": seed, "spawn_seed": seed, "first_seat": k % 2},
                           roster, meta))
        store.land(out.match_id, None, out.seats, game_json=out.game)
        store.write_runs([{"run_id": run_id, "status": out.status, "scenario_id": game, "batch_id": batch_id,
                           "created_at_ms": 0, "finished_at_ms": 0}])
        matches.append(match_id)
    store.compact(batch_id, matches)


@pytest.fixture(scope="session")
def mixed_dir(tmp_path_factory) -> Path:
    """A world series, a Connect Four series, and a world run that failed after 2 ticks (its match
    archived, its run view saying failed): what `studio report --all` met. (Chess mixes in the same
    way; its grading takes a Stockfish search per position, too slow for a fixture.)"""
    from analytics.archive.store import Archive

    root = tmp_path_factory.mktemp("mixed")
    play_series(root, "bat_w", ROSTER_A, range(8), season_ticks=SEASON, anchors=ANCHORS)
    play_games(root, "bat_c4", "arena:connect-four", ["local/solver", "local/random"], range(6))
    failed = local_seats(["honest-trader", "aggressive-raider"], ["trader", "raider"])
    failed[0]["model"] = "local/greedy-harvester"  # a model only the failed run played
    [run_id] = play_series(root, "bat_f", failed, [99], season_ticks=2, anchors=ANCHORS)
    Archive.of(root).write_runs([{"run_id": run_id, "status": "failed", "scenario_id": "base", "batch_id": "bat_f",
                                  "created_at_ms": 0, "finished_at_ms": 0}])
    return root
