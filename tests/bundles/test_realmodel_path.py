"""benchmarks/realmodel.py's last step on the provider double: a model run's bundle fetched over REST,
the provider stopped, then `studio verify` in a fresh process (benchmarks.lib.bundles, the same code)."""
from __future__ import annotations

from benchmarks.lib import bundles
from tests.bundles.util import launched
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider

MODEL = "openai/gpt-4o-mini"


def test_a_model_run_verifies_once_its_provider_is_gone(srv, tmp_path):
    with FakeProvider() as fake:
        fake.defaults[MODEL] = {"calls": [("gather", {}), ("move", {"direction": "west"})], "usage": (70, 12)}
        c, _ = model_account(srv, fake)
        with c:
            run = launched(c, {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": [
                {"model": MODEL, "name": "tools"}, {"model": MODEL, "name": "json", "format": "json"}]})["run"]
            path = bundles.fetch(c, run["run_id"], tmp_path)
    status, report, _ = bundles.verify_apart(path)
    assert (status, report["verified"], report["matches"]) == (0, True, 1), report
