"""benchmarks/heads.py in its smoke mode: one JSON object in the benchmarks' shape, every figure
measured or said not to be, with the reason (a build whose heads cannot yet share one store)."""
from __future__ import annotations

from tests.benchmarks.test_scripts import check_shape, result, start


def _measured_or_said_why(figure: dict) -> bool:
    return figure.get("measured") is not False or bool(figure.get("reason"))


def test_heads_script_prints_the_shared_json_shape():
    out = result(start("heads.py", "--quick"))
    check_shape(out, "heads")
    f = out["figures"]
    limits = f["rate_limit_hit_us"]
    assert 0 < limits["memory"]["median"] and 0 < limits["sqlite"]["median"]
    assert _measured_or_said_why(limits["postgresql"])
    one = f["with_waiters"]["one_head"]
    assert one["launches_per_s"]["value"] > 0 and one["launches_per_s"]["launches"] > 0
    assert one["get_api_v1_ms"]["p50"] <= one["get_api_v1_ms"]["p99"] and one["get_api_v1_ms"]["probes"] > 0
    two = f["with_waiters"]["two_heads"]
    assert _measured_or_said_why(two)
    if two.get("measured") is not False:
        assert two["launches_per_s"]["launches"] > 0 and two["waiter_errors"] == 0
        assert "lease_taken_s" in f["failover"]
    assert f["head_cpu_per_run"]["sqlite"]["median"] > 0 and _measured_or_said_why(f["head_cpu_per_run"]["postgresql"])
    assert len(out["targets"]) == 3
    for t in out["targets"]:
        assert t["measured"] is not None or t["reason"], t
