"""How `make test` (pytest-xdist, `-n 2`) shares the suite between its two processes: in units, each a
folder of tests or one module named on its own below, handed out heaviest first to whichever process
is free (xdist's scheduler by scope, the scope of a test being its unit). A folder's tests run in
their own order in one process, so its session and package fixtures (servers, the browser) start
once; a slow module named on its own leaves its folder and runs beside the rest. Every folder is
named (tests/docs/test_scheduling.py fails until a new one is)."""
from __future__ import annotations

from pathlib import Path

# Seconds per unit in `make test` on the 2-core machine: each unit's tests' durations (setup, call and
# teardown) summed from a full run's `--durations=0` (2026-12-07 21:08 UTC, the machine otherwise
# idle). Only the order units are handed out in reads them. A folder's entry counts its modules not
# named on their own. tests/runs' modules named here use only the session's `srv` (which every
# process starts anyway for the other folders), so running them beside the rest starts nothing twice;
# the modules on `paced` and `idle` stay in the folder's unit, where those servers start once.
UNITS = {
    "faults/test_damaged_archive.py": 81,
    "faults/test_service.py": 81,
    "faults/test_model_store_faults.py": 39,
    "faults": 42,
    "benchmarks": 215,
    "seats/test_text_properties.py": 92,
    "arena/test_chess_grading.py": 21,
    "api/test_schemathesis.py": 65,
    "runs/test_model_resume.py": 42,
    "runs/test_arena_faults.py": 17,
    "runs/test_arena_runs.py": 30,
    "runs/test_model_faults.py": 27,
    "runs": 326,
    "console": 277,
    "agents": 129,
    "api": 156,
    "cluster/test_heads.py": 96,
    "cluster": 81,
    "analytics": 83,
    "mcp": 55,
    "seats": 41,
    "arena": 60,
    "docs": 52,
    "bundles": 37,
    "orchestrator": 76,
    "engine": 10,
    "grading": 5,
    "client": 4,
}
_TESTS = Path(__file__).resolve().parent


def unit_of(path: Path) -> str:
    """The unit of the test module at `path`: itself where it is named, else its folder."""
    rel = Path(path).resolve().relative_to(_TESTS)
    for name in (rel.as_posix(), rel.parts[0]):
        if name in UNITS:
            return name
    raise ValueError(f"tests/{rel.parts[0]} is not named in tests/scheduling.py's UNITS")


def heaviest_first(items: list) -> None:
    """Reorder collected items, in place, by their unit's weight, keeping each unit's tests together
    and in their own order: xdist hands out the units in the order it collected them."""
    units = {id(item): unit_of(item.path) for item in items}
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(units[id(item)], i)
    items.sort(key=lambda item: (-UNITS[units[id(item)]], first[units[id(item)]]))


def scheduler(config, log):
    """xdist's scheduler by scope, the scope of a test being its unit (xdist's own `xdist_group`
    marks are not read on pytest 9, whose nodes keep their id elsewhere)."""
    from xdist.scheduler import LoadScopeScheduling

    # xdist would sort the units by their number of tests, the slowest (single-test) modules last
    config.option.loadscopereorder = False

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(_TESTS.parent / nodeid.split("::")[0])
    return Units(config, log)
