"""Digests that say which engine played a match and where it left it.

`engine_digest` names the engine: the compile cache's key (every kernel source, the rules, the
scripted policies, the Numba and Python versions: the jit module's `cache_key`) together with the
Python modules that write log rows or score them outside the kernels. Two processes with the same
digest play the same inputs to the same log; a match recorded under another digest may not replay.

`state_digest` names a finished match's final state: every table the next tick would read (the map,
the agents, the offers, the log's row count) and the random streams. A replay that ends elsewhere
differs here even where its scores happen to agree.
"""
from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from engine.kernels.jit import cache_key

_ENGINE = Path(__file__).resolve().parent
# Outside the kernels: the match's setup and log columns (match.py, events.py), its field (anchors.py,
# scenario.py), its scores (rubric.py).
PYTHON_SOURCES = ("match.py", "events.py", "anchors.py", "scenario.py", "rubric.py")


@cache
def engine_digest() -> str:
    digest = hashlib.sha256(cache_key().encode())
    for name in PYTHON_SOURCES:
        digest.update(name.encode())
        digest.update((_ENGINE / name).read_bytes())
    return digest.hexdigest()[:20]


def state_digest(match) -> str:
    tb = match.tables
    digest = hashlib.blake2b(digest_size=16)
    for part in (tb.tiles, tb.ag, tb.offers, tb.ocount, tb.meta, match.rng):
        digest.update(part.tobytes())
    digest.update(f"{match.tick}:{match.stop_reason}".encode())
    return digest.hexdigest()
