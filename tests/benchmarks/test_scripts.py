"""The benchmark scripts run end to end in their smallest modes and print the shared JSON shape:
every figure with a unit and min <= median <= max, every target with its goal, measurement and a
boolean verdict. The two run side by side (each in its own processes) to keep the test short."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=900)  # a bound for a loaded machine, not a target
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out)


def spreads(node) -> list[dict]:
    """Every min / median / max figure anywhere in the output."""
    if isinstance(node, dict):
        found = [node] if {"min", "median", "max"} <= node.keys() else []
        return found + [s for v in node.values() for s in spreads(v)]
    if isinstance(node, list):
        return [s for v in node for s in spreads(v)]
    return []


def check_shape(out: dict, name: str) -> None:
    assert out["benchmark"] == name
    figures = spreads(out["figures"])
    assert figures
    for f in figures:
        assert isinstance(f["unit"], str) and f["unit"], f
        assert f["min"] <= f["median"] <= f["max"], f
    assert out["targets"]
    for t in out["targets"]:
        assert {"target", "goal", "measured", "unit", "met"} <= t.keys(), t
        assert isinstance(t["met"], bool)


def test_engine_and_scale_scripts_print_the_shared_json_shape():
    engine = start("engine.py", "--quick", "--pairs", "2")
    scale = start("scale.py", "--quick")
    e, s = result(engine), result(scale)

    check_shape(e, "engine")
    ab = e["figures"]["24x300"]
    assert len(ab["paired_ratio"]["pairs"]) == 2 and all(r > 0 for r in ab["paired_ratio"]["pairs"])
    assert ab["this_tree"]["living_agent_steps_per_cpu_s"]["median"] > 0 and ab["base"]["events"]["median"] > 0
    assert len(e["base"]["commit"]) == 12
    if not e["base"]["engine_differs"]:  # the same engine in two checkouts plays the same seasons
        assert ab["same_play"] is True
    (guard,) = e["targets"]
    assert guard["met"] == (guard["measured"] >= 0.95 or guard["pairs_span_1"])

    check_shape(s, "scale")
    scripted = s["figures"]["scripted"]
    assert scripted["runs"] == s["setup"]["series"] * s["setup"]["trials_per_series"]
    by_group = scripted["cpu_ms_per_run_by_group"]
    assert by_group["head"] > 0 and by_group["workers"] > 0 and by_group["ray_system"] >= 0
    assert scripted["cpu_ms_per_run_all_processes"]["value"] >= by_group["head"] + by_group["workers"] - 0.01
    assert scripted["head_ceiling_runs_per_s"]["value"] == round(1000 / by_group["head"], 1)
    assert scripted["engine_alone"]["cpu_ms_per_run"] > 0 and scripted["client_reads"]["reads"] >= s["setup"]["series"]
    parts = {k: v for k, v in scripted["cpu_ms_per_run_by_part"].items() if k != "unit"}
    assert parts["head"] == by_group["head"] and parts["engine_alone"] == scripted["engine_alone"]["cpu_ms_per_run"]
    # the parts add up to every process's CPU: nothing is counted twice or left out
    assert abs(sum(parts.values()) - scripted["cpu_ms_per_run_all_processes"]["value"]) < 0.01
    assert len(s["figures"]["model"]) == len(s["setup"]["model_phases"]) == 2
    for phase in s["figures"]["model"]:
        assert phase["status_counts"] == {"finished": phase["runs"]}, phase["first_error"]
        assert phase["finish_s"]["value"] >= phase["ideal_s"]["value"]
        assert phase["peak_rss_mb_sampled"]["value"] > 0 and phase["most_playing_at_once"] >= 1
    assert [t["unit"] for t in s["targets"]] == ["ms", "x", "s", "s"]


def test_sequential_script_prints_the_shared_json_shape():
    out = result(start("sequential.py", "--reps", "20", "--n", "30"))
    check_shape(out, "sequential")
    assert set(out["figures"]["coverage"]) == {"fitness_index", "survival", "economy", "social", "competitiveness",
                                               "exploration"}
    assert out["figures"]["until_vs_fixed"]["advised_fixed_n"] >= 2


def test_derived_script_prints_the_shared_json_shape():
    out = result(start("derived.py", "--matches", "4", "--ticks", "30"))
    check_shape(out, "derived")
    f = out["figures"]
    assert f["derived_log_served_cold_ms"]["median"] > 0 and f["engine_alone_ms_per_match"]["median"] > 0
    sizes = f["archive_bytes_per_match"]
    assert 0 < sizes["derived"]["value"] < sizes["stored"]["value"]
    (served,) = out["targets"]
    assert served["met"] == (served["measured"] <= 3)
