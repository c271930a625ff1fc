"""A thousand agents long-polling one agent seat (CONTRACT.md section 13): how soon they are answered
when the seat's turn opens, and how the API answers everyone else meanwhile. Prints one JSON object.

`studio serve` runs in its own process on a fresh data dir (as benchmarks/scale.py starts it). One
world run has two agent seats: seat 0, which the waiters watch, and seat 1, which this benchmark
plays to hold each tick open for as long as it likes (a tick plays when both seats have acted).
Each round:
1. seat 0's turn of tick k is open; the benchmark answers it, so seat 0 has no open turn;
2. `--waiters` connections (spread over `--tokens` access tokens) each send
   GET /api/v1/runs/:id/seats/0/turn?wait_ms=30000 and wait; in the first round this opens the
   connections, later rounds reuse them (keep-alive), as agents that loop on the turn do;
3. after `--settle` s, the benchmark answers seat 1's turn: tick k plays, and tick k+1 opens both
   seats' turns; every waiter's answer is `your_turn`.
A waiter's wake-up is the time from the turn opening (its deadline_ms less the run's turn_timeout_ms:
the seat was in touch when it opened, so its clock ran from the opening) to the answer reaching the
client, both on this machine's wall clock. Meanwhile a separate process asks GET /api/v1 every 20 ms
on its own connection: its latencies, while the waiters connect and wait (steps 2 and 3 up to the
opening) and from the opening until the last waiter is answered, are the API's for everyone else.

The clients speak HTTP/1.1 on raw asyncio streams (as benchmarks/api.py's do): a full client library
would spend more of the one event loop than the server does.

    .venv/bin/python benchmarks/longpoll.py [--waiters 1000] [--tokens 5] [--rounds 3] [--settle 2]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.figures import spread, target

CONFIG = """[plans.lab]
requests_per_minute = 100000000
[limits]
refused_per_address_per_minute = 1000000
"""
TURN_TIMEOUT_MS = 120_000  # the benchmark holds a tick open for a round: well past any round's length
WAKE_GOAL_S = 1.0
PROBE_GOAL_MS = 100.0
PROBE_EVERY_S = 0.02


def _request(method: str, path: str, token: str | None, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    return int(head[9:12]), await reader.readexactly(length)


class Conn:
    """One keep-alive connection: a waiter's, or the benchmark's own."""

    def __init__(self, port: int, token: str):
        self.port, self.token = port, token
        self.reader = self.writer = None

    async def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, float]:
        """(status, JSON body, epoch seconds the answer arrived)."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 20)
        self.writer.write(_request(method, path, self.token, json.dumps(body).encode() if body is not None else b""))
        status, raw = await _answer(self.reader)
        return status, json.loads(raw), time.time()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def probe(port: int, stop, out) -> None:
    """In its own process: GET /api/v1 every PROBE_EVERY_S on one connection; (epoch start, seconds)."""
    async def go():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        got = []
        while not stop.is_set():
            t0, w0 = time.perf_counter(), time.time()
            writer.write(_request("GET", "/api/v1", None))
            await _answer(reader)
            got.append((w0, time.perf_counter() - t0))
            await asyncio.sleep(PROBE_EVERY_S)
        writer.close()
        return got
    out.send(asyncio.run(go()))


async def turn(c: Conn, run_id: str, seat: int, wait_ms: int = 30_000) -> tuple[dict, float]:
    status, body, at = await c.call("GET", f"/api/v1/runs/{run_id}/seats/{seat}/turn?wait_ms={wait_ms}")
    assert status == 200, body
    return body, at


async def act(c: Conn, run_id: str, seat: int, tick: int) -> None:
    status, body, _ = await c.call("POST", f"/api/v1/runs/{run_id}/seats/{seat}/actions",
                                   {"tick": tick, "actions": [{"action": "wait"}]})
    assert status == 200, body


