"""A 2-node cluster with a shared archive: the workers land every match themselves, scripted and
model-seat matches alike, and the service (the head) lands nothing; it records the runs, asks for the
series' compaction, and reads the results back from the shared location like any reader."""
from __future__ import annotations

import json
import time

import pyarrow.parquet as pq
import pytest

from tests.cluster.harness import manifests as _manifests, serve, series_body, wait_runs


@pytest.fixture(scope="module")
def service(cluster, tmp_path_factory):
    root = tmp_path_factory.mktemp("shared")
    # a path every node mounts at the same place (here: one machine's disk), declared shared
    s = serve(root / "data", cluster.address, config=f'[archive]\nuri = "{root / "archive"}"\nshared = true\n'
                                                          'events = "stored"\n')  # the logs' files followed here
    s.archive = root / "archive"
    yield s
    s.stop()


def _wait_for(path, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _wait_for_published(archive, batch_id: str, timeout: float = 60) -> bool:
    """A series' parts are published off the request path, moments after its last result."""
    deadline = time.monotonic() + timeout
    while not (any((archive / "events" / batch_id).glob("*.parquet"))
               and not any(p for sub in ("events", "seats") for p in (archive / sub / batch_id).glob("*.staged"))):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_workers_land_a_series_in_the_shared_archive_and_the_head_lands_nothing(cluster, service):
    head_node, worker_node = cluster.node_ids
    with service.client() as c:
        r = c.post("/api/v1/runs", json=series_body(trials=12, ticks=100))
        assert r.status_code == 201, r.text
        series = r.json()["batch"]
        batch = series["batch_id"]
        bodies = wait_runs(c, series["run_ids"])
        assert [b["run"]["status"] for b in bodies] == ["finished"] * 12
        manifests = _manifests(service, series["run_ids"])
        # every match was written by the worker process that played it, never by the service
        for b in bodies:
            m = manifests[b["run"]["run_id"]]
            assert m["pid"] != service.proc.pid and m["node_id"] in (head_node, worker_node)
            # the match's chunk, one part per kind staged under the series
            assert sorted(f.rsplit("/", 1)[0] for f in m["files"]) == [f"events/{batch}", f"seats/{batch}"]
            assert all(f.endswith(".staged") and size > 0 for f, size in m["files"].items())
        assert worker_node in {m["node_id"] for m in manifests.values()}  # the worker node wrote some
        # the series' parts are published in the shared location, and read back through the API
        assert _wait_for_published(service.archive, batch)
        paths = sorted((service.archive / "events" / batch).glob("*.parquet"))
        meta = {k: v for path in paths for k, v in json.loads(pq.read_schema(path).metadata[b"studio"])["matches"].items()}
        assert set(meta) == {b["run"]["match_id"] for b in bodies}
        assert {m["node_id"] for m in meta.values()} == {manifests[b["run"]["run_id"]]["node_id"] for b in bodies}
        summary = c.get(f"/api/v1/batches/{series['batch_id']}").json()["batch"]
        assert summary["status"] == "finished" and all(s["n"] == 12 for s in summary["summary"]["seats"])
        log = c.get(bodies[0]["run"]["links"]["log"])
        assert log.status_code == 200 and "tick 1" in log.text
    assert sorted(p.name for p in (service.archive / "seats").iterdir()) == [batch]  # nothing per match left
    assert sorted(p.name for p in (service.archive / "seats" / batch).iterdir()) == [p.name for p in paths]
    assert not (service.data_dir / "archive").exists()  # the data dir holds the store, not the archive


def test_model_matches_on_the_worker_node_land_their_transcripts_there(cluster, service):
    from orchestrator.seats import keys
    from orchestrator.bootstrap import DEFAULT_OWNER_EMAIL
    from orchestrator.core import Core
    from tests.seats.fake_provider import FakeProvider

    head_node, worker_node = cluster.node_ids
    with FakeProvider() as fake:
        fake.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"})], "usage": (100, 20)}
        keys.set_key(Core.open(service.data_dir), provider="router", key="k-router", email=DEFAULT_OWNER_EMAIL,
                     base_url=fake.url + "/v1", balance_usd=50.0)
        with service.client() as c:
            nodes, bodies, manifests = set(), [], {}
            # four runs reach every model worker, one per node. The worker node's may not be playing yet: the
            # scheduler can place it elsewhere, and then it goes and is asked for again at the next sweep
            # (orchestrator/runs/head/modelpool.py), so rounds go on until a match played there, for 90 s at most
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                run_ids = []
                for _ in range(4):
                    r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                                     "roster": [{"model": "openai/gpt-4o-mini"},
                                                                {"model": "local/random"}]})
                    assert r.status_code == 201, r.text
                    run_ids.append(r.json()["run"]["run_id"])
                bodies += wait_runs(c, run_ids)
                manifests |= _manifests(service, run_ids)
                nodes |= {m["node_id"] for m in manifests.values()}
                if worker_node in nodes:
                    break
            for body in bodies:
                run = body["run"]
                assert run["status"] == "finished" and body["results"]["match_ticks"] == 10, run["error"]
                m = manifests[run["run_id"]]
                assert m["pid"] != service.proc.pid
                assert m["files"][f"transcripts/{run['match_id']}.arrow"] > 0
                turns = c.get(f"/api/v1/runs/{run['run_id']}/transcript", params={"seat": 0}).json()["turns"]
                assert len(turns) == 10 and turns[0]["actions"]
                assert (service.archive / "transcripts" / f"{run['match_id']}.arrow").exists()
            placed = sorted((m["node_id"][:8], m["pid"]) for m in manifests.values())
            assert worker_node in nodes, f"every model match played on the head's node {placed}:\n{service.log()[-6000:]}"
