"""The suite's tiers, as pytest markers (registered in pyproject.toml, applied in tests/conftest.py).

A test's tiers come from what it starts: its folder's default (the folders whose tests talk to a
server), the fixtures it uses (the session's Ray, a server, the browser), or a module's own
`pytestmark` where it differs from its folder. A test with none of service, cluster or browser is
`unit`, and a unit test that starts a server or Ray fails: `pytest -m unit` stays fast because it
cannot silently grow a slow test.
"""
from __future__ import annotations

import sys
from pathlib import Path

UNIT, SERVICE, CLUSTER, BROWSER, POSTGRES = "unit", "service", "cluster", "browser", "postgres"
TIERS = (UNIT, SERVICE, CLUSTER, BROWSER, POSTGRES)

# a folder's tiers for the modules that say nothing of their own
FOLDERS = {
    "agents": {SERVICE, CLUSTER},
    "api": {SERVICE},
    "benchmarks": {SERVICE, CLUSTER},
    "bundles": {SERVICE, CLUSTER},
    "cluster": {SERVICE, CLUSTER},
    "console": {SERVICE},
    "faults": {SERVICE, CLUSTER},
    "mcp": {SERVICE},
    "runs": {SERVICE, CLUSTER},
}
# fixtures (direct or through others) that bring a tier with them
FIXTURES = {
    "ray_pool": CLUSTER,
    "browser": BROWSER,
    "pg_url": POSTGRES,
    "live": SERVICE, "srv": SERVICE, "shared_srv": SERVICE, "idle": SERVICE, "playing": SERVICE, "reader": SERVICE,
}

_TESTS = Path(__file__).resolve().parent


def tiers_of(path: Path, fixturenames, marked: set[str]) -> set[str]:
    """The tiers of a test at `path` using these fixtures, given the tier markers it carries."""
    rel = Path(path).resolve().relative_to(_TESTS)
    found = set(marked) - {UNIT} if marked else set(FOLDERS.get(rel.parts[0], ()))
    found |= {tier for name, tier in FIXTURES.items() if name in fixturenames}
    if UNIT in marked and found:
        raise ValueError(f"{rel}: marked unit but it uses {sorted(found)}")
    return found or {UNIT}


# set while a unit test runs: what starts a server or Ray asks refuse() first
_unit_test: str | None = None


def running_unit(nodeid: str | None) -> None:
    global _unit_test
    _unit_test = nodeid


def refuse(what: str) -> None:
    """Raise if a unit test is running: it would start `what`, which belongs to another tier."""
    if _unit_test is not None:
        raise AssertionError(f"{_unit_test} is marked unit but starts {what}: give its module "
                             f"`pytestmark = pytest.mark.service` (or cluster), see tests/tiers.py")


def ray_running() -> bool:
    ray = sys.modules.get("ray")
    return bool(ray is not None and ray.is_initialized())
