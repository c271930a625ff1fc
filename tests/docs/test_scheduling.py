"""`make test`'s units (tests/scheduling.py): every folder of tests is named, so no test is left
without a unit, and a module named on its own is one that exists."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.scheduling import UNITS, heaviest_first, unit_of

TESTS = Path(__file__).resolve().parents[1]


def test_every_folder_of_tests_is_named_and_every_named_module_exists():
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    named = {u for u in UNITS if "/" not in u}
    assert folders == named, f"not named: {sorted(folders - named)}; gone: {sorted(named - folders)}"
    assert all((TESTS / u).is_file() for u in UNITS if "/" in u), "a module named in UNITS is gone"
    assert unit_of(TESTS / "faults" / "test_damaged_archive.py") == "faults/test_damaged_archive.py"
    assert unit_of(TESTS / "faults" / "test_requests.py") == "faults"


def test_a_folder_not_named_is_refused():
    with pytest.raises(ValueError, match="tests/newfolder is not named"):
        unit_of(TESTS / "newfolder" / "test_x.py")


def test_units_are_handed_out_heaviest_first_each_in_its_own_order():
    paths = ["grading/test_a.py", "runs/test_a.py", "faults/test_service.py", "runs/test_b.py", "grading/test_a.py",
             "runs/test_model_resume.py"]
    items = [SimpleNamespace(path=TESTS / p, n=i) for i, p in enumerate(paths)]
    heaviest_first(items)
    assert [i.n for i in items] == [1, 3, 2, 5, 0, 4]  # runs, faults/test_service.py, runs/test_model_resume.py, grading
