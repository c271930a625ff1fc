"""A real Ray cluster of one or two nodes on loopback and `studio serve --ray-address` joined to it,
for the cluster test and benchmarks/cluster.py.

Settings that make a loopback cluster work here (see the shared notes): Ray must not rewrite
127.0.0.1 to the machine's address, auth is set explicitly, and the cluster keeps its files in a
private temp dir so it never meets another process's Ray under /tmp/ray. Never `ray stop`: it ends
every Ray process on the machine by name; `Cluster.shutdown` ends only this cluster's.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import collections
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.api.util import bearer, free_port

RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"}
CONFIG = """
[plans.lab]
requests_per_minute = 1000000
[limits]
refused_per_address_per_minute = 1000000
"""
TERMINAL = ("finished", "failed", "cancelled")


class LoopbackCluster:
    """`nodes` Ray nodes of one CPU each on 127.0.0.1; node ids in `node_ids` (head first)."""

    def __init__(self, nodes: int):
        from ray.cluster_utils import Cluster

        # Unix socket paths must stay short: a private dir directly under /tmp
        self.tmp = tempfile.mkdtemp(prefix="rc", dir="/tmp")
        self._saved = {k: os.environ.get(k) for k in (*RAY_ENV, "RAY_TMPDIR")}
        os.environ.update(RAY_ENV, RAY_TMPDIR=self.tmp)
        os.makedirs(os.path.join(self.tmp, "ray"), exist_ok=True)  # Ray writes its address file here
        self.cluster = Cluster(initialize_head=True, head_node_args=dict(
            num_cpus=1, resources={"node_head": 1}, node_ip_address="127.0.0.1", include_dashboard=False))
        for _ in range(nodes - 1):
            self.cluster.add_node(num_cpus=1, resources={"node_worker": 1}, node_ip_address="127.0.0.1")
        self.cluster.wait_for_nodes()
        self.node_ids = [n.node_id for n in self.cluster.list_all_nodes()]

    @property
    def address(self) -> str:
        return self.cluster.address

    def shutdown(self) -> None:
        self.cluster.shutdown()
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.tmp, ignore_errors=True)


def terminate(proc: subprocess.Popen, timeout: float = 60) -> None:
    """SIGTERM, then SIGKILL when the process has not ended within `timeout` seconds."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Service:
    """`studio serve` in its own process, joined to a cluster; the owner token it printed."""
    proc: subprocess.Popen
    url: str
    token: str
    data_dir: Path
    output: collections.deque  # the service's last lines of output

    def log(self) -> str:
        return "".join(list(self.output))

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=bearer(self.token), timeout=60)

    def stop(self) -> None:
        terminate(self.proc)


def serve(data_dir: Path, ray_address: str, timeout: float = 180, config: str = "") -> Service:
    """config: more of config.toml (the archive's location, say)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text(CONFIG + config)
    port = free_port()
    studio = Path(sys.executable).with_name("studio")
    proc = subprocess.Popen([str(studio), "serve", "--data-dir", str(data_dir), "--port", str(port),
                             "--ray-address", ray_address], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=dict(os.environ))
    token, lines, deadline = None, [], time.monotonic() + timeout
    while token is None:  # the owner token is printed once, on its own line, on first start
        line = proc.stdout.readline()
        if not line and proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("studio serve did not print a token:\n" + "".join(lines))
        lines.append(line)
        if re.fullmatch(r"dsk_[0-9a-f]{64}", line.strip()):
            token = line.strip()
    # keep reading its output so the pipe never fills and blocks the service; its last lines explain a failure
    tail: collections.deque = collections.deque(lines, maxlen=400)
    threading.Thread(target=lambda: tail.extend(proc.stdout), daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(url + "/api/v1", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"studio serve did not answer on {url}")
        time.sleep(0.2)
    return Service(proc, url, token, data_dir, tail)


def wait_runs(c: httpx.Client, run_ids: list[str], timeout: float = 600) -> list[dict]:
    """Poll until every run is terminal with its results readable; the final GET bodies, in order."""
    done, deadline = {}, time.monotonic() + timeout
    while len(done) < len(run_ids):
        for rid in run_ids:
            if rid in done:
                continue
            body = c.get(f"/api/v1/runs/{rid}").json()
            if body["run"]["status"] in TERMINAL and (body["results"] is not None
                                                     or body["run"]["status"] != "finished"):
                done[rid] = body
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(run_ids) - len(done)} runs still playing")
        time.sleep(0.1)
    return [done[r] for r in run_ids]


def manifests(service: Service, run_ids: list[str]) -> dict[str, dict]:
    """Each run's archive manifest as the service recorded it (the store's `archived` column): the
    files its match left, and the node and process that wrote them."""
    import json
    import sqlite3

    db = sqlite3.connect(service.data_dir / "studio.db")
    try:
        marks = ",".join("?" * len(run_ids))
        return {r: json.loads(a) for r, a in db.execute(f"SELECT id, archived FROM runs WHERE id IN ({marks})",
                                                         run_ids)}
    finally:
        db.close()


def series_body(trials: int, ticks: int) -> dict:
    policies = ("honest-trader", "greedy-harvester", "aggressive-raider", "random")
    return {"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "trials": trials,
            "roster": [{"model": f"local/{p}"} for p in policies]}


class Head:
    """One head of a service of several (tests/cluster/test_heads.py, benchmarks/heads.py): `studio serve`
    joined to a cluster, with `env` added (the store's URL, the secret key file); its output kept.
    `health()` says whether it dispatches."""

    def __init__(self, data_dir: Path, ray_address: str, env: dict):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        studio = Path(sys.executable).with_name("studio")
        self.proc = subprocess.Popen([str(studio), "serve", "--data-dir", str(data_dir), "--port", str(self.port),
                                      "--ray-address", ray_address], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env={**os.environ, **env})
        self.output: collections.deque = collections.deque(maxlen=400)
        self._reader = threading.Thread(target=lambda: self.output.extend(self.proc.stdout), daemon=True)
        self._reader.start()

    def log(self) -> str:
        return "".join(self.output)

    def health(self) -> dict | None:
        try:
            r = httpx.get(self.url + "/api/v1/health", timeout=5)
        except httpx.HTTPError:
            return None
        return r.json() if r.status_code == 200 else None

    def wait_up(self, timeout: float = 240) -> dict:
        deadline = time.monotonic() + timeout
        while (h := self.health()) is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"studio serve on {self.url} did not come up:\n{self.log()}")
            time.sleep(0.3)
        return h

    def token(self) -> str:
        for line in list(self.output):
            if line.strip().startswith("dsk_") and len(line.strip()) == 68:
                return line.strip()
        raise AssertionError("no owner token printed:\n" + self.log())

    def stop(self) -> None:
        terminate(self.proc)
        self._reader.join(timeout=10)
        self.proc.stdout.close()
