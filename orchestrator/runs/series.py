"""GET /batches/:id: a series' runs and its per-seat summary (analytics.summary, one path)."""
from __future__ import annotations

from collections import Counter

import duckdb

from analytics.archive.store import Archive
from analytics.summary import series_summary
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.grading.read import graded_seats
from orchestrator.runs import lifecycle


def summary_source(core: Core, match_ids: list[str], batch_id: str | None = None):
    """An in-memory DuckDB table of exactly this series' seat rows (landed or compacted): no glob over
    the whole archive, and no dependence on the export of ended runs having caught up."""
    con = duckdb.connect()
    con.register("seats", Archive.of(core.data_dir, core.config).seats({m: batch_id for m in match_ids}))
    con.register("decisions", graded_seats(core, match_ids))  # decision accuracy per graded seat
    return con


def get_series(core: Core, principal: Principal, batch_id: str) -> dict:
    require(principal, "runs:read")
    s = core.store.one("SELECT * FROM batches WHERE id = ? AND account_id = ?", (batch_id, principal.account_id))
    if s is None:
        raise DomainError("unknown_run", f"no series '{batch_id}' on this account; a series answers its batch_id "
                          "at launch")
    runs = core.store.all("SELECT id, status, match_id FROM runs WHERE batch_id = ? ORDER BY trial", (batch_id,))
    done = [r["match_id"] for r in runs if r["match_id"] and r["status"] in lifecycle.SCORED]
    counts = Counter(r["status"] for r in runs)
    return {"batch": {"batch_id": batch_id, "status": lifecycle.series_status(counts), "trials": s["trials"],
                      "seed_mode": s["seed_mode"], "batch_seed": s["batch_seed"],
                      "run_ids": [r["id"] for r in runs], "counts": dict(counts),
                      "summary": series_summary(summary_source(core, done, batch_id), batch_id)}}
