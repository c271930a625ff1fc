"""Fault injection: a full disk (a small tmpfs), a held SQLite write lock, killed workers and services,
SIGTERM, huge bodies. Each test asserts that no run is left stuck, no result or metered turn is lost,
and the caller gets a clear error."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

# The session's local Ray is asked for by the modules whose servers play in this process
# (`pytestmark = pytest.mark.usefixtures("ray_pool")`); not by the ones that start `studio serve`, whose
# starts its own: an idle Ray beside them would only take CPU from theirs.


@pytest.fixture
def tmpfs(tmp_path):
    """A 48 MiB tmpfs: a disk that fills for real. Mounting needs root (CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; run the fault suite as root (CI does)")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m,mode=0700", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(disk: Path) -> Path:
    """Take every free byte of the disk; returns the filler to delete."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler
