"""Admin commands (docs/api.md) against a running server on the same data dir, and
`studio serve` itself: bootstrap, token printed once, clean shutdown on SIGINT and SIGTERM."""
from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.cli import main
from engine.kernels import jit
from tests.api.util import bearer, free_port, serve_refused, wait_until_up
from tests.engine.test_kernel_cache import SERVE_COMPILES, _index_files

ROOT = Path(__file__).resolve().parents[2]
TOKEN_RE = re.compile(r"dsk_[0-9a-f]{64}")


def studio(data_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The `studio` command in its own process, as an operator runs it beside the server."""
    r = subprocess.run([sys.executable, "-m", "api.cli", *args, "--data-dir", str(data_dir)],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def studio_inproc(capsys):
    """The same command through api.cli.main in this process: argparse, handlers and exit
    codes exactly as above, without paying an interpreter start per call."""
    def run(data_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        code = main([*args, "--data-dir", str(data_dir)])
        out, err = capsys.readouterr()
        if check:
            assert code == 0, err
        return subprocess.CompletedProcess(args, code, out, err)
    return run


def test_account_token_and_plan_commands_against_a_running_server(live, client, studio_inproc):
    # create, mint and revoke run as separate processes beside the server; the reads in-process
    email = f"cli-{time.time_ns()}@example.org"
    account = json.loads(studio(live.data_dir, "account", "create", "--email", email, "--plan", "starter").stdout)
    assert account["email"] == email and account["plan"] == "starter" and account["verified"] is False

    minted = studio(live.data_dir, "token", "mint", "--email", email, "--name", "ci").stdout
    assert TOKEN_RE.fullmatch(minted.strip())  # the plaintext alone on stdout
    token = minted.strip()
    assert client.get("/api/v1/me", headers=bearer(token)).json()["token"]["scopes"] == [
        "scenarios:read", "scenarios:write", "runs:read"]  # the default scopes
    assert client.post("/api/v1/skills", json={"name": "cli", "text": "made from a CLI token"},
                       headers=bearer(token)).status_code == 201

    listed = json.loads(studio_inproc(live.data_dir, "token", "list", "--email", email).stdout)
    assert [(t["name"], t["prefix"], t["status"]) for t in listed] == [("ci", token[:12], "active")]
    assert listed[0]["last_used_at_ms"] is not None and listed[0]["expires_at_ms"] is None
    assert token not in json.dumps(listed)

    changed = json.loads(studio_inproc(live.data_dir, "account", "set", "--email", email, "--plan", "free",
                                "--verified").stdout)
    assert changed["plan"] == "free" and changed["verified"] is True
    r = client.post("/api/v1/skills", json={"name": "cli", "text": "made from a CLI token"}, headers=bearer(token))
    assert (r.status_code, r.json()["error"]) == (403, "plan_api")

    studio(live.data_dir, "token", "revoke", "--email", email, "--prefix", token[:12])
    r = client.get("/api/v1/me", headers=bearer(token))
    assert (r.status_code, r.json()["error"]) == (401, "token_required")
    assert json.loads(studio_inproc(live.data_dir, "token", "list", "--email", email).stdout)[0]["status"] == "revoked"

    notices = json.loads(studio_inproc(live.data_dir, "outbox", "list", "--email", email).stdout)
    assert [n["subject"] for n in notices] == ["New API token on your Scenario Studio account",
                                                "API token revoked on your Scenario Studio account"]
    assert all(token[:12] in n["body"] and token not in n["body"] for n in notices)


def test_token_mint_scopes_expiry_and_allowance(live, client, studio_inproc):
    studio = studio_inproc
    email = f"cli-{time.time_ns()}@example.org"
    studio(live.data_dir, "account", "create", "--email", email, "--plan", "free")
    token = studio(live.data_dir, "token", "mint", "--email", email, "--scopes", "runs:read",
                   "--expires-in-ms", "60000").stdout.strip()
    me = client.get("/api/v1/me", headers=bearer(token)).json()
    assert me["token"]["scopes"] == ["runs:read"] and me["token"]["expires_at_ms"] is not None
    refused = studio(live.data_dir, "token", "mint", "--email", email, check=False)  # free: one token
    assert refused.returncode == 2 and "allows 1 active token;" in refused.stderr and refused.stdout == ""
    studio(live.data_dir, "token", "revoke", "--email", email, "--prefix", token[:12])
    assert TOKEN_RE.fullmatch(studio(live.data_dir, "token", "mint", "--email", email).stdout.strip())
    bad = studio(live.data_dir, "token", "mint", "--email", email, "--scopes", "admin", check=False)
    assert bad.returncode == 2 and "scopes" in bad.stderr
    nobody = studio(live.data_dir, "token", "mint", "--email", "nobody@example.org", check=False)
    assert nobody.returncode == 2 and "no account" in nobody.stderr


def test_key_set_and_list_never_show_the_key(live, studio_inproc):
    studio = studio_inproc
    email = f"cli-{time.time_ns()}@example.org"
    secret = "sk-test-" + "9" * 40
    studio(live.data_dir, "account", "create", "--email", email, "--plan", "pro")
    out = studio(live.data_dir, "key", "set", "--email", email, "--provider", "openai", "--key", secret).stdout
    assert secret not in out
    listed = studio(live.data_dir, "key", "list", "--email", email).stdout
    assert secret not in listed and [k["provider"] for k in json.loads(listed)] == ["openai"]
    studio(live.data_dir, "key", "set", "--platform", "--provider", "router", "--key", secret,
           "--models", "a/b,c/d", "--base-url", "http://127.0.0.1:9/v1")
    platform = json.loads(studio(live.data_dir, "key", "list", "--platform").stdout)
    assert platform[0]["models"] == ["a/b", "c/d"] and platform[0]["platform"] is True
    db_bytes = b"".join(p.read_bytes() for p in live.data_dir.glob("studio.db*"))
    assert secret.encode() not in db_bytes  # encrypted at rest
    bad = studio(live.data_dir, "key", "set", "--email", email, "--provider", "acme", "--key", "k", check=False)
    assert bad.returncode == 2 and "unknown provider" in bad.stderr


def _serve(data_dir: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    out = open(data_dir.parent / f"serve-{port}.out", "w")
    proc = subprocess.Popen([sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--data-dir",
                             str(data_dir), "--log-level", "warning", *extra], cwd=ROOT, stdout=out,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, proc, log=Path(out.name))
    return proc, url


def _stop(proc: subprocess.Popen, sig: int) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout=15)


def test_serve_bootstraps_once_and_stops_cleanly_on_sigint_and_sigterm(tmp_path):
    data_dir = tmp_path / "fresh"  # does not exist yet: serve creates it
    proc, url = _serve(data_dir)
    out_file = tmp_path / f"serve-{url.rsplit(':', 1)[1]}.out"
    try:
        text = out_file.read_text()
        tokens = TOKEN_RE.findall(text)
        assert len(tokens) == 1
        # the engine's kernels compiled (or loaded) before the port opened: printed, and in the cache
        assert "studio: kernels ready" in text
        assert SERVE_COMPILES <= _index_files(jit.cache_dir())
        me = httpx.get(url + "/api/v1/me", headers=bearer(tokens[0])).json()
        assert me["plan"]["id"] == "lab" and me["token"]["scopes"] == ["scenarios:read", "scenarios:write",
                                                                        "runs:read", "runs:write"]
    finally:
        assert _stop(proc, signal.SIGINT) == 0  # Ctrl-C at a terminal
    proc, url = _serve(data_dir)  # second start: no new owner, no token printed
    try:
        second = (tmp_path / f"serve-{url.rsplit(':', 1)[1]}.out").read_text()
        assert TOKEN_RE.findall(second) == []
        assert f"reusing the data dir {data_dir.resolve()} (1 account)" in second
        assert "studio token mint --email owner@localhost" in second  # how to get a token again
        assert httpx.get(url + "/api/v1/me", headers=bearer(tokens[0])).status_code == 200
    finally:
        assert _stop(proc, signal.SIGTERM) == 0


def test_serve_no_bootstrap_creates_no_account(tmp_path, studio_inproc):
    studio = studio_inproc
    data_dir = tmp_path / "quiet"
    proc, url = _serve(data_dir, "--no-bootstrap")
    try:
        assert TOKEN_RE.findall((tmp_path / f"serve-{url.rsplit(':', 1)[1]}.out").read_text()) == []
        assert (data_dir / "studio.db").exists()
        # accounts made by the admin CLI while it runs can use the server at once
        studio(data_dir, "account", "create", "--email", "late@example.org", "--plan", "pro")
        token = studio(data_dir, "token", "mint", "--email", "late@example.org").stdout.strip()
        assert httpx.get(url + "/api/v1/me", headers=bearer(token)).status_code == 200
        # docs/api.md: links for the address the server serves on, not a fixed port
        link = studio(data_dir, "account", "login-link", "--email", "late@example.org").stdout.strip()
        assert link.startswith(url + "/console/login/link/"), link
        assert httpx.get(link, follow_redirects=False).status_code == 303  # the link signs in
    finally:
        assert _stop(proc, signal.SIGTERM) == 0
    (data_dir / "config.toml").write_text('[console]\npublic_url = "https://studio.example.org/"\n')
    link = studio(data_dir, "account", "login-link", "--email", "late@example.org").stdout.strip()
    assert link.startswith("https://studio.example.org/console/login/link/"), link


def test_serve_on_a_busy_port_stops_before_creating_anything(tmp_path, monkeypatch, capsys):
    data_dir = tmp_path / "busy"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = serve_refused(data_dir, "--port", str(port), monkeypatch=monkeypatch, capsys=capsys)
    assert r.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr and "--port" in r.stderr
    assert TOKEN_RE.findall(r.stdout + r.stderr) == [] and "sign-in link" not in r.stdout
    assert not (data_dir / "studio.db").exists()  # no owner account for a server that never started


def test_key_set_checks_the_key_with_its_provider_and_list_shows_it(live, studio_inproc):
    from tests.seats.fake_provider import FakeProvider

    email = f"cli-{time.time_ns()}@example.org"
    studio_inproc(live.data_dir, "account", "create", "--email", email, "--plan", "pro")
    with FakeProvider() as fake:
        fake.rejected_keys.add("sk-fake")
        out = studio_inproc(live.data_dir, "key", "set", "--email", email, "--provider", "openai-compatible",
                            "--key", "sk-fake", "--base-url", fake.url + "/v1").stdout
        assert json.loads(out)["check"]["status"] == "rejected"
        listed = json.loads(studio_inproc(live.data_dir, "key", "list", "--email", email).stdout)
        assert listed[0]["check"]["status"] == "rejected" and listed[0]["check"]["at_ms"]
        assert "401" in listed[0]["check"]["detail"]
        studio_inproc(live.data_dir, "key", "set", "--email", email, "--provider", "openai-compatible",
                      "--key", "sk-real", "--base-url", fake.url + "/v1")
        assert json.loads(studio_inproc(live.data_dir, "key", "list", "--email", email).stdout)[0]["check"][
            "status"] == "ok"
    # offline: stored all the same, and the check says it could not be made
    out = json.loads(studio_inproc(live.data_dir, "key", "set", "--email", email, "--provider", "ollama",
                                   "--base-url", "http://127.0.0.1:9").stdout)
    assert out["provider"] == "ollama" and out["check"]["status"] == "unreachable"
    out = json.loads(studio_inproc(live.data_dir, "key", "set", "--email", email, "--provider", "ollama",
                                   "--base-url", "http://127.0.0.1:9", "--no-check").stdout)
    assert "check" in out and out["check"] is None


def test_key_set_ollama_needs_no_key_and_help_names_every_provider(live, studio_inproc):
    from orchestrator.seats.keys import PROVIDERS
    email = f"cli-{time.time_ns()}@example.org"
    studio_inproc(live.data_dir, "account", "create", "--email", email, "--plan", "pro")
    studio_inproc(live.data_dir, "key", "set", "--email", email, "--provider", "ollama",
                  "--base-url", "http://127.0.0.1:11434")
    listed = json.loads(studio_inproc(live.data_dir, "key", "list", "--email", email).stdout)
    assert [(k["provider"], k["base_url"]) for k in listed] == [("ollama", "http://127.0.0.1:11434")]
    keyless = studio_inproc(live.data_dir, "key", "set", "--email", email, "--provider", "openai", check=False)
    assert keyless.returncode == 2 and "provider openai needs --key" in keyless.stderr
    helped = subprocess.run([sys.executable, "-m", "api.cli", "key", "set", "--help"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and all(p in helped.stdout for p in PROVIDERS)
    assert "--base-url" in helped.stdout and "not needed for ollama" in helped.stdout


def test_simulate_table_shows_the_seeds_that_replay_it(capsys):
    assert main(["simulate", "--scenario", "svc:custom-base-v1", "--seed", "5", "--spawn-seed", "7",
                 "--ticks", "20"]) == 0
    assert "seed: 5  spawn seed: 7" in capsys.readouterr().out.splitlines()[0]
