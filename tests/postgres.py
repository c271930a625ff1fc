"""A real PostgreSQL for the store's tests: `STUDIO_TEST_POSTGRES_URL` (a role that may create
databases), or, as root on a machine with Debian's PostgreSQL, its cluster started and a login role
made here. A test gets a database of its own, dropped after it."""
from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROLE = "studio_test"
HOW = ("the PostgreSQL tier needs STUDIO_TEST_POSTGRES_URL=postgresql://user:password@host:port/db (a role "
       "with CREATEDB), or root on a machine with PostgreSQL installed (apt-get install -y postgresql)")

VARIABLE = "STUDIO_TEST_POSTGRES_URL"

def _root_cluster() -> str | None:
    """As root: the first local cluster started, a login role for the tests; its URL. Sessions and
    benchmarks starting it at once take turns: a second `pg_ctlcluster start` while the first is under
    way fails."""
    if os.geteuid() != 0 or not shutil.which("pg_lsclusters"):
        return None
    with open(Path(tempfile.gettempdir()) / "studio-test-postgres.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _started()

def _listed() -> list[str]:
    return subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True, check=False).stdout.split()

def _started() -> str | None:
    listed = _listed()
    if len(listed) < 4:
        return None
    version, name, port, status = listed[:4]
    if status != "online":
        started = subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, name, "start"],
                                 check=False, capture_output=True, text=True, timeout=120)
        if started.returncode != 0 and _listed()[3:4] != ["online"]:
            raise RuntimeError(f"pg_ctlcluster start {version} {name}: {(started.stderr or started.stdout).strip()}")
    subprocess.run(["runuser", "-u", "postgres", "--", "pg_isready", "-p", port, "-t", "60"], check=True,
                   capture_output=True, timeout=90)
    password = _password()
    sql = (f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN "
           f"CREATE ROLE {ROLE} LOGIN CREATEDB; END IF; END$$; ALTER ROLE {ROLE} PASSWORD '{password}';")
    subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-p", port, "-q", "-c", sql], check=True,
                   capture_output=True, timeout=60)
    return f"postgresql://{ROLE}:{password}@127.0.0.1:{port}/postgres"

def _password() -> str:
    """The test role's password, one per machine: test sessions running at once each set it, so each
    must set the same one (a fresh one per session failed the others' next connection)."""
    path = Path(tempfile.gettempdir()) / "studio-test-postgres.password"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(12))
    return path.read_text().strip()

def decide() -> str | None:
    """Once per session, in pytest's first process: whether the tier runs, exported so that xdist's
    workers (started later, with this environment) collect the same tests. A cluster that fails to
    start turns the tier off; the reason is returned for the report header."""
    if VARIABLE in os.environ:
        return None
    try:
        url, reason = _root_cluster(), None
    except Exception as e:  # noqa: BLE001 - any failure to provide a server turns the tier off, named
        url, reason = None, f"{type(e).__name__}: {e}"
    os.environ[VARIABLE] = url or ""
    return reason

@cache
def server_url() -> str | None:
    """The admin URL the tier uses, or None when there is none here (HOW says how to give one); an
    empty STUDIO_TEST_POSTGRES_URL turns the tier off."""
    if VARIABLE in os.environ:
        return os.environ[VARIABLE] or None
    return _root_cluster()

@contextmanager
def database() -> Iterator[str]:
    """A new, empty database; its URL. Dropped afterwards, whoever is still connected."""
    import psycopg

    admin = server_url()
    assert admin, HOW
    name = "studio_t_" + secrets.token_hex(6)
    parts = urlsplit(admin)
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    try:
        yield urlunsplit(parts._replace(path="/" + name))
    finally:
        drop(admin, name)

def drop(admin: str, name: str) -> None:
    """FORCE ends the test's own leftover connections; a superuser's process on the database (autovacuum)
    it may not end, so the drop is tried again once that is done, and as postgres where we are root."""
    import psycopg

    for attempt in range(20):
        try:
            with psycopg.connect(admin, autocommit=True) as c:
                c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            return
        except psycopg.errors.InsufficientPrivilege:
            if os.geteuid() == 0 and urlsplit(admin).username == ROLE:
                port = str(urlsplit(admin).port or 5432)
                subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-p", port, "-q", "-c",
                                f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True, capture_output=True,
                               timeout=60)
                return
            time.sleep(0.5)
    raise AssertionError(f"could not drop the test database {name}: a process of another role holds it")
