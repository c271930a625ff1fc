"""One cache policy for every compiled kernel, and a service that compiles before it says it is ready."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from engine.kernels import jit
from tests.api.util import free_port

ROOT = Path(__file__).resolve().parents[2]
DECORATED = re.compile(r"^@(hot|alloc|cached)\b", re.M)


def _project_sources() -> list[Path]:
    return [p for d in ("engine", "analytics", "orchestrator", "api") for p in (ROOT / d).rglob("*.py")]


def test_every_cached_kernel_goes_through_the_one_policy():
    covered = set(jit._sources())
    for src in _project_sources():
        text = src.read_text()
        if src.name != "jit.py":
            assert "cache=True" not in text, f"{src} caches a kernel outside engine/kernels/jit.py"
        if DECORATED.search(text):
            assert src in covered, f"{src} holds kernels but is not in jit.KERNEL_SOURCES"


def test_changing_an_inlined_constant_moves_the_cache(tmp_path, monkeypatch):
    # analytics' grouped tally inlines N_COUNTERS from the engine's tally module: a change there
    # must reach a fresh cache directory, whichever file numba would have stamped
    for pattern in jit.KERNEL_SOURCES:
        for src in ROOT.glob(pattern):
            dst = tmp_path / src.relative_to(ROOT)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    monkeypatch.setattr(jit, "_PROJECT", tmp_path)
    jit.cache_key.cache_clear()
    try:
        before = jit.cache_key()
        tally = tmp_path / "engine/kernels/tally.py"
        tally.write_text(tally.read_text().replace("N_COUNTERS = 25", "N_COUNTERS = 26"))
        jit.cache_key.cache_clear()
        assert jit.cache_key() != before
    finally:
        jit.cache_key.cache_clear()


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("STUDIO_NUMBA_CACHE", str(tmp_path))
    assert jit.cache_dir() == tmp_path / jit.cache_key()


def _index_files(cache: Path) -> set[str]:
    return {p.name.split("-")[0] for p in cache.rglob("*.nbi")}


def test_serve_compiles_into_a_fresh_cache_before_it_listens_and_a_new_process_reuses_it(tmp_path):
    # Slow on purpose (a real cold compile, about a minute on a loaded machine): it is the stall this
    # test exists to keep out of the first match.
    cache = tmp_path / "numba"
    env = dict(os.environ, STUDIO_NUMBA_CACHE=str(cache))
    port = free_port()
    out = open(tmp_path / "serve.out", "w")
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "serve", "--port", str(port), "--data-dir",
                             str(tmp_path / "data"), "--log-level", "warning", "--no-bootstrap"], cwd=ROOT, env=env,
                            stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 400
        while True:
            assert proc.poll() is None, (tmp_path / "serve.out").read_text()
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/v1", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        # ready: every kernel a match, its scoring and an arena game run is already on disk
        compiled = _index_files(cache / jit.cache_key())
        assert {"step.play_ticks", "worldgen.generate", "tally.tally", "solver.column_scores"} <= compiled
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # a new process on the same sources (as a Ray worker is) loads the machine code: no compiling
    probe = ("import json; from engine.warm import warm; from engine.kernels import step, tally;"
             "warm(); s = step.play_ticks.stats; t = tally.tally.stats;"
             "print(json.dumps({'misses': sum(s.cache_misses.values()) + sum(t.cache_misses.values()),"
             "'hits': sum(s.cache_hits.values()) + sum(t.cache_hits.values())}))")
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    took = time.perf_counter() - t0
    stats = json.loads(res.stdout.strip().splitlines()[-1])
    assert stats["misses"] == 0 and stats["hits"] >= 2, stats
    assert took < 30, took  # imports and loads only; a compile of play_ticks alone takes longer
