"""A model worker the scheduler placed on another node than the one it was asked for (soft affinity
does so for a node it does not see, and for a loaded one slow to start processes) plays no match on a
node that has its own: it goes, and its node is asked for again. Before, it stayed and played there,
and the node it was meant for never got a model worker (the 2-node cluster test saw every model match
on the head)."""
import json

import ray

from orchestrator.runs.head import dispatcher, modelpool
from tests.runs.conftest import start, wait_terminal
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider


def test_a_model_worker_placed_on_another_node_than_asked_plays_nothing(tmp_path, monkeypatch):
    here = ray.get_runtime_context().get_node_id()
    unseen = "ab" * 28  # a node the scheduler does not know: a worker asked for it starts on this one

    class TwoNodes(modelpool.ModelPool):
        def nodes(self):
            return [here, unseen]

    # this server's pool only: the session's shared servers in this process grow on their own threads
    monkeypatch.setattr(dispatcher, "ModelPool", TwoNodes)
    server = start(tmp_path / "data")
    try:
        with FakeProvider() as fake:
            fake.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"})], "usage": (100, 20)}
            c, _ = model_account(server, fake)
            with c:
                body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                        "roster": [{"model": "openai/gpt-4o-mini"}, {"model": "local/random"}]}
                launched = [c.post("/api/v1/runs", json=body) for _ in range(4)]
                assert all(r.status_code == 201 for r in launched), launched[0].text
                run_ids = [r.json()["run"]["run_id"] for r in launched]
                for run_id in run_ids:
                    assert wait_terminal(c, run_id)["run"]["status"] == "finished"
        rows = server.core.store.conn().execute(
            f"SELECT archived FROM runs WHERE id IN ({','.join('?' * len(run_ids))})", run_ids).fetchall()
        pids = {json.loads(r["archived"])["pid"] for r in rows}
        assert len(pids) == 1, "a worker asked for another node played matches here"
        models = server.dispatcher.models
        assert [models.node[id(w)] for w in models.ready] == [here]
        assert ray.get(models.ready[0].pid.remote()) in pids
    finally:
        server.stop()
