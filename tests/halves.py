"""`make test` runs the suite as two pytest processes (pytest-xdist, `-n 2`), each one fixed half of
the folders: in one process the suite waits on servers, providers and timeouts for about half its time
(the two cores half idle), which the other process now fills. Halves by folder, not
test by test: each process starts the session's Ray and the shared servers only for the folders it
holds, and a folder's tests run in their own order, as they do in one process. The halves are
balanced by the folders' measured times; a new folder is placed in one by whoever adds it
(tests/docs/test_halves.py fails until then)."""
from __future__ import annotations

from pathlib import Path

HALVES = {
    "a": ("runs", "console", "agents", "mcp", "analytics"),
    "b": ("faults", "seats", "api", "client", "arena", "benchmarks", "bundles", "cluster", "docs", "orchestrator", "engine",
          "grading"),
}
_TESTS = Path(__file__).resolve().parent


def half_of(path: Path) -> str:
    folder = Path(path).resolve().relative_to(_TESTS).parts[0]
    for half, folders in HALVES.items():
        if folder in folders:
            return half
    raise ValueError(f"tests/{folder} is in neither half of tests/halves.py")


def scheduler(config, log):
    """xdist's scheduler by scope, the scope of a test being its half (xdist's own `xdist_group`
    marks are not read on pytest 9, whose nodes keep their id elsewhere)."""
    from xdist.scheduler import LoadScopeScheduling

    class Halves(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return half_of(_TESTS.parent / nodeid.split("::")[0])
    return Halves(config, log)
