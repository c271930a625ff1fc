"""Runs/s of `studio serve --ray-address` on a real loopback Ray cluster of 1 node vs 2 nodes of one
CPU each, measured side by side. Prints one JSON object.

Each repeat starts both clusters in turn (the order swaps every repeat), joins a fresh service to
each, plays one untimed warm-up series, then times one scripted series from launch to every result
readable and the series compacted. Both nodes live on this machine, so the 2-node figure shows that
the work spreads over nodes, not what two machines would give; the head process (the service)
shares the same cores in both cases.

    python benchmarks/cluster.py [--trials 40] [--ticks 300] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def spread(values: list[float], digits: int = 2) -> dict:
    return {"min": round(min(values), digits), "median": round(statistics.median(values), digits),
            "max": round(max(values), digits)}


def timed_series(service, trials: int, ticks: int) -> tuple[float, set[str]]:
    from analytics.archive.layout import EVENTS_DIR, series_archived, series_files
    from tests.cluster.harness import series_body, wait_runs

    with service.client() as c:
        t0 = time.perf_counter()
        r = c.post("/api/v1/runs", json=series_body(trials, ticks))
        assert r.status_code == 201, r.text
        series = r.json()["batch"]
        bodies = wait_runs(c, series["run_ids"])
        while not series_archived(service.data_dir, EVENTS_DIR, series["batch_id"]):
            time.sleep(0.01)
        wall = time.perf_counter() - t0
    assert all(b["run"]["status"] == "finished" for b in bodies)
    import pyarrow.parquet as pq

    nodes = {m["node_id"] for path in series_files(service.data_dir, EVENTS_DIR, series["batch_id"])
             for m in json.loads(pq.read_schema(path).metadata[b"studio"])["matches"].values()}
    return wall, nodes


def one(nodes: int, trials: int, ticks: int, tmp: Path) -> tuple[float, int]:
    from tests.cluster.harness import LoopbackCluster, serve

    cluster = LoopbackCluster(nodes)
    try:
        # every log written (config [archive] events): the nodes that played are read from the logs' files
        service = serve(Path(tempfile.mkdtemp(dir=tmp)) / "data", cluster.address,
                        config='[archive]\nevents = "stored"\n')
        try:
            timed_series(service, max(2, trials // 4), ticks)  # workers up, kernels loaded
            wall, used = timed_series(service, trials, ticks)
        finally:
            service.stop()
    finally:
        cluster.shutdown()
    return trials / wall, len(used)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="studio-cluster-bench-"))
    rates: dict[int, list[float]] = {1: [], 2: []}
    used: dict[int, set] = {1: set(), 2: set()}
    try:
        for rep in range(a.repeats):
            for nodes in ((1, 2) if rep % 2 == 0 else (2, 1)):
                rate, n_used = one(nodes, a.trials, a.ticks, tmp)
                rates[nodes].append(rate)
                used[nodes].add(n_used)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    speedup = [two / one_ for one_, two in zip(rates[1], rates[2])]
    print(json.dumps({
        "benchmark": "cluster",
        "setup": {"nodes": [1, 2], "cpus_per_node": 1, "trials_per_series": a.trials, "agents": 8, "roster": "4 local seats + the 4 anchors of anchors-v1",
                  "ticks": a.ticks, "repeats": a.repeats, "machine_cores": len(__import__("os").sched_getaffinity(0)),
                  "nodes_that_played": {str(k): sorted(v) for k, v in used.items()}},
        "figures": {
            "runs_per_s_1_node": {**spread(rates[1]), "unit": "runs/s"},
            "runs_per_s_2_nodes": {**spread(rates[2]), "unit": "runs/s"},
            "speedup_2_over_1": {**spread(speedup, 3), "unit": "ratio", "note": "per repeat, side by side"},
        },
        "targets": [{"target": "a second node adds throughput", "goal": "> 1.0",
                     "measured": round(statistics.median(speedup), 3), "met": statistics.median(speedup) > 1.0}],
    }, indent=1))


if __name__ == "__main__":
    main()
