"""The grading queue's turns between accounts (orchestrator.grading.fair) and the `[grading]` settings."""
from __future__ import annotations

import pytest

from orchestrator.grading.fair import FairQueue
from orchestrator.grading.plan import MIN_PART, parts
from orchestrator.grading.settings import PART_DECISIONS, settings
from orchestrator.plans import ConfigError


def _drain(q: FairQueue, back: bool) -> list:
    out = []
    while (got := q.take()) is not None:
        out.append(got)
        if back:
            q.done(got[0])
    return out


def test_accounts_take_turns_and_each_keeps_its_own_order():
    q = FairQueue(per_account=4)
    for k in range(5):
        q.put("big", f"b{k}")
    q.put("small", "s0")
    q.put("small", "s1")
    assert [item for _, item in _drain(q, back=True)] == ["b0", "s0", "b1", "s1", "b2", "b3", "b4"]
    assert len(q) == 0


def test_an_account_at_its_cap_waits_while_others_go():
    q = FairQueue(per_account=2)
    for k in range(4):
        q.put("big", f"b{k}")
    assert [item for _, item in _drain(q, back=False)] == ["b0", "b1"]  # the cap: two out
    q.put("small", "s0")
    assert q.take() == ("small", "s0")
    assert q.take() is None
    q.done("big")
    assert q.take() == ("big", "b2")


def test_parts_are_bounded_so_a_slot_comes_free_often():
    decisions = [(t, 0) for t in range(1000)]
    got = parts(decisions, tasks=2, most=128)
    assert sum(got, []) == decisions and max(map(len, got)) <= 128 and len(got) == 8
    assert len(parts(decisions[:40], tasks=8, most=128)) == 40 // MIN_PART  # never below MIN_PART a part
    assert parts([], tasks=2, most=128) == []


def test_grading_settings_come_from_config():
    s = settings({}, cpus=6)
    assert (s.tasks, s.per_account, s.part_decisions) == (6, 6, PART_DECISIONS)
    s = settings({"grading": {"tasks": 8, "per_account": 3, "part_decisions": 32}}, cpus=6)
    assert (s.tasks, s.per_account, s.part_decisions) == (8, 3, 32)
    for bad in (0, -2, "4", 1.5, True):
        with pytest.raises(ConfigError, match="grading.per_account"):
            settings({"grading": {"per_account": bad}}, cpus=2)
