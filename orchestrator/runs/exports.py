"""A run or a series as a file, for its owner only (never a public page): GET /api/v1/runs/:id/export,
GET /api/v1/batches/:id/export, MCP export_run, `studio export` and the console's buttons all call
`export`. Formats: the seat rows as CSV or Parquet, or an Inspect AI log. docs/FORMATS.md describes
each file field by field."""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs import analysis, bundle, inspect_log
from orchestrator.records.run import Run
from orchestrator.runs.service import READ, run_row
from orchestrator.store import runs

# format -> (media type, file extension)
FORMATS = {"csv": (analysis.FORMATS["csv"], "csv"), "parquet": (analysis.FORMATS["parquet"], "parquet"),
           "inspect": ("application/zip", "eval")}
BUNDLE = "bundle"  # MCP export_run's further format (REST serves a bundle at its own path)


@dataclass(frozen=True)
class Export:
    data: bytes
    media_type: str
    filename: str

    def as_tool_result(self, id: str, fmt: str) -> dict:
        """What an MCP tool answers: the file as base64 in the structured result (a tool result holds
        JSON; a resource would need a URI per export that outlives the call)."""
        return {"id": id, "format": fmt, "filename": self.filename, "media_type": self.media_type,
                "size_bytes": len(self.data), "base64": base64.b64encode(self.data).decode("ascii")}


def _format(fmt: Any, default: str) -> str:
    if fmt is None:
        return default
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise DomainError("bad_request", f"format: should be one of {', '.join(FORMATS)}")
    return fmt


def _series_runs(core: Core, principal: Principal, batch_id: str) -> list[Run]:
    rows = runs.of_series(core.store.conn(), batch_id, principal.account_id)
    if not rows:
        raise DomainError("unknown_run", f"no series '{batch_id}' on this account; a series answers its batch_id "
                          "at launch")
    return rows


def export(core: Core, principal: Principal, id: Any, fmt: Any = None, *, default: str = "csv") -> Export:
    """`id`: a run's id (run_...) or a series' batch_id (bat_...); `fmt`: csv, parquet or inspect."""
    require(principal, READ)
    if not isinstance(id, str) or not id:
        raise DomainError("bad_request", "id: send a run's id (run_...) or a series' batch_id (bat_...)")
    fmt = _format(fmt, default)
    series = id.startswith("bat_")
    rows = _series_runs(core, principal, id) if series else [run_row(core, principal, id)]
    media, ext = FORMATS[fmt]
    if fmt == "inspect":
        data = inspect_log.eval_log(core, rows, id)
    else:
        data = analysis.table(core, principal, fmt, **({"batch_id": id} if series else {"id": id}))
    return Export(data, media, f"{id}.{ext}")


def export_tool(core: Core, principal: Principal, id: Any, format: Any = None) -> dict:
    """MCP export_run: the Inspect log unless another format is asked for; "bundle" is the run's
    result bundle."""
    if format == BUNDLE:
        return Export(bundle.of(core, principal, id), bundle.MEDIA_TYPE, bundle.filename(id)).as_tool_result(id, BUNDLE)
    fmt = _format(format, "inspect")
    return export(core, principal, id, fmt).as_tool_result(id, fmt)
