"""A short temporary dir for a benchmark's own Ray: its socket paths live under it, and a long path
overflows them."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def ray_tmpdir(prefix: str) -> Iterator[Path]:
    tmp = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.environ["RAY_TMPDIR"] = tmp
    os.makedirs(os.path.join(tmp, "ray"), exist_ok=True)
    try:
        yield Path(tmp)
    finally:  # the service stopped its Ray first: nothing writes there any more
        shutil.rmtree(tmp, ignore_errors=True)
