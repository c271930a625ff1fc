"""Where the control plane lives, as the `studio` command reads it: `[store] url` in config.toml or
STUDIO_STORE_URL (the environment wins). A URL that does not parse, names another database or cannot
be reached stops `studio serve` and the admin commands with one line naming the setting and the
cause, exit 2, nothing created and no password printed; a PostgreSQL URL puts every account and token
there and none in the data dir. The health answer names the store and turns 503 when it is gone."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import psycopg
import pytest
from cryptography.fernet import Fernet

from orchestrator import accounts
from orchestrator.core import Core
from orchestrator.seats import keys
from tests import postgres
from tests.api.util import serving

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-not-printed"


def studio(data_dir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("STUDIO_STORE_URL", "STUDIO_SECRET_KEY_FILE")}
    return subprocess.run([sys.executable, "-m", "api.cli", *args, "--data-dir", str(data_dir)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**environ, **(env or {})})


def _config(data_dir: Path, url: str) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text(f'[store]\nurl = "{url}"\n')


CREATE, SERVE = ("account", "create", "--email", "a@example.org"), ("serve", "--port", "0")


@pytest.mark.parametrize("url, setting, says, command", [
    (f"mysql://u:{SECRET}@127.0.0.1/db", "env", "the scheme is 'mysql'", SERVE),
    (f"postgresql://u:{SECRET}@127.0.0.1:port/db", "env", "not a URL", CREATE),
    (f"postgresql://u:{SECRET}@127.0.0.1:1/studio", "config", "cannot reach the database", SERVE),
    (f"postgresql://u:{SECRET}@127.0.0.1:1/studio", "env", "cannot reach the database", CREATE),
])
def test_a_store_setting_that_cannot_serve_stops_the_command_with_one_line(tmp_path, url, setting, says, command):
    data_dir = tmp_path / "data"
    if setting == "config":
        _config(data_dir, url)
    r = studio(data_dir, *command, env={"STUDIO_STORE_URL": url} if setting == "env" else {})
    name = "STUDIO_STORE_URL" if setting == "env" else "config.toml [store] url"
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and name in r.stderr and says in r.stderr, r.stderr
    assert SECRET not in r.stdout + r.stderr
    # nothing created: no data dir for the environment's setting, only the operator's config.toml for the file's
    assert sorted(p.name for p in tmp_path.rglob("*")) == ([] if setting == "env" else ["config.toml", "data"])


@pytest.mark.postgres
def test_a_postgresql_url_holds_the_control_plane_and_the_environment_wins(tmp_path, pg_url):
    data_dir = tmp_path / "data"
    _config(data_dir, f"postgresql://u:{SECRET}@127.0.0.1:1/elsewhere")  # the environment's URL wins over it
    env = {"STUDIO_STORE_URL": pg_url}
    made = studio(data_dir, "account", "create", "--email", "pg@example.org", "--plan", "lab", env=env)
    assert made.returncode == 0, made.stderr
    minted = studio(data_dir, "token", "mint", "--email", "pg@example.org", env=env)
    assert minted.returncode == 0, minted.stderr
    assert not (data_dir / "studio.db").exists()
    with psycopg.connect(pg_url) as c:
        assert c.execute("SELECT email, plan FROM accounts").fetchall() == [("pg@example.org", "lab")]
        assert c.execute("SELECT COUNT(*) FROM tokens").fetchone()[0] == 1
    # read back by another command through the same setting, and by the service core
    events = studio(data_dir, "account", "events", "--email", "pg@example.org", env=env)
    assert events.returncode == 0 and "minted" in events.stdout, events.stdout + events.stderr
    os.environ["STUDIO_STORE_URL"] = pg_url
    try:
        core = Core.open(data_dir)
    finally:
        del os.environ["STUDIO_STORE_URL"]
    assert core.store.dialect == "postgresql" and accounts.by_email(core, "pg@example.org").plan == "lab"
    core.store.close()


@pytest.mark.postgres
def test_health_names_postgresql_and_turns_503_when_the_database_is_gone(tmp_path, pg_url):
    _config(tmp_path / "data", pg_url)
    core = Core.open(tmp_path / "data")
    try:
        with serving(core) as url, httpx.Client(base_url=url, timeout=30) as c:
            r = c.get("/api/v1/health")
            assert r.status_code == 200 and r.json()["store"] == "postgresql", r.text
            # as tests/postgres.py drops: an autovacuum worker on the database is not the role's to end
            postgres.drop(_admin(pg_url), pg_url.rsplit("/", 1)[1])
            for _ in range(2):  # the connection it held is cut, and a new one finds no database
                r = c.get("/api/v1/health")
                assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
                assert "cannot reach its store" in r.json()["message"] and int(r.headers["retry-after"]) > 0
                assert SECRET not in r.text
    finally:
        # a pool left open reconnects to the dropped database for the rest of the process, drawing
        # its backoff from the global `random` (which Hypothesis, in a later test here, refuses)
        core.store.close()


def _admin(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/postgres"


def test_a_head_whose_secret_key_cannot_decrypt_the_stored_keys_refuses_to_start(tmp_path):
    data_dir = tmp_path / "data"
    core = Core.open(data_dir)
    accounts.create_account(core, "k@example.org", plan="pro")
    keys.set_key(core, email="k@example.org", provider="anthropic", key="sk-ant-kept")
    keys.check_secret(core)  # the key file it was stored with decrypts it
    other = tmp_path / "other.key"
    other.write_bytes(Fernet.generate_key())
    for key_file, says in ((other, "is not the one they were stored with"), (tmp_path / "none.key", "does not exist")):
        r = studio(data_dir, "serve", "--port", "0", env={"STUDIO_SECRET_KEY_FILE": str(key_file)})
        assert r.returncode == 2 and "STUDIO_SECRET_KEY_FILE" in r.stderr and says in r.stderr, r.stdout + r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "sk-ant-kept" not in r.stdout + r.stderr
    assert not (tmp_path / "none.key").exists()  # the check made no key of its own
    assert json.loads(json.dumps(keys.list_keys(core, email="k@example.org")))[0]["provider"] == "anthropic"
