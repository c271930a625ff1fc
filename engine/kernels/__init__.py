"""Compiled kernels: module-level @njit(cache=True) functions over arrays; no Python objects inside.

Numba keys each cached kernel on its own file only, yet play_ticks compiles the policies and
helpers of sibling modules into itself, and freezes the globals it reads (engine/rules.py's
TERRAIN_RES among them). So on import we fingerprint every kernel source and the rules table and
drop the whole kernel cache when any of them changed, rather than run a stale copy.
"""
import hashlib
from pathlib import Path

_HERE = Path(__file__).parent
_CACHE = _HERE / "__pycache__"


def _drop_stale_cache() -> None:
    digest = hashlib.sha256()
    for src in sorted(_HERE.glob("*.py")) + [_HERE.parent / "rules.py"]:
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    stamp = _CACHE / "kernels.sha256"
    current = digest.hexdigest()
    try:
        if stamp.exists() and stamp.read_text() == current:
            return
        for f in list(_CACHE.glob("*.nbi")) + list(_CACHE.glob("*.nbc")):
            f.unlink(missing_ok=True)
        _CACHE.mkdir(exist_ok=True)
        stamp.write_text(current)
    except OSError:  # a read-only install: numba falls back to compiling in memory
        pass


_drop_stale_cache()
