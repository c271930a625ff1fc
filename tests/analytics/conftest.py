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
