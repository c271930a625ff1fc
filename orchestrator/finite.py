"""What a JSON value from outside may hold before it is stored or used, and stored values read back.

Python's JSON parser reads `1e400` as infinity and digits without end as one integer; neither can be
written back as JSON, stored by SQLite or read by a client, and a value nested hundreds of levels
deep outruns every recursive reader downstream. `unfit` finds such a number or nesting in a request
body, an action or a provider's answer (the callers refuse it with their own code); `nulled` reads a
value an earlier version stored with such a number, showing it as null, and says where.
"""
from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 32                 # a request body's nesting
ACTION_DEPTH = 3               # an action object, a field holding an array or object, one level inside it
INT_RANGE = 2 ** 63 - 1        # the store's and the archive's integers are 64-bit

NOT_FINITE = "should be a finite number"
OUT_OF_RANGE = f"should be a number from -{INT_RANGE} to {INT_RANGE}"


def finite(x: Any) -> bool:
    """A JSON number every store and client can hold: a finite float or a 64-bit integer (not a bool)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    return math.isfinite(x) if isinstance(x, float) else -INT_RANGE <= x <= INT_RANGE


def unfit(value: Any, max_depth: int = MAX_DEPTH) -> tuple[tuple, str] | None:
    """Where a JSON value holds a number `finite` refuses or nests deeper than max_depth (arrays and
    objects, the outermost counting 1), as (path, what it should be); None when it is fit. Walked
    without recursion, so no nesting can exhaust the stack."""
    stack = [(value, (), 1)]
    while stack:
        v, path, depth = stack.pop()
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if not finite(v):
                return path, NOT_FINITE if isinstance(v, float) else OUT_OF_RANGE
        elif isinstance(v, (dict, list)):
            if depth > max_depth:
                return path, f"nests deeper than {max_depth} levels of arrays and objects"
            items = v.items() if isinstance(v, dict) else enumerate(v)
            stack.extend((child, path + (k,), depth + 1) for k, child in reversed(list(items)))
    return None


def action_unfit(action: Any) -> str | None:
    """Why one action (an agent's or a model's) cannot be played or kept, or None: a number `finite`
    refuses or nesting deeper than ACTION_DEPTH. Its size is the body's (64 KiB) or the model's reply's:
    a long text is the engine's to cut to say_max_chars, as it always has."""
    bad = unfit(action, ACTION_DEPTH)
    return None if bad is None else f"{'.'.join(str(p) for p in bad[0]) or 'the action'} {bad[1]}"


def nulled(value: Any) -> tuple[Any, list[str]]:
    """A stored JSON value with every number `finite` refuses read as None, and the paths replaced
    (dotted, `[k]` for indexes); the value itself when it holds none."""
    found: list[str] = []

    def walk(v, path):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not finite(v):
            found.append(path or "the value")
            return None
        if isinstance(v, dict):
            return {k: walk(c, f"{path}.{k}" if path else str(k)) for k, c in v.items()}
        if isinstance(v, list):
            return [walk(c, f"{path}[{k}]") for k, c in enumerate(v)]
        return v

    out = walk(value, "")
    return (out, found) if found else (value, [])


def note(paths: list[str]) -> str | None:
    """The note a view carries beside values read as null, or None when there are none."""
    if not paths:
        return None
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"{shown}: stored by an earlier version as a number JSON cannot carry (infinite or not a "
            "number); shown as null. `studio doctor --repair` repairs the store")


def loads(text: str | None) -> tuple[Any, list[str]]:
    """Stored JSON text read with `nulled` (Infinity and NaN, as json.dumps writes them, included)."""
    if text is None:
        return None, []
    return nulled(json.loads(text))

