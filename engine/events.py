"""The event log's columns: what the kernels wrote, trimmed, plus message texts.

Column meanings per kind are documented in docs/EVENTS.md; the rubric reads nothing else.
"""
from __future__ import annotations

import numpy as np

from engine.kernels.codes import INVALID, SAY
from engine.kernels.state import LOG_DTYPES, LOG_INT_COLUMNS

COLUMNS = ("tick", "agent", "kind", "ok", "reason", "a", "b", "c", "d", "e", "f", "g", "v")


def columns(tables, messages: list[str]) -> dict[str, np.ndarray]:
    n = int(tables.meta[0])
    by_column = np.ascontiguousarray(tables.logi[:n].T)  # one pass instead of twelve strided copies
    out = {name: by_column[k].astype(LOG_DTYPES[name]) if name in LOG_DTYPES else by_column[k]
           for k, name in enumerate(LOG_INT_COLUMNS)}
    out["v"] = tables.logv[:n].copy()
    text = np.full(n, None, dtype=object)
    rows = np.nonzero((out["kind"] == SAY) | (out["kind"] == INVALID))[0]
    for r in rows:
        idx = int(out["b"][r])
        if 0 <= idx < len(messages):
            text[r] = messages[idx]
    out["text"] = text
    return out


def equal(x: dict, y: dict) -> bool:
    """Byte-for-byte equality of two logs (numeric columns by bytes, texts by value)."""
    if x.keys() != y.keys():
        return False
    for k in COLUMNS:
        if x[k].dtype != y[k].dtype or x[k].tobytes() != y[k].tobytes():
            return False
    return list(x["text"]) == list(y["text"])
