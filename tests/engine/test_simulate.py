"""`studio simulate` end to end, as a user runs it."""
import json
import subprocess
import sys

import pytest

from engine.simulate import SimulateError, simulate


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "api.cli", "simulate", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def cli(capsys):
    """The same command through api.cli.main in this process (the test above runs it as its own
    process, twice): output and exit code as there, without an interpreter start per call."""
    from api.cli import main

    def run(*args):
        code = main(["simulate", *args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["studio", "simulate", *args], code, out, err)
    return run


def test_cli_prints_results_json_and_is_reproducible():
    args = ("--scenario", "svc:custom-base-v1", "--seed", "4", "--spawn-seed", "9", "--ticks", "60",
            "--seats", "local/honest-trader,local/random", "--json")
    a, b = run_cli(*args), run_cli(*args)
    assert a.returncode == 0, a.stderr
    ra = json.loads(a.stdout)
    assert ra == json.loads(b.stdout)
    assert ra["match_ticks"] == 60 and ra["field_size"] == 6
    assert [e["model"] for e in ra["agents"]] == ["local/honest-trader", "local/random"]


def test_cli_table_and_errors(cli):
    ok = cli("--scenario", "svc:long-winter", "--ticks", "30", "--anchors", "random,random")
    assert ok.returncode == 0 and "random #2" in ok.stdout and "rank" in ok.stdout
    bad = cli("--scenario", "svc:nope")
    assert bad.returncode == 2 and "unknown scenario" in bad.stderr


def test_fixed_library_scenario_refuses_seed_override():
    with pytest.raises(SimulateError):
        simulate("svc:relic-rush", seed=3)
    r = simulate("svc:relic-rush", ticks=20)
    assert r["effective"]["seed"] == 3303


def test_cli_plays_a_saved_scenario_from_the_data_dir(tmp_path, cli):
    from orchestrator.accounts import create_account
    from orchestrator.auth import SCOPES, authenticate, mint
    from orchestrator.core import Core
    from orchestrator.scenarios import create

    core = Core.open(tmp_path)
    create_account(core, "sim@example.org", plan="starter")
    token, _ = mint(core, "sim@example.org", scopes=SCOPES)
    _, body = create(core, authenticate(core, token), {"name": "tiny", "season_ticks": 25,
                                                        "env": {"seed": 9, "anchors": ["random"]}})
    out = cli("--scenario", body["scenario"]["id"], "--data-dir", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["match_ticks"] == 25 and r["field_size"] == 1 and r["effective"]["seed"] == 9
    missing = cli("--scenario", "usc_000", "--data-dir", str(tmp_path))
    assert missing.returncode == 2 and "no saved scenario" in missing.stderr