async def rounds(a, port: int, run_id: str, tokens: list[str]) -> list[dict]:
    me = Conn(port, tokens[0])
    waiters = [Conn(port, tokens[k % len(tokens)]) for k in range(a.waiters)]
    out = []
    try:
        first, _ = await turn(me, run_id, 1)  # the match has begun: both seats' tick-0 turns are open
        while first["status"] != "your_turn":
            first, _ = await turn(me, run_id, 1)
        tick = first["tick"]
        opened, _ = await turn(me, run_id, 0)  # seat 0 in touch: its turn opens now
        for _ in range(a.rounds):
            await act(me, run_id, 0, tick)  # seat 0 has no open turn until tick + 1
            t_ask = time.time()
            asks = [asyncio.ensure_future(turn(w, run_id, 0)) for w in waiters]
            await asyncio.sleep(a.settle)
            t_sent = time.time()
            await act(me, run_id, 1, tick)  # tick plays; tick + 1 opens
            answers = await asyncio.gather(*asks)
            tick += 1
            assert all(b["status"] == "your_turn" and b["tick"] == tick for b, _ in answers), answers[:3]
            opened_at = answers[0][0]["deadline_ms"] / 1000 - TURN_TIMEOUT_MS / 1000
            out.append({"answer_bytes": len(json.dumps(answers[0][0])), "asked_at": t_ask, "settled_at": t_sent, "opened_at": opened_at,
                        "wake_s": [at - opened_at for _, at in answers], "last_at": max(at for _, at in answers)})
            mine, _ = await turn(me, run_id, 1)
            assert mine["status"] == "your_turn" and mine["tick"] == tick, mine
    finally:
        for w in waiters + [me]:
            w.close()
    return out


def run(a, tmp: Path) -> dict:
    import httpx

    from benchmarks.series import serve
    from orchestrator import accounts, auth
    from orchestrator.core import Core
    from tests.api.util import bearer, free_port

    data_dir = tmp / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text(CONFIG)
    core = Core.open(data_dir)
    accounts.create_account(core, "bench@example.org", plan="lab", verified=True)
    tokens = [auth.mint(core, "bench@example.org", scopes=auth.SCOPES)[0] for _ in range(a.tokens)]
    service = serve(data_dir, port := free_port(), tmp / "serve.log")
    stop, (mine, theirs) = multiprocessing.Event(), multiprocessing.Pipe()
    prober = None
    try:
        body = {"scenario_id": "svc:custom-base-v1", "season_ticks": max(10, a.rounds + 1),
                "env": {"turn_timeout_ms": TURN_TIMEOUT_MS, "anchors": []},
                "roster": [{"provider": "agent", "model": "watched"}, {"provider": "agent", "model": "bench"}]}
        r = httpx.post(f"http://127.0.0.1:{port}/api/v1/runs", json=body, headers=bearer(tokens[0]), timeout=60)
        assert r.status_code == 201, r.text
        run_id = r.json()["run"]["run_id"]
        prober = multiprocessing.Process(target=probe, args=(port, stop, theirs))
        prober.start()
        got = asyncio.run(rounds(a, port, run_id, tokens))
        stop.set()
        probes = mine.recv()
        prober.join(timeout=30)
    finally:
        stop.set()
        if prober is not None and prober.is_alive():
            prober.kill()
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(service.pid, signal.SIGKILL)
    waiting = [s * 1000 for r in got for t, s in probes if r["asked_at"] <= t < r["opened_at"]]
    waking = [s * 1000 for r in got for t, s in probes if r["opened_at"] <= t <= r["last_at"]]
    lasts = [max(r["wake_s"]) for r in got]
    wakes = [w for r in got for w in r["wake_s"]]
    worst_ms = max(waiting + waking)
    return {
        "benchmark": "longpoll",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "load_avg_1m_at_end": round(os.getloadavg()[0], 2)},
        "setup": {"waiters": a.waiters, "tokens": a.tokens, "rounds": a.rounds, "settle_s": a.settle,
                  "wait_ms": 30_000, "probe_every_s": PROBE_EVERY_S, "first_round_connects": True,
                  "answer_bytes": got[0]["answer_bytes"]},
        "figures": {
            "wake_s_every_waiter": spread(wakes, "s", 3, samples=len(wakes)),
            "wake_s_last_waiter_per_round": spread(lasts, "s", 3, rounds=[round(x, 3) for x in lasts]),
            "api_get_ms_while_waiters_connect_and_wait": spread(waiting, "ms", 1, samples=len(waiting)),
            "api_get_ms_while_waiters_are_answered": spread(waking, "ms", 1, samples=len(waking)) if waking else None,
        },
        "targets": [
            target(f"{a.waiters} waiters answered after their turn opens, the last of them (worst round)",
                   f"<= {WAKE_GOAL_S}", round(max(lasts), 3), "s", max(lasts) <= WAKE_GOAL_S),
            target("GET /api/v1 meanwhile, the slowest", f"< {PROBE_GOAL_MS:g}", round(worst_ms, 1), "ms",
                   worst_ms < PROBE_GOAL_MS),
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--waiters", type=int, default=1000)
    ap.add_argument("--tokens", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settle", type=float, default=2.0, help="seconds the waiters wait before their turn opens")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="lp", dir="/tmp")  # short: Ray's socket paths live under it
    os.environ["RAY_TMPDIR"] = tmp
    os.makedirs(os.path.join(tmp, "ray"), exist_ok=True)
    try:
        result = run(a, Path(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
