"""How every compiled kernel of the project is built and where its machine code is cached.

`hot` kernels never allocate: they skip Numba's reference counting, which costs a call that passes
arrays far more than the work of a small helper. `alloc` kernels create arrays and keep the runtime;
`cached(signature)` is for recursive kernels. Calls pass every array by value, so state is packed
into a few tables (state.py). Numba keys a cached kernel on its own file only, yet a kernel compiles
in what it calls from other files, so the cache directory is keyed by a digest of every kernel source
and the Numba and Python versions: a change lands in a fresh directory, nothing is deleted at import,
and workers started after the service warmed the cache compile nothing. The root is
STUDIO_NUMBA_CACHE, else NUMBA_CACHE_DIR, else $XDG_CACHE_HOME/scenario-studio/numba.
"""
from __future__ import annotations

import hashlib
import os
import sys
from functools import cache
from pathlib import Path

import numba
from numba import njit
from numba.core import caching

_PROJECT = Path(__file__).resolve().parents[2]
# Every file holding a cached kernel, and every file whose code or constants those kernels inline.
# engine/rules.py: the kernels freeze globals read from it (TERRAIN_RES) into their compiled code
KERNEL_SOURCES = ("engine/kernels/*.py", "engine/arena/*.py", "analytics/scorecards.py", "engine/rules.py")


def _sources() -> list[Path]:
    return sorted({p for pattern in KERNEL_SOURCES for p in _PROJECT.glob(pattern)})


@cache
def cache_key() -> str:
    digest = hashlib.sha256(f"numba {numba.__version__} python {sys.version}".encode())
    for src in _sources():
        digest.update(str(src.relative_to(_PROJECT)).encode())
        digest.update(src.read_bytes())
    return digest.hexdigest()[:20]


def cache_root() -> Path:
    root = os.environ.get("STUDIO_NUMBA_CACHE") or os.environ.get("NUMBA_CACHE_DIR")
    if not root:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scenario-studio" / "numba"
    return Path(root)


def cache_dir() -> Path:
    """This build's kernel cache: <root>/<digest of the kernel sources and versions>."""
    return cache_root() / cache_key()


class _KernelCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Places the project's kernels in cache_dir(); any other file is left to Numba's own locators."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(cache_dir() / Path(py_file).resolve().parent.relative_to(_PROJECT))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(_PROJECT)
        except ValueError:
            return None
        return super().from_function(py_func, py_file)


if _KernelCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _KernelCacheLocator)

# error_model="numpy": an integer division or modulo by a value known only at run time (randint's
# `% n`, the raid divisor, the snapshot period) gets no zero check that raises. Each such check is an
# exception exit, and every kernel that may raise returns a status its callers must test. Dropping
# them kept every golden log and made seasons 5-8% faster (median of a paired A/B of
# benchmarks/engine.py's seasons, both builds at once on the two cores). No divisor in a kernel
# can be zero: each is a constant, a rule number (engine/rules.py) or a count >= 1.
hot = njit(cache=True, _nrt=False, error_model="numpy")
# Numba-IR inlining for the few big kernels called once per action from play_ticks: a call that
# passes the ten state tables by value costs more than the body of most actions. Inlining these
# (not every helper: that made a two-minute compile) keeps the compile near a minute.
inlined = njit(cache=True, _nrt=False, inline="always", error_model="numpy")
alloc = njit(cache=True)


def cached(signature: str):
    """A kernel compiled eagerly for one signature, cached like the others."""
    return njit(signature, cache=True)
