"""Authenticated GET /api/v1/scenarios/:id under load, next to a bare FastAPI endpoint.

Both are served by uvicorn with one worker on 127.0.0.1 in the same run: ours through `studio serve`
on a fresh data dir, the bare one from this file. The load generator keeps 32 keep-alive connections
busy for 10 s each. It speaks HTTP/1.1 on raw asyncio streams because a full client library in
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


async def _load(port: int, path: str, headers: dict, clients: int, seconds: float) -> dict:
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"] + [f"{k}: {v}" for k, v in headers.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    latencies: list[float] = []
    errors: list[int] = []
    t0 = time.perf_counter()
    await asyncio.gather(*(_client(port, request, t0 + seconds, latencies, errors) for _ in range(clients)))
    elapsed = time.perf_counter() - t0
    latencies.sort()

    def pct(q: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 2)

    return {"requests": len(latencies), "non_200": len(errors), "requests_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": pct(0.50), "p99_ms": pct(0.99)}


def measure(port: int, path: str, headers: dict, clients: int, seconds: float) -> dict:
    asyncio.run(_load(port, path, headers, clients, min(1.0, seconds)))  # warm-up, discarded
    return asyncio.run(_load(port, path, headers, clients, seconds))


def start(cmd: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, **(env or {})})


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        import uvicorn
        uvicorn.run(bare_app(), host="127.0.0.1", port=args.serve_bare, log_level="warning", workers=1)
        return

    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        ours = start([sys.executable, "-m", "orchestrator.cli", "serve", "--port", str(port),
                      "--data-dir", str(Path(data_dir) / "data")], env={"PYTHONUNBUFFERED": "1"})
        try:
            token = re.search(r"dsk_[0-9a-f]{64}", ours.stdout.readline() + ours.stdout.readline()
                              + ours.stdout.readline()).group(0)
            base = f"http://127.0.0.1:{port}"
            wait_ready(base + "/api/v1", ours)
            auth = {"Authorization": f"Bearer {token}"}
            created = httpx.post(base + "/api/v1/scenarios", json=SCENARIO_BODY, headers=auth).json()
            path = "/api/v1/scenarios/" + created["scenario"]["id"]
            assert httpx.get(base + path, headers=auth).status_code == 200
            ours_result = measure(port, path, auth, args.clients, args.seconds)
        finally:
            stop(ours)

    port = free_port()
    bare = start([sys.executable, __file__, "--serve-bare", str(port)])
    try:
        wait_ready(f"http://127.0.0.1:{port}/api/v1/scenarios/usc_0", bare)
        bare_result = measure(port, "/api/v1/scenarios/usc_0", {}, args.clients, args.seconds)
    finally:
        stop(bare)

    ratio = ours_result["requests_per_s"] / bare_result["requests_per_s"]
    print(json.dumps({
        "benchmark": "api",
        "what": "authenticated GET /api/v1/scenarios/:id vs a bare FastAPI endpoint, uvicorn one worker each",
        "clients": args.clients, "seconds": args.seconds,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "ours": ours_result, "bare": bare_result,
        "targets": {
            "throughput_vs_bare": {"goal": ">= 0.5 of bare requests/s", "measured": round(ratio, 3),
                                   "met": ratio >= 0.5},
            "p99_ms": {"goal": "< 50 ms", "measured": ours_result["p99_ms"], "met": ours_result["p99_ms"] < 50},
        },
    }, indent=2))


if __name__ == "__main__":
    main()
