"""The service as an operator runs it (`studio serve` in its own process): start-up refusals, kill -9
and SIGTERM with a run playing, a second server on the same data dir, secrets kept out of the log."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil

from api.cli import main
from tests.api.util import bearer, free_port, serve_refused, wait_until_up
from tests.faults.conftest import fill
from tests.waiting import until

STUDIO = [sys.executable, "-m", "api.cli"]
CONFIG = "[runs]\nmin_tick_ms = 20\n"
AGENTS = {"ray::DashboardAgent", "ray::RuntimeEnvAgent"}
GONE_WITHIN_S = 20
TERMINAL = ("finished", "failed", "cancelled")
MODEL_TICKS = 60
# bounds for a loaded machine, not targets: a start of the service (and its Ray), and a run's first
# ticks (its workers warm up after the service answers), wait on every other process of the machine
UP_WITHIN_S = WAITED_S = 300
FAST_MS, SLOW_MS = 40, 1000  # a model turn's provider latency; SLOW_MS well inside the run's turn timeout


def _serve(data_dir: Path, port: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen([*STUDIO, "serve", "--data-dir", str(data_dir), "--port", str(port)],
                            stdout=open(log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)


def _refused(data_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*STUDIO, "serve", "--data-dir", str(data_dir), "--port", str(free_port())],
                          capture_output=True, text=True, timeout=UP_WITHIN_S)


def _refused_here(data_dir: Path, monkeypatch, capsys) -> subprocess.CompletedProcess:
    return serve_refused(data_dir, "--port", str(free_port()), monkeypatch=monkeypatch, capsys=capsys)


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    """The server's process group: itself and the local Ray it started (never anyone else's)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _token(log: Path) -> str:
    for line in log.read_text().splitlines():
        if line.startswith("dsk_"):
            return line.strip()
    raise AssertionError("no owner token printed")


def _wait(c: httpx.Client, rid: str, ok, timeout: float = WAITED_S) -> dict:
    def reached():
        run = c.get(f"/api/v1/runs/{rid}").json()["run"]
        return run if ok(run) else None
    return until(reached, timeout, every=0.1, what=f"run {rid} reaching the state awaited")


def test_start_up_refusals_are_one_line_and_exit_2(tmp_path, tmpfs, monkeypatch, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], check=True)
    try:
        r = _refused(ro)
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, r.stderr
        assert "not writable" in r.stderr and "Ray" not in r.stderr + r.stdout
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)
    data = tmpfs / "data"
    data.mkdir()
    filler = fill(tmpfs)
    try:
        r = _refused_here(data, monkeypatch, capsys)  # the read-only one above is refused in its own process
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, r.stderr
        assert "full" in r.stderr or "MiB free" in r.stderr
    finally:
        filler.unlink()


def _ray_tree(proc: subprocess.Popen) -> list[psutil.Process]:
    """The processes under the service, once its private Ray's agents are among them."""
    def started():
        procs = psutil.Process(proc.pid).children(recursive=True)
        names = set()
        for p in procs:
            try:
                names.add(p.name())
            except psutil.Error:
                pass
        return procs if AGENTS <= names else None
    return until(started, 60, every=0.5, what="Ray's agents under the service")


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def _kill(procs: list[psutil.Process]) -> None:
    for p in _alive(procs):
        try:
            p.kill()
        except psutil.Error:
            pass


