"""The names the service's shared actors are found by (orchestrator.actors): one namespace per service,
and a name per version of the code, so heads of two versions on one cluster (a rolling upgrade) never
call each other's actors."""
from __future__ import annotations

from orchestrator import actors
from orchestrator.actors import Shared


def test_a_detached_actors_name_carries_the_code_version_and_heads_of_one_version_share_it(store, monkeypatch):
    one, other = Shared(store, detached=True), Shared(store, detached=True)
    opts = one.options("recorder")
    assert opts["name"] == f"recorder-v{actors.VERSION}" and opts["lifetime"] == "detached"
    assert opts["namespace"] == other.options("recorder")["namespace"]  # one service, one namespace
    assert other.options("recorder")["name"] == opts["name"]  # every head of this version finds one actor
    assert one.address("recorder") == f"{opts['namespace']}/recorder-v{actors.VERSION}"
    monkeypatch.setattr(actors, "VERSION", "9.9.9")
    newer = Shared(store, detached=True)  # a head of the next version, on the same store and cluster
    assert newer.options("recorder")["namespace"] == opts["namespace"]
    assert newer.options("recorder")["name"] == "recorder-v9.9.9" != opts["name"]


def test_a_private_rays_actors_are_the_heads_own(store):
    a, b = Shared(store, detached=False), Shared(store, detached=False)
    assert a.options("agents")["name"] != b.options("agents")["name"]
    assert "lifetime" not in a.options("agents") and a.options("agents")["name"].startswith(f"agents-v{actors.VERSION}-")
