"""Inspect models play the world (api/inspect_task): `scenario_studio/world` launches a run on a real
server, plays its `inspect` seats as agent seats with Inspect's model through the turn endpoints, and
scores each sample by the run's results; `inspect eval` finds the task by its registered name.

Models: Inspect's mockllm/model in-process (its replies carry their usage: mockllm counts tokens of a
reply without one with tiktoken, whose tables it downloads, and this machine has no internet); and
from the command line, Inspect's OpenAI-compatible provider against the provider double, as `make
realmodel` points it at a llama.cpp server."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from api.inspect_task import world
from tests.runs.conftest import account
from tests.seats.fake_provider import FakeProvider

TICKS = 10


def _run_of(srv, token, run_id) -> dict:
    with srv.client(token) as c:
        body = c.get(f"/api/v1/runs/{run_id}").json()
        body["transcript"] = c.get(f"/api/v1/runs/{run_id}/transcript", params={"limit": 500}).json()["turns"]
        return body


def test_an_inspect_model_plays_two_seats_of_one_run_with_our_tools(srv, monkeypatch, tmp_path):
    token = account(srv.core)
    monkeypatch.setenv("STUDIO_URL", srv.url)
    monkeypatch.setenv("STUDIO_TOKEN", token)
    call = ModelOutput.for_tool_call("mockllm/model", "move", {"direction": "north"})
    call.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
    model = get_model("mockllm/model", custom_outputs=[call] * (2 * TICKS + 4))
    task = world(seats="inspect,local/random,inspect", season_ticks=TICKS, env=json.dumps({"turn_timeout_ms": 30000}))
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    samples = {s.id: s for s in log.samples}
    assert set(samples) == {"seat-0", "seat-2"}
    run_ids = {s.metadata["run_id"] for s in log.samples}
    assert len(run_ids) == 1  # both seats played one run
    body = _run_of(srv, token, run_ids.pop())
    run, results = body["run"], body["results"]
    assert run["status"] == "finished" and [s["provider"] for s in run["roster"]] == ["agent", "local", "agent"]
    for k in (0, 2):
        agent = next(a for a in results["agents"] if a["seat"] == k)
        score = samples[f"seat-{k}"].scores["scorecard"]
        assert score.value == agent["fitness_index"] and score.metadata["dimensions"] == agent["dimensions"]
        mine = [t for t in body["transcript"] if t["seat"] == k]
        assert len(mine) == TICKS and all(t["actions"] == [{"action": "move", "direction": "north"}] for t in mine)
        msgs = samples[f"seat-{k}"].messages
        assert msgs[0].role == "system" and "## How to play your turn" in msgs[0].text
        assert [m.role for m in msgs[1:4]] == ["user", "assistant", "tool"] and msgs[1].text.startswith("tick 0 of 10")


def test_inspect_eval_resolves_the_registered_task_and_plays_it(srv, tmp_path):
    token = account(srv.core)
    with FakeProvider() as fake:
        fake.defaults["seat-model"] = {"calls": [("eat", {})], "usage": (120, 4)}
        env = {**os.environ, "STUDIO_URL": srv.url, "STUDIO_TOKEN": token, "FAKE_API_KEY": "k-fake",
               "FAKE_BASE_URL": fake.url + "/v1"}
        out = _inspect_eval(env, tmp_path)
        asked = fake.bodies("seat-model")
    assert out.returncode == 0, out.stderr[-3000:]
    [path] = list(tmp_path.glob("*.eval"))
    log = read_eval_log(str(path))
    assert log.eval.task == "scenario_studio/world" and log.status == "success"
    [sample] = log.samples
    body = _run_of(srv, token, sample.metadata["run_id"])
    agent = next(a for a in body["results"]["agents"] if a["seat"] == 0)
    assert sample.scores["scorecard"].value == agent["fitness_index"]
    mine = [t for t in body["transcript"] if t["seat"] == 0]
    assert len(mine) == TICKS and all(t["actions"] == [{"action": "eat"}] for t in mine)
    # our action schema reached the provider as its tools, and each call was answered before the next turn
    assert len(asked) == TICKS and {t["function"]["name"] for t in asked[0]["tools"]} >= {"move", "eat", "gather"}
    assert body["run"]["roster"][0]["model"] == "inspect openai-api/fake/seat-model"


def _inspect_eval(env: dict, log_dir) -> subprocess.CompletedProcess:
    """The command line of docs/FORMATS.md; `make realmodel` runs it with its own model and URL."""
    return subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "scenario_studio/world",
                           "--model", "openai-api/fake/seat-model",
                          "-T", "seats=inspect,local/honest-trader", "-T", f"season_ticks={TICKS}",
                           "--log-dir", str(log_dir), "--display", "none"],
                          env=env, capture_output=True, text=True, timeout=300)
