"""Authenticated GET /api/v1/scenarios/:id under load, next to a bare FastAPI endpoint.

Both are served by uvicorn with one worker on 127.0.0.1 in the same run: ours through `studio serve`
on a fresh data dir, the bare one from this file. The load generator keeps 32 keep-alive connections
busy for 10 s per server, in 5 alternating 2 s slices so that other load on the machine weighs on both
figures alike. It speaks HTTP/1.1 on raw asyncio streams because a full client library in
Python would saturate its own core before the server does, and then both figures would measure the
client. Prints one JSON object.

    .venv/bin/python benchmarks/api.py [--clients 32] [--seconds 10]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
LOG_LEVEL = "warning"  # the same for both servers; below info uvicorn writes no access log
SCENARIO_BODY = {"name": "bench", "description": "benchmark scenario", "season_ticks": 300,
                 "env": {"seed": 7, "resources": {"food": {"max": 1.5}}, "anchors": ["anchors-v1"]}}


def bare_app():
    from fastapi import FastAPI

    app = FastAPI()
    view = {"scenario": {"id": "usc_0", **SCENARIO_BODY, "hash": "0" * 16, "base": "svc:custom-base-v1",
                         "created_at_ms": 0, "updated_at_ms": None}}

    @app.get("/api/v1/scenarios/{id}")
    async def get_scenario(id: str) -> dict:
        return view

    return app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


async def _client(port: int, request: bytes, stop_at: float, latencies: list[float], errors: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - t0)
            if not head.startswith(b"HTTP/1.1 200"):
                errors.append(int(head[9:12]))
    finally:
        writer.close()


async def _load(port: int, path: str, headers: dict, clients: int, seconds: float) -> tuple[list[float], int, float]:
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"] + [f"{k}: {v}" for k, v in headers.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    latencies: list[float] = []
    errors: list[int] = []
    t0 = time.perf_counter()
    await asyncio.gather(*(_client(port, request, t0 + seconds, latencies, errors) for _ in range(clients)))
    return latencies, len(errors), time.perf_counter() - t0


def summarize(latencies: list[float], errors: int, elapsed: float) -> dict:
    latencies = sorted(latencies)

    def pct(q: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 2)

    return {"requests": len(latencies), "non_200": errors, "requests_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": pct(0.50), "p99_ms": pct(0.99)}


def measure(targets: dict[str, tuple[int, str, dict]], clients: int, seconds: float, rounds: int) -> dict:
    """Alternate between the servers in `rounds` slices, so a busy neighbour on the machine weighs
    on both figures alike; each server gets `seconds` of load in total."""
    totals = {name: ([], 0, 0.0) for name in targets}
    for name, (port, path, headers) in targets.items():
        asyncio.run(_load(port, path, headers, clients, 1.0))  # warm-up, discarded
    for _ in range(rounds):
        for name, (port, path, headers) in targets.items():
            lat, err, elapsed = asyncio.run(_load(port, path, headers, clients, seconds / rounds))
            acc = totals[name]
            totals[name] = (acc[0] + lat, acc[1] + err, acc[2] + elapsed)
    return {name: summarize(*t) for name, t in totals.items()}


def start(cmd: list[str], out) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.DEVNULL, env=os.environ)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0, help="load per server, in total")
    parser.add_argument("--rounds", type=int, default=5, help="alternating slices per server")
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        import uvicorn
        uvicorn.run(bare_app(), host="127.0.0.1", port=args.serve_bare, log_level=LOG_LEVEL, workers=1)
        return

    with tempfile.TemporaryDirectory() as data_dir:
        # The operator's plan override lifts the per-token ceiling (600/min on lab), which this load
        # would pass in a tenth of a second; the ceiling check itself still runs on every request.
        (Path(data_dir) / "data").mkdir()
        (Path(data_dir) / "data" / "config.toml").write_text("[plans.lab]\nrequests_per_minute = 1000000000\n")
        out_path = Path(data_dir) / "serve.out"
        ours_port, bare_port = free_port(), free_port()
        with out_path.open("w") as out:  # a file, not a pipe: a full pipe would stall the server
            ours = start([sys.executable, "-m", "api.cli", "serve", "--port", str(ours_port), "--log-level",
                          LOG_LEVEL, "--data-dir", str(Path(data_dir) / "data")], out)
        bare = start([sys.executable, __file__, "--serve-bare", str(bare_port)], subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{ours_port}"
            wait_ready(base + "/api/v1", ours)
            wait_ready(f"http://127.0.0.1:{bare_port}/api/v1/scenarios/usc_0", bare)
            token = re.search(r"dsk_[0-9a-f]{64}", out_path.read_text()).group(0)
            auth = {"Authorization": f"Bearer {token}"}
            created = httpx.post(base + "/api/v1/scenarios", json=SCENARIO_BODY, headers=auth).json()
            path = "/api/v1/scenarios/" + created["scenario"]["id"]
            assert httpx.get(base + path, headers=auth).status_code == 200
            results = measure({"ours": (ours_port, path, auth), "bare": (bare_port, "/api/v1/scenarios/usc_0", {})},
                              args.clients, args.seconds, args.rounds)
        finally:
            stop(ours)
            stop(bare)
    ours_result, bare_result = results["ours"], results["bare"]

    ratio = ours_result["requests_per_s"] / bare_result["requests_per_s"]
    ok = ours_result["non_200"] == 0 and bare_result["non_200"] == 0  # figures of refused requests prove nothing
    print(json.dumps({
        "benchmark": "api",
        "what": "authenticated GET /api/v1/scenarios/:id vs a bare FastAPI endpoint, uvicorn one worker each",
        "clients": args.clients, "seconds_per_server": args.seconds, "alternating_rounds": args.rounds, "uvicorn_log_level": LOG_LEVEL,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "ours": ours_result, "bare": bare_result,
        "targets": {
            "throughput_vs_bare": {"goal": ">= 0.5 of bare requests/s", "measured": round(ratio, 3),
                                   "met": ratio >= 0.5 and ok},
            "p99_ms": {"goal": "< 50 ms", "measured": ours_result["p99_ms"], "met": ours_result["p99_ms"] < 50 and ok},
        },
    }, indent=2))


if __name__ == "__main__":
    main()
