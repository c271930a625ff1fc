"""Fault injection: a full disk (a small tmpfs), a held SQLite write lock, killed workers and services,
SIGTERM, huge bodies. Each test asserts that no run is left stuck, no result or metered turn is lost,
and the caller gets a clear error."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

# How long a test waits for a run's first ticks, which wait on its workers' start (imports, kernels): a
# bound for a loaded machine, not a target
FIRST_TICKS_S = 300

# The session's local Ray is asked for by the modules whose servers play in this process
# (`pytestmark = pytest.mark.usefixtures("ray_pool")`), not by those that start `studio serve` alone,
# which starts a Ray of its own: an idle one beside it would only take CPU from it.


def _mount(mnt: Path) -> Path:
    """A 48 MiB tmpfs at mnt: a disk that fills for real. Mounting needs root (CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; run the fault suite as root (CI does)")
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m,mode=0700", "tmpfs", str(mnt)], check=True)
    return mnt


@pytest.fixture
def tmpfs(tmp_path):
    mnt = _mount(tmp_path / "disk")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture(scope="session")
def archive_disk(tmp_path_factory):
    """A tmpfs for an archive of its own (a shared mount, say), kept for the session."""
    mnt = _mount(tmp_path_factory.mktemp("archive") / "disk")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture(scope="session")
def archive_apart(archive_disk, tmp_path_factory, ray_pool):
    """A server whose archive is on that disk and whose results wait a second for room there
    (`record_patience_s`): the tests that fill the disk share it, each freeing the disk again."""
    from tests.runs.conftest import CONFIG, start

    config = CONFIG + ("[runs]\nmin_tick_ms = 10\nrecord_patience_s = 1\nagent_absent_s = 30\n"
                       f'[archive]\nuri = "{archive_disk / "archive"}"\n')
    s = start(tmp_path_factory.mktemp("archive-apart") / "data", config)
    yield s
    s.stop()


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
