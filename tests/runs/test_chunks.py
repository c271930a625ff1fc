"""A series' scripted runs go to the workers in chunks (several runs per Ray call), bounded by their
work; a run that raises in its worker fails alone, and the rest of its chunk is recorded."""
from __future__ import annotations

import json

import ray

from engine.scenario import resolve_env
from orchestrator.play import Job
from orchestrator.runs.head import dispatcher as dispatching
from orchestrator.records.roster import Seat
from orchestrator.records.run import Run
from orchestrator.runs.head.dispatcher import chunked
from orchestrator.workers import MatchWorker
from tests.runs.conftest import wait_terminal


def _row(ticks: int, seats: int, anchors: int = 0, scenario: str = "svc:custom-base-v1") -> Run:
    return Run(seq=1, id="run_1", account_id="acc_1", launch_id="run_1", name="r", status="launching",
               scenario_id=scenario, scenario_hash="h", scripted=True, turns_reserved=0, created_at_ms=0,
               effective={"season_ticks": ticks, "env": {"anchors": ["random"] * anchors}},
               roster=[Seat(seat=k, name=f"random {k}", model="local/random", provider="local", funding="free",
                            format="tools", scaffold="local-policy-v1") for k in range(seats)])


def test_chunks_split_claimed_runs_in_order_over_the_free_slots():
    assert chunked(list(range(10)), 4) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert chunked(list(range(3)), 4) == [[0], [1], [2]]  # a shallow queue: one run per call, as before
    assert chunked(list(range(32)), 4) == [list(range(k, k + 8)) for k in range(0, 32, 8)]


def test_free_slots_take_the_least_loaded_worker_first_and_turn_among_equals():
    d = dispatching.Dispatcher.__new__(dispatching.Dispatcher)
    a, b, c = object(), object(), object()
    d.inflight = {"r1": (None, a)}
    assert d._free_slots([a, b, c], 2) == [b, c, a, b, c]  # b and c hold nothing, a one chunk
    d.inflight = {}
    # one run claimed at a time, each over before the next: the first slot goes round the pool
    assert [d._free_slots([a, b, c], 1, first)[0] for first in range(4)] == [a, b, c, a]


def test_a_chunk_is_bounded_by_agents_times_ticks():
    assert _row(300, 16, anchors=8).work() == 24 * 300
    d = dispatching.Dispatcher.__new__(dispatching.Dispatcher)
    d.tick_ms = 0.0
    assert d._per_chunk([_row(300, 16, anchors=8)]) == dispatching.CHUNK_RUNS
    assert d._per_chunk([_row(300, 16, anchors=8), _row(300, 256)]) == 1  # the biggest claimed run decides
    assert d._per_chunk([_row(60, 2)]) == dispatching.CHUNK_RUNS
    assert d._per_chunk([_row(60, 2, scenario="arena:chess")]) == 1  # games vary too much to chunk
    d.tick_ms = 5.0  # paced for spectators: one run per call
    assert d._per_chunk([_row(60, 2)]) == 1


def _job(run_id: str, env: dict) -> dict:
    seats = [{"name": f"s{k}", "model": "local/random", "provider": "local"} for k in range(2)]
    return vars(Job(run_id=run_id, match_id=run_id + "m", data_dir="", season_ticks=30, env=env, seats=seats,
                    meta={"scenario_id": "svc:custom-base-v1"}))


def test_a_run_that_raises_in_its_worker_fails_alone_and_the_chunk_plays_on():
    env = resolve_env({})
    env["seed"], env["spawn_seed"] = 7, 8
    worker = MatchWorker.remote()
    try:
        out = ray.get(worker.play_many.remote([_job("a", env), _job("b", {}), _job("c", env)]), timeout=120)
    finally:
        ray.kill(worker)
    # a played run comes back as the record the head stores, a raised one as what the worker caught
    assert [out[0].run_id, out[1]["run_id"], out[2].run_id] == ["a", "b", "c"]
    assert out[1]["raised"].startswith("KeyError") and "Traceback" in out[1]["traceback"]
    for o in (out[0], out[2]):
        # a job naming no archive: the match comes back as bytes for the head to land
        assert o.status == "finished" and json.loads(o.results)["match_ticks"] == 30 and o.events
        assert o.archived is None


def test_a_series_is_handed_over_in_chunks_and_every_run_reads_finished(srv, lab, monkeypatch):
    sizes = []
    submit = srv.dispatcher._submit

    def counting(rows, worker):
        sizes.append(len(rows))
        return submit(rows, worker)
    monkeypatch.setattr(srv.dispatcher, "_submit", counting)
    series = lab.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 60, "trials": 24,
                                           "roster": [{"model": "local/random"}] * 2}).json()["batch"]
    for rid in series["run_ids"]:
        body = wait_terminal(lab, rid)
        assert body["run"]["status"] == "finished" and body["results"]["match_ticks"] == 60
    assert sum(sizes) == 24 and max(sizes) > 1  # fewer Ray calls than runs


def test_a_run_whose_match_raises_fails_alone_and_its_series_finishes(tmp_path):
    """End to end: the runs are queued first, one of them with a stored env its worker cannot build a
    match from; a server that then starts plays the series in chunks."""
    from orchestrator.auth import authenticate
    from orchestrator.core import Core
    from orchestrator.runs import service
    from tests.runs.conftest import CONFIG, account, local_body, start

    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(CONFIG)
    core = Core.open(data)
    token = account(core)
    series = service.launch(core, authenticate(core, token), local_body(trials=10))["batch"]
    broken = series["run_ids"][1]
    with core.store.write() as c:
        eff = json.loads(c.execute("SELECT effective FROM runs WHERE id = ?", (broken,)).fetchone()[0])
        del eff["env"]["seed"]
        c.execute("UPDATE runs SET effective = ? WHERE id = ?", (json.dumps(eff), broken))
    s = start(data)
    try:
        with s.client(token) as c:
            for rid in series["run_ids"]:
                body = wait_terminal(c, rid, timeout=120)
                if rid == broken:
                    assert body["run"]["status"] == "failed"
                    assert body["run"]["error"]["message"] == "the match could not be played: KeyError: 'seed'"
                else:
                    assert body["run"]["status"] == "finished" and body["results"]["match_ticks"] == 60
    finally:
        s.stop()
