"""`make test`'s two processes (tests/halves.py): every folder of tests is in exactly one half, so no
test is left out of `make test` and none runs twice."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.halves import HALVES, half_of

TESTS = Path(__file__).resolve().parents[1]


def test_every_folder_of_tests_is_in_exactly_one_half():
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    named = [f for half in HALVES.values() for f in half]
    assert sorted(named) == sorted(set(named)), "a folder is in both halves"
    assert folders == set(named), f"in no half: {sorted(folders - set(named))}; gone: {sorted(set(named) - folders)}"
    assert half_of(TESTS / "runs" / "test_faults.py") == "a" and half_of(TESTS / "faults" / "test_service.py") == "b"


def test_a_folder_in_no_half_is_named():
    with pytest.raises(ValueError, match="tests/newfolder is in neither half"):
        half_of(TESTS / "newfolder" / "test_x.py")
