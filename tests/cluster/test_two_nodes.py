"""`studio serve --ray-address` on a real 2-node Ray cluster: a scripted series plays on both nodes,
the archive in the data dir is written on the head's node only (a worker elsewhere hands its matches
back), and every result equals a local replay of the same seeds."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from analytics.archive.layout import EVENTS_DIR, SEATS_DIR, series_archived, series_files
from orchestrator.play import Job, play_job
from tests.cluster.harness import manifests as _manifests, serve, series_body, wait_runs


@pytest.fixture(scope="module")
def service(cluster, tmp_path_factory):
    # every log written (config [archive] events): the test follows the event files across the nodes
    s = serve(tmp_path_factory.mktemp("cluster") / "data", cluster.address, config='[archive]\nevents = "stored"\n')
    yield s
    s.stop()


def test_a_series_plays_on_both_nodes_and_equals_a_local_run(cluster, service):
    with service.client() as c:
        r = c.post("/api/v1/runs", json=series_body(trials=20, ticks=150))
        assert r.status_code == 201, r.text
        series = r.json()["batch"]
        bodies = wait_runs(c, series["run_ids"])
        assert [b["run"]["status"] for b in bodies] == ["finished"] * 20
        summary = c.get(f"/api/v1/batches/{series['batch_id']}").json()["batch"]
        assert summary["status"] == "finished" and all(s["n"] == 20 for s in summary["summary"]["seats"])
        # the public pages read the match back from the archive the head wrote
        log = c.get(bodies[0]["run"]["links"]["log"])
        assert log.status_code == 200 and "tick 1" in log.text

    # the series' Parquet files: the parts the head node's worker wrote, published, and one file of the
    # matches the other node's worker handed back; with the node that played each match
    events = service.data_dir / "archive" / "events"
    batch = series["batch_id"]
    assert _wait_for(service.data_dir, batch)
    paths = series_files(service.data_dir, EVENTS_DIR, batch)
    meta = {k: v for path in paths for k, v in json.loads(pq.read_schema(path).metadata[b"studio"])["matches"].items()}
    assert set(meta) == {b["run"]["match_id"] for b in bodies}
    assert {m["node_id"] for m in meta.values()} == set(cluster.node_ids)  # both nodes played
    # the archive is a path on the head's disk (not declared shared): the worker on the head's node
    # landed its matches itself, the other node's worker handed them back for the service to land
    manifests = _manifests(service, [b["run"]["run_id"] for b in bodies])
    for b in bodies:
        played_on, m = meta[b["run"]["match_id"]]["node_id"], manifests[b["run"]["run_id"]]
        if played_on == cluster.node_ids[0]:
            assert m["pid"] != service.proc.pid and m["node_id"] == played_on
        else:
            assert m["pid"] == service.proc.pid
    assert {m["pid"] == service.proc.pid for m in manifests.values()} == {True, False}
    # nothing per match left behind
    for sub in (EVENTS_DIR, SEATS_DIR):
        assert sorted(p.name for p in (events.parent / sub).iterdir()) == sorted([batch, f"{batch}.parquet"])
        assert {p.relative_to(events.parent / sub) for p in series_files(service.data_dir, sub, batch)} == {
            p.relative_to(events) for p in paths}

    # the same seeds played here, in-process, with no service and no Ray, give the same results
    for body in bodies:
        run, eff = body["run"], body["run"]["effective"]
        local = play_job(Job(run["run_id"], run["match_id"], "", eff["season_ticks"], eff["env"], run["roster"],
                             {"batch_id": run["batch_id"]}))
        # the run view adds each seat's decision grades (null: local seats are not graded under auto)
        assert all(a.pop("decisions") is None for a in body["results"]["agents"])
        assert local.results == body["results"]


def _wait_for(data_dir, batch_id: str, timeout: float = 60) -> bool:
    """The series is archived off the request path, moments after the last result."""
    import time

    deadline = time.monotonic() + timeout
    while not series_archived(data_dir, EVENTS_DIR, batch_id):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_model_seat_run_gets_its_key_from_the_head_and_lands_its_transcript(service):
    from orchestrator.seats import keys
    from orchestrator.bootstrap import DEFAULT_OWNER_EMAIL
    from orchestrator.core import Core
    from tests.seats.fake_provider import FakeProvider

    with FakeProvider() as fake:
        fake.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"})], "usage": (100, 20)}
        # the admin path, as `studio key set` does while the service runs: the key lives in the store only
        keys.set_key(Core.open(service.data_dir), provider="router", key="k-router", email=DEFAULT_OWNER_EMAIL,
                     base_url=fake.url + "/v1", balance_usd=50.0)
        with service.client() as c:
            r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                             "roster": [{"model": "openai/gpt-4o-mini"}, {"model": "local/random"}]})
            assert r.status_code == 201, r.text
            body = wait_runs(c, [r.json()["run"]["run_id"]])[0]
            run = body["run"]
            assert run["status"] == "finished" and body["results"]["match_ticks"] == 10, run["error"]
            assert run["roster"][0]["usage"]["input_tokens"] == 10 * 100 and run["roster"][0]["usage"]["usd"] > 0
            assert len(fake.bodies("openai/gpt-4o-mini")) == 10
            turns = c.get(f"/api/v1/runs/{run['run_id']}/transcript", params={"seat": 0}).json()["turns"]
            assert len(turns) == 10 and turns[0]["actions"]
    transcripts = service.data_dir / "archive" / "transcripts"
    assert sorted(p.name for p in transcripts.iterdir()) == [f"{run['match_id']}.arrow"]
