"""How `make test` (pytest-xdist, `-n 2`) shares the suite between its two processes: in units, each a
folder of tests or one module named on its own below, handed out heaviest first to whichever process
is free (xdist's scheduler by scope, the scope of a test being its unit). A folder's tests run in
their own order in one process, so its session and package fixtures (servers, the browser) start
once; a slow module named on its own leaves its folder and runs beside the rest. Every folder is
named (tests/docs/test_scheduling.py fails until a new one is)."""
from __future__ import annotations

from pathlib import Path

# Rough seconds per unit in `make test` on the 2-core machine: the slow modules' from a full run's
# durations (2026-12-07), the folders' estimated from their slowest tests and their count. Only the
# order units are handed out in reads them, so rough is enough; a folder's entry counts its modules
# not named on their own. tests/runs' modules named here use only the session's `srv` (which every
# process starts anyway for the other folders), so running them beside the rest starts nothing twice;
# the modules on `paced` and `idle` stay in the folder's unit, where those servers start once.
UNITS = {
    "faults/test_damaged_archive.py": 95,
    "faults/test_service.py": 130,
    "faults/test_model_store_faults.py": 45,
    "faults": 50,
    "benchmarks": 85,
    "seats/test_text_properties.py": 45,
    "arena/test_chess_grading.py": 15,
    "api/test_schemathesis.py": 35,
    "runs/test_model_resume.py": 35,
    "runs/test_arena_faults.py": 35,
    "runs/test_arena_runs.py": 30,
    "runs/test_model_faults.py": 30,
    "runs": 325,
    "console": 200,
    "agents": 170,
    "api": 160,
    "cluster/test_heads.py": 200,
    "cluster": 80,
    "analytics": 70,
    "mcp": 70,
    "seats": 60,
    "arena": 40,
    "docs": 50,
    "bundles": 40,
    "orchestrator": 20,
    "engine": 25,
    "grading": 10,
    "client": 15,
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
