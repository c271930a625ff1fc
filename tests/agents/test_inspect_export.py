"""Runs and series as Inspect AI logs (docs/FORMATS.md), read back with inspect_ai's own readers: an
agent seat's messages are exactly the observations it was shown and the bodies it sent, the scores
are the scorecard, a series' trials are epochs in samples_df; the export is the owner's only, over
REST and over MCP (the real client)."""
from __future__ import annotations

import base64
import json
import re
import secrets

import anyio
import httpx
import pytest
from inspect_ai.analysis import samples_df
from inspect_ai.log import read_eval_log

from api.cli import main
from tests.agents.conftest import play_rest, world_body
from tests.runs.conftest import account, local_body, wait_terminal

TICKS = 10


@pytest.fixture(scope="module")
def played(srv):
    """(token, an agent run's body, what its agent was shown and sent, a scripted series' bodies)."""
    token = account(srv.core)
    marker = f"m-{secrets.token_hex(4)}"
    with srv.client(token) as c:
        body = world_body(TICKS, roster=[{"provider": "agent", "model": "probe v1", "name": "Probe",
                                          "instructions": f"Gather first. {marker}"}, {"model": "local/random"}])
        run = c.post("/api/v1/runs", json=body).json()["run"]
        seen = []

        def policy(turn):
            actions = [{"action": "gather"}, {"action": "move", "direction": "east"}]
            seen.append((turn["observation"]["text"], {"tick": turn["tick"], "actions": actions}))
            return actions
        play_rest(c, run["run_id"], 0, policy)
        agent = wait_terminal(c, run["run_id"])
        series = c.post("/api/v1/runs", json=local_body(season_ticks=10, trials=2)).json()["batch"]
        trials = [wait_terminal(c, r) for r in series["run_ids"]]
    return token, agent, seen, marker, series["batch_id"], trials


def _eval(tmp_path, response: httpx.Response, name: str):
    assert response.status_code == 200, response.text
    path = tmp_path / name
    path.write_bytes(response.content)
    return path


def test_a_run_exports_as_an_inspect_log_that_reads_back(srv, played, tmp_path):
    token, body, seen, marker, _, _ = played
    run, results = body["run"], body["results"]
    with srv.client(token) as c:
        r = c.get(f"/api/v1/runs/{run['run_id']}/export", params={"format": "inspect"})
    assert r.headers["content-disposition"] == f'attachment; filename="{run["run_id"]}.eval"'
    log = read_eval_log(str(_eval(tmp_path, r, "run.eval")))
    assert log.status == "success" and log.eval.task == "svc:custom-base-v1"
    assert log.eval.metadata["scenario_hash"] == run["scenario_hash"] and log.eval.config.epochs == 1
    samples = {s.id: s for s in log.samples}
    assert set(samples) == {"seat-0", "seat-1"} and {s.epoch for s in log.samples} == {1}
    for agent in results["agents"]:
        s = samples[f"seat-{agent['seat']}"]
        assert s.scores["fitness_index"].value == agent["fitness_index"]
        assert {k: s.scores[k].value for k in agent["dimensions"]} == agent["dimensions"]
        assert s.metadata["seed"] == run["effective"]["seed"] and s.metadata["spawn_seed"] == run["effective"]["spawn_seed"]
        assert s.metadata["scenario_hash"] == run["scenario_hash"] and s.metadata["run_id"] == run["run_id"]
        assert [e["model"] for e in s.metadata["roster"]] == ["probe v1", "local/random"]
    probe = samples["seat-0"]
    # what the agent was told, then each tick what it was shown and what it sent
    assert probe.messages[0].role == "system" and marker in probe.messages[0].text
    users = [m.text for m in probe.messages if m.role == "user"]
    replies = [json.loads(m.text) for m in probe.messages if m.role == "assistant"]
    assert users == [text for text, _ in seen] and replies == [sent for _, sent in seen]
    assert len(probe.events) == TICKS and probe.events[2].data["tick"] == 2
    assert probe.events[0].data["actions"] == [{"action": "gather"}, {"action": "move", "direction": "east"}]
    assert samples["seat-1"].messages == []  # a scripted seat is told nothing and replies nothing
    assert {s.name: s.metrics["mean"].value for s in log.results.scores}["fitness_index"] == \
        pytest.approx(sum(a["fitness_index"] for a in results["agents"]) / 2)