def test_kill_9_and_sigterm_lose_no_run(tmp_path, monkeypatch, capsys):
    """One data dir, served three times, with a scripted run and a model run (a provider double)
    playing. kill -9 of the service alone, as an operator kills it, ends every process of its private
    Ray (issue 50 F13: `ray::DashboardAgent` and `ray::RuntimeEnvAgent` used to stay on, reparented to
    init and deaf to SIGTERM; only this service's processes are looked at) and loses neither run: the
    scripted one is replayed and metered once, the model one resumes from its recorded turns. SIGTERM
    drains the model run at a tick boundary and leaves a scripted run playing for the next start, which
    finishes the model run once, with a transcript turn for every metered turn. One test: each start of
    the service and its Ray is a long wait, and every phase reads what the one before left."""
    from tests.seats.fake_provider import FakeProvider

    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(CONFIG)
    log = tmp_path / "serve.log"
    scripted = {"scenario_id": "svc:custom-base-v1", "season_ticks": 150,
                "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]}
    seats = [{"model": "qwen2.5-7b", "provider": "openai-compatible", "name": f"q{k}"} for k in range(2)]
    model = {"scenario_id": "svc:custom-base-v1", "season_ticks": MODEL_TICKS, "roster": seats,
             "env": {"turn_timeout_ms": 5000, "anchors": []}}
    # the model run's pace: a turn takes FAST_MS, or SLOW_MS while the test waits on something else, so
    # that the run is still playing when the service is killed or stopped, however loaded the machine
    pace = {"delay_ms": FAST_MS}
    with FakeProvider() as fake:
        fake.defaults["qwen2.5-7b"] = lambda _: {"calls": [("gather", {})], "usage": (100, 10), **pace}
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        first = _serve(data, port, log)
        tree: list[psutil.Process] = []
        try:
            wait_until_up(url, first, UP_WITHIN_S, log=log)
            tree = _ray_tree(first)  # Ray's own processes; those it starts for the runs the reaper finds alike
            token = _token(log)
            assert oct(data.stat().st_mode & 0o777) == "0o700"
            assert oct((data / "studio.db").stat().st_mode & 0o777) == "0o600"
            second = _refused_here(data, monkeypatch, capsys)  # the data dir is taken (by that process)
            assert second.returncode == 2 and "in use by another `studio serve`" in second.stderr
            with httpx.Client(base_url=url, headers=bearer(token), timeout=30) as c:
                email = c.get("/api/v1/me").json()["user"]["email"]
                # the admin command beside the running service, in this process (tests/api/test_cli.py runs
                # it as its own)
                assert main(["key", "set", "--data-dir", str(data), "--email", email, "--provider",
                             "openai-compatible", "--key", "k-local", "--base-url", fake.url + "/v1",
                             "--usd-per-mtok-in", "1", "--usd-per-mtok-out", "1", "--no-check"]) == 0
                mid = c.post("/api/v1/runs", json=model).json()["run"]["run_id"]
                _wait(c, mid, lambda r: r["status"] == "running" and r["live"]["tick"] >= 8)
                pace["delay_ms"] = SLOW_MS
                rid = c.post("/api/v1/runs", json=scripted).json()["run"]["run_id"]
                _wait(c, rid, lambda r: r["status"] == "running" and r["live"]["tick"] > 0)
                assert c.get(f"/api/v1/me?api_key={token}").status_code == 200
            os.kill(first.pid, signal.SIGKILL)  # the service alone, not its process group
            first.wait(timeout=30)
            try:
                until(lambda: not _alive(tree), GONE_WITHIN_S, every=0.2, what="the killed service's Ray to end")
            except AssertionError:
                left = ", ".join(f"{p.pid} {p.name()} (parent {p.ppid()})" for p in _alive(tree))
                raise AssertionError(f"still running {GONE_WITHIN_S} s after kill -9 of the service: {left}") from None
        finally:
            _kill(tree)
            _kill_group(first, signal.SIGKILL)
            first.wait(timeout=30)
        text = log.read_text()  # the token once, where it was shown to the owner; the access log redacted it
        assert text.count(token) == 1 and "api_key=[redacted]" in text

        pace["delay_ms"] = FAST_MS
        again, url = _serve_up(data, log)  # the kernel released the lock with the process
        try:
            with httpx.Client(base_url=url, headers=bearer(token), timeout=30) as c:
                _wait(c, mid, lambda r: r["status"] == "running" and r["live"]["tick"] >= 30)
                pace["delay_ms"] = SLOW_MS
                run = _wait(c, rid, lambda r: r["status"] in TERMINAL)
                assert run["status"] == "finished" and run["agent_turns"]["settled"] == 300  # replayed, metered once
                late = c.post("/api/v1/runs", json=scripted).json()["run"]["run_id"]
                _wait(c, late, lambda r: r["status"] == "running")
                assert c.get(f"/api/v1/runs/{mid}").json()["run"]["status"] == "running"  # the stop finds it playing
            again.send_signal(signal.SIGTERM)  # drains: the model run stops at a tick boundary, recorded
            assert again.wait(timeout=UP_WITHIN_S) == 0  # a stop, like a start, waits on a loaded machine
        finally:
            _kill_group(again, signal.SIGKILL)
        from orchestrator import datadir
        from orchestrator.core import Core

        datadir.lock(data).close()  # SIGTERM released the data dir as well
        row = Core.open(data).store.one("SELECT status FROM runs WHERE id = ?", (late,))
        assert row["status"] == "running"  # left for the next start to requeue, as the first run was

        pace["delay_ms"] = FAST_MS
        proc, url = _serve_up(data, log)
        try:
            with httpx.Client(base_url=url, headers=bearer(token), timeout=30) as c:
                run = _wait(c, mid, lambda r: r["status"] in TERMINAL)
                assert run["status"] == "finished", run["error"]
                assert c.get(f"/api/v1/runs/{mid}").json()["results"]["match_ticks"] == MODEL_TICKS
                turns = c.get(f"/api/v1/runs/{mid}/transcript", params={"limit": 500}).json()["turns"]
        finally:
            _kill_group(proc, signal.SIGKILL)
            proc.wait(timeout=30)
    assert sorted((t["tick"], t["seat"]) for t in turns) == [(t, s) for t in range(MODEL_TICKS) for s in range(2)]
    for seat in run["roster"]:
        assert seat["turns"]["answered"] == MODEL_TICKS
        assert seat["usage"]["input_tokens"] == 100 * MODEL_TICKS  # billed once
    # the kill -9 may have cut off the calls in flight (one per seat); the SIGTERM drained, losing none
    assert 2 * MODEL_TICKS <= len(fake.bodies("qwen2.5-7b")) <= 2 * MODEL_TICKS + 2


def _serve_up(data: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _serve(data, port, log)
    try:
        wait_until_up(url, proc, UP_WITHIN_S, log=log)
    except BaseException:
        _kill_group(proc, signal.SIGKILL)
        proc.wait(timeout=30)
        raise
    return proc, url
