"""Result bundles: their size, and what `studio verify` costs against the engine. Prints one JSON object.

A service plays in this process (Studio with play=True) on a fresh data dir: a scripted series of the
base world, and a model run of two model seats on the provider double of tests/. Each bundle is
verified in this process with the engine warm, and once by `studio verify --json` in a fresh process
(start-up included); the engine's own time is the same matches built, played and scored in a row.

    python benchmarks/bundle.py [--trials 50] [--ticks 300] [--model-ticks 100] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib import bundles
from benchmarks.lib.figures import spread, target
from benchmarks.lib.raytmp import ray_tmpdir
from benchmarks.series import CONFIG, body

EMAIL = "bundle-bench@example.org"
MODEL = "openai/gpt-4o-mini"


def engine_s(manifest: dict) -> float:
    """The manifest's matches built, played and scored by the engine alone, one after another."""
    from engine.scenario import build_match, seat_specs

    t0 = time.perf_counter()
    for m in manifest["matches"]:
        match = build_match(m["scenario"]["season_ticks"], m["scenario"]["env"],
                            seat_specs([s["model"] for s in m["roster"]]))
        match.run()
        match.results()
    return time.perf_counter() - t0


def verify_s(data: bytes, repeats: int) -> list[float]:
    from orchestrator.bundles import verify

    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        report = verify.verify(data)
        out.append(time.perf_counter() - t0)
        assert report.status == verify.VERIFIED, report.as_json()
    return out


def manifest_of(data: bytes) -> dict:
    from orchestrator.bundles import layout

    return layout.read(data)[0]


def measured(name: str, data: bytes, tmp: Path, repeats: int) -> tuple[dict, list[float]]:
    path = tmp / f"{name}.studio-bundle.zip"
    path.write_bytes(data)
    status, report, wall = bundles.verify_apart(path)
    assert status == 0, report
    times = verify_s(data, repeats)
    return {"bundle_bytes": {"value": len(data), "unit": "bytes"},
            "verify_s": spread(times, "s", 3, note="the whole bundle, in this process, engine warm"),
            "verify_fresh_process_s": {"value": round(wall, 2), "unit": "s",
                                       "note": "studio verify --json, start-up and engine load included"},
            "matches": report["matches"]}, times


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=50)
    p.add_argument("--ticks", type=int, default=300)
    p.add_argument("--model-ticks", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    with ray_tmpdir("bb") as tmp:
        out = run(a, tmp)
    print(json.dumps(out, indent=2))


def run(a, tmp: Path) -> dict:
    from api.python import Studio
    from engine.warm import warm
    from orchestrator import accounts, auth
    from orchestrator.core import Core
    from orchestrator.seats import keys
    from tests.seats.fake_provider import FakeProvider

    data_dir = tmp / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text(CONFIG)
    core = Core.open(data_dir)
    accounts.create_account(core, EMAIL, plan="lab", verified=True)
    token, _ = auth.mint(core, EMAIL, scopes=("scenarios:read", "runs:read", "runs:write"))
    warm()
    with FakeProvider() as fake, Studio(data_dir, token, play=True) as studio:
        fake.defaults[MODEL] = {"calls": [("move", {"direction": "north"}), ("gather", {})], "usage": (120, 20)}
        keys.set_key(core, provider="router", key="k-bench", email=EMAIL, base_url=fake.url + "/v1")
        t0 = time.perf_counter()
        series = studio.launch_run(**body(a.trials, a.ticks))["batch"]["batch_id"]
        studio.wait_series(series, timeout_s=3600)
        played_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        scripted = studio.bundle(series)
        bundled_s = time.perf_counter() - t0
        run_id = studio.launch_run(scenario_id="svc:custom-base-v1", season_ticks=a.model_ticks, roster=[
            {"model": MODEL, "name": "tools"}, {"model": MODEL, "name": "json", "format": "json"}])["run"]["run_id"]
        studio.wait(run_id, timeout_s=3600)
        model = studio.bundle(run_id)
    series_fig, times = measured("series", scripted, tmp, a.repeats)
    engine = [engine_s(manifest_of(scripted)) for _ in range(a.repeats)]
    ratios = [v / e for v, e in zip(times, engine)]
    model_fig, _ = measured("model", model, tmp, a.repeats)
    ratio = sorted(ratios)[len(ratios) // 2]
    return {
        "benchmark": "bundle",
        "setup": {"series": {"trials": a.trials, "agents": 24, "ticks": a.ticks},
                  "model_run": {"ticks": a.model_ticks, "seats": ["tools", "json"], "provider": "the test double",
                                "anchors": "the base world's"},
                  "cpus": os.cpu_count(), "python": platform.python_version(),
                  "note": "one process; the machine may be shared"},
        "figures": {
            "scripted_series": {**series_fig,
                                "engine_s": spread(engine, "s", 3, note="the same matches: build, play, score"),
                                "verify_over_engine": spread(ratios, "x", 2),
                                "played_s": {"value": round(played_s, 1), "unit": "s",
                                             "note": "launch to every trial ended"},
                                "bundled_s": {"value": round(bundled_s, 1), "unit": "s",
                                              "note": "Studio.bundle: derived logs regenerated and hashed"}},
            "model_run": model_fig,
        },
        "targets": [target("verifying the scripted series over the engine's time for its matches", "<= 1.7",
                           round(ratio, 2), "x", ratio <= 1.7)],
    }


if __name__ == "__main__":
    main()