def test_a_series_loads_in_samples_df_one_row_per_seat_and_trial(srv, played, tmp_path):
    token, _, _, _, batch_id, trials = played
    with srv.client(token) as c:
        path = _eval(tmp_path, c.get(f"/api/v1/batches/{batch_id}/export", params={"format": "inspect"}), "s.eval")
    df = samples_df(str(path))
    assert len(df) == 4 and sorted(df["epoch"]) == [1, 1, 2, 2]
    for k, body in enumerate(trials):
        for agent in body["results"]["agents"]:
            row = df[(df["epoch"] == k + 1) & (df["id"] == f"seat-{agent['seat']}")]
            assert len(row) == 1
            assert row["score_fitness_index"].iloc[0] == agent["fitness_index"]
            assert row["score_survival"].iloc[0] == agent["dimensions"]["survival"]
    log = read_eval_log(str(path))
    assert log.eval.config.epochs == 2 and log.eval.metadata["batch_id"] == batch_id
    assert [s.metadata["seed"] for s in log.samples if s.id == "seat-0"] == \
        [b["run"]["effective"]["seed"] for b in trials]


def test_exports_are_the_owners_and_formats_are_checked(srv, played):
    token, body, _, _, batch_id, _ = played
    run_id = body["run"]["run_id"]
    with srv.client(token) as c:
        r = c.get(f"/api/v1/runs/{run_id}/export", params={"format": "pgn"})
        assert r.status_code == 400 and r.json()["error"] == "bad_request" and "inspect" in r.json()["message"]
        csv = c.get(f"/api/v1/runs/{run_id}/export")
        # the run's own rows: a header, then its two seats and its anchor
        assert csv.status_code == 200 and csv.text.count("\n") == 1 + 2 + len(body["results"]["anchors"])
        assert {line.split(",")[1] for line in csv.text.splitlines()[1:]} == {run_id}
        assert c.get(f"/api/v1/batches/{run_id}/export").json()["error"] == "unknown_run"
        assert c.get(f"/api/v1/runs/{batch_id}/export").json()["error"] == "unknown_run"
    with srv.client(account(srv.core)) as stranger:
        for path in (f"/api/v1/runs/{run_id}/export", f"/api/v1/batches/{batch_id}/export"):
            r = stranger.get(path, params={"format": "inspect"})
            assert r.status_code == 404 and r.json()["error"] == "unknown_run"
    anon = httpx.get(f"{srv.url}/api/v1/runs/{run_id}/export", params={"format": "inspect"})
    assert anon.status_code == 401 and anon.json()["error"] == "token_required"
    reader = account(srv.core, scopes=("scenarios:read",))
    with srv.client(reader) as c:
        assert c.get(f"/api/v1/runs/{run_id}/export").json()["error"] == "scope_required"


def test_studio_export_downloads_through_the_api(srv, played, tmp_path, capsys):
    token, body, _, _, batch_id, _ = played
    out = tmp_path / "cli.eval"
    run_id = body["run"]["run_id"]
    assert main(["export", run_id, "--url", srv.url, "--token", token, "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert said.out.strip() == str(out)  # stdout: the path alone; progress goes to stderr
    steps = re.findall(rf"^export {run_id}: ([\d,.]+)/([\d,.]+) KB \(writing {re.escape(str(out))}\)$", said.err, re.M)
    assert steps and steps[-1][0] == steps[-1][1]  # the last step: all of it written
    assert {s.id for s in read_eval_log(str(out)).samples} == {"seat-0", "seat-1"}
    assert main(["export", batch_id, "--url", srv.url, "--token", token, "--format", "csv", "-o",
                 str(tmp_path / "s.csv")]) == 0
    assert (tmp_path / "s.csv").read_text().startswith("match_id,run_id,batch_id")
    assert main(["export", "run_nope", "--url", srv.url, "--token", token, "-o", str(tmp_path / "x")]) == 1
    assert "unknown_run" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_mcp_export_run_answers_the_same_file_as_base64(srv, played, tmp_path):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    import httpx2

    token, body, _, _, batch_id, _ = played
    run_id = body["run"]["run_id"]

    async def calls():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async with Client(streamable_http_client(f"{srv.url}/mcp/studio", http_client=http)) as client:
                out = [await client.call_tool("export_run", {"id": i}) for i in (run_id, batch_id)]
                out.append(await client.call_tool("export_run", {"id": run_id, "format": "xml"}))
                return out
    run, series, bad = anyio.run(calls)
    assert bad.is_error and json.loads(bad.content[0].text)["error"] == "bad_request"
    for result, n in ((run, 2), (series, 4)):
        assert not result.is_error
        got = result.structured_content
        assert got["format"] == "inspect" and got["filename"].endswith(".eval")
        data = base64.b64decode(got["base64"])
        assert len(data) == got["size_bytes"]
        path = tmp_path / got["filename"]
        path.write_bytes(data)
        assert len(read_eval_log(str(path)).samples) == n
