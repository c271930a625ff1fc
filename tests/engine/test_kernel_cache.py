"""One cache policy for every compiled kernel, and a service that compiles before it says it is ready."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.kernels import jit
from tests.api.util import free_port, wait_until_up

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


SERVE_COMPILES = {"step.play_ticks", "worldgen.generate", "tally.tally", "solver.column_scores"}


def _index_files(cache: Path) -> set[str]:
    return {p.name.split("-")[0] for p in cache.rglob("*.nbi")}


def _start_serve(tmp_path: Path, env: dict, deadline_s: float) -> tuple[subprocess.Popen, Path]:
    port = free_port()
    log = tmp_path / "serve.out"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "api.cli", "serve", "--port", str(port),
                                 "--data-dir", str(tmp_path / "data"), "--log-level", "warning", "--no-bootstrap"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    wait_until_up(f"http://127.0.0.1:{port}", proc, deadline_s, log)
    return proc, log


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=60)


def _probe(env: dict) -> dict:
    """A new process on the same sources, as a Ray worker is: cache hits and misses of the step and
    tally kernels after warming."""
    probe = ("import json; from engine.warm import warm; from engine.kernels import step, tally;"
             "warm(); s = step.play_ticks.stats; t = tally.tally.stats;"
             "print(json.dumps({'misses': sum(s.cache_misses.values()) + sum(t.cache_misses.values()),"
             "'hits': sum(s.cache_hits.values()) + sum(t.cache_hits.values())}))")
    res = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_warmed_kernels_are_in_the_cache_and_a_new_process_loads_them():
    # `studio serve` warming before it listens: tests/api/test_cli.py, on the process it starts
    from engine.warm import warm

    warm()
    assert SERVE_COMPILES <= _index_files(jit.cache_dir())
    stats = _probe(dict(os.environ))
    assert stats["misses"] == 0 and stats["hits"] >= 2, stats


@pytest.mark.service
@pytest.mark.skipif(not os.environ.get("STUDIO_SLOW_TESTS"), reason="a cold compile: a minute idle, many loaded;"
                    " STUDIO_SLOW_TESTS=1 runs it")
def test_serve_compiles_into_a_fresh_cache_before_it_listens(tmp_path):
    cache = tmp_path / "numba"
    env = dict(os.environ, STUDIO_NUMBA_CACHE=str(cache))
    proc, _ = _start_serve(tmp_path, env, deadline_s=1200)
    try:
        compiled = _index_files(cache / jit.cache_key())
        assert SERVE_COMPILES <= compiled
    finally:
        _stop(proc)
    stats = _probe(env)
    assert stats["misses"] == 0 and stats["hits"] >= 2, stats
