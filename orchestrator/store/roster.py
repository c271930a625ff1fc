"""A stored roster as today's seat record reads it. A seat written before the record required a
`format` and a `scaffold` is read with the format a seat naming none was given then (tools) and a
scaffold saying it was not recorded; every field it did store is kept as stored."""
from __future__ import annotations

from typing import Any

FORMAT_UNSTORED = "tools"
SCAFFOLD_UNSTORED = "unrecorded"


def seats(value: Any) -> Any:
    """The parsed roster JSON with each seat's missing format and scaffold filled in; anything that is
    not a list of seats is left for the record to refuse."""
    if not isinstance(value, list):
        return value
    return [{"format": FORMAT_UNSTORED, "scaffold": SCAFFOLD_UNSTORED, **s} if isinstance(s, dict)
            and ("format" not in s or "scaffold" not in s) else s for s in value]
