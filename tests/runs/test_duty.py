"""A head's dispatching duty in-process, two heads on one data dir: only the lease holder dispatches; a
head that finds its lease taken (as after a stall past it) stops dispatching at once, and the other
head, waiting, takes it; a clean stop hands the lease over at once. The kill -9 of a head and its
series' exact counts are tests/cluster/test_heads.py's."""
from __future__ import annotations

from orchestrator.core import Core
from orchestrator.runs.head.duty import Busy, Duty
from tests.runs.conftest import CONFIG
from tests.waiting import until


def test_one_head_dispatches_and_a_head_that_loses_the_lease_stops(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(CONFIG)
    core_a, core_b = Core.open(data), Core.open(data)
    a = Duty(core_a, head="head-a", workers=1).start()
    b = None
    try:
        assert a.dispatching and core_a.dispatcher is not None
        try:
            Duty(Core.open(data), head="head-c", workers=1).start(wait=False)
            raise AssertionError("a second head took a held lease")
        except Busy as e:
            assert e.holder == "head-a"
        b = Duty(core_b, head="head-b", workers=1).start()  # waits for the lease
        assert not b.dispatching and core_b.dispatcher is None and core_b.agents is not None

        # head A stalled past its lease and head B took it: A finds it taken at its next renewal
        with core_a.store.write() as c:
            c.execute("UPDATE leases SET holder = 'head-b' WHERE name = 'dispatcher'")
        until(lambda: not a.dispatching and core_a.dispatcher is None, 30, what="head A giving up")
        until(lambda: b.dispatching and core_b.dispatcher is not None, 60, what="head B dispatching")
        assert not a.dispatching

        b.stop()  # a clean stop releases the lease: A, waiting again, takes it
        b = None
        until(lambda: a.dispatching and core_a.dispatcher is not None, 60, what="head A dispatching again")
    finally:
        if b is not None:
            b.stop()
        a.stop()
    assert core_a.dispatcher is None and core_a.agents is None
