"""benchmarks/suite.py on a small slice of the suite: the shared JSON shape, the tree's CPU by kind of
process adding up, and a Ray worker of the service costing more to start than a bare actor (it
imports the service)."""
from __future__ import annotations

from tests.benchmarks.test_scripts import check_shape, result, start


def test_suite_script_prints_cpu_by_kind_and_actor_starts():
    out = result(start("suite.py", "--pytest-args", "-q -p no:randomly tests/grading", "--actor-repeats", "1"))
    check_shape(out, "suite")
    ran = out["figures"]["suite"]
    assert ran["exit_code"] == 0 and "passed" in ran["summary"], ran
    kinds = ran["by_kind"]
    assert kinds["test processes"]["cpu_s"] > 0 and kinds["test processes"]["processes"] >= 1, kinds
    assert abs(sum(k["cpu_s"] for k in kinds.values()) - ran["tree_cpu_s"]["median"]) < 0.1 * len(kinds), ran
    assert 0 < ran["machine_busy_fraction"] <= 1, ran
    starts = out["figures"]["ray_worker_start_cpu_s"]
    assert 0 < starts["bare"]["median"] < starts["match_worker"]["median"], starts
    assert starts["model_worker"]["median"] > starts["bare"]["median"], starts
    (goal,) = out["targets"]
    assert goal["met"] == (goal["measured"] < 600)
