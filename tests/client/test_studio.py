"""The client against a real server: the tools as methods over REST with the service's refusals, the
analysis as pandas frames equal to what the server and the archive hold, and the drift check of its
OpenAPI document."""
from __future__ import annotations

import base64
import copy

import pandas as pd
import pytest
from studio_client import Drift, Studio, StudioError, compat, frames

from analytics.data import open_data_dir
from api.python import Studio as LocalStudio
from tests.runs.conftest import account, local_body

ROSTER = [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]


@pytest.fixture(scope="module")
def played(shared_srv):
    """Two paired series of 3 trials on one account, played through the client."""
    token = account(shared_srv.core)
    with Studio(shared_srv.url, token) as studio:
        a = studio.launch_run(**local_body(roster=ROSTER, season_ticks=30, trials=3))["batch"]["batch_id"]
        b = studio.launch_run(**local_body(roster=ROSTER, season_ticks=30, trials=3, paired_with=a,
                                           env={"resources": {"food": {"regen": 0.5}}}))["batch"]["batch_id"]
        for batch_id in (a, b):
            assert studio.wait(batch_id, timeout_s=180)["batch"]["status"] == "finished"
    return shared_srv, token, a, b


def test_tools_over_rest_refuse_as_the_service_does(played):
    srv, token, a, _ = played
    local = LocalStudio(srv.data_dir, token)
    with Studio(srv.url, token) as studio:
        assert studio.whoami() == local.whoami()
        scen = studio.create_scenario(name="lean", season_ticks=40, env={"anchors": ["random"]})["scenario"]
        assert studio.update_scenario(id=scen["id"], season_ticks=50)["scenario"]["season_ticks"] == 50
        page = studio.list_runs(batch_id=a, limit=2)
        assert page["next_cursor"] is not None and len(page["runs"]) == 2
        ended = page["runs"][0]["run_id"]
        assert studio.cancel_run(id=ended)["cancelled"] is False  # a POST without a body
        for tool, args in (("get_run", {"id": "run_nope"}), ("validate_scenario", {"name": "x"}),
                           ("launch_run", local_body(roster=[{"model": "local/nope"}])),
                           ("get_batch", {"id": a, "wait_ms": 30_001})):
            with pytest.raises(StudioError) as there:
                studio.call(tool, **args)
            with pytest.raises(local.refusal) as here:
                local.call(tool, **args)
            assert (there.value.code, there.value.status, there.value.message) == (
                here.value.code, here.value.status, here.value.message)
        assert studio.delete_scenario(id=scen["id"])["deleted"] == scen["id"]
        with pytest.raises(TypeError, match="get_run needs id"):
            studio.get_run()
    with Studio(srv.url, "dsk_" + "0" * 64) as stranger, pytest.raises(StudioError) as e:
        stranger.whoami()
    assert (e.value.code, e.value.status) == ("token_required", 401)


def test_exports_answer_as_the_tools_answer(played):
    srv, token, a, _ = played
    local = LocalStudio(srv.data_dir, token)
    run_id = local.get_batch(id=a)["batch"]["run_ids"][0]
    with Studio(srv.url, token) as studio:
        assert studio.export_batch(id=a) == local.export_batch(id=a)
        for id in (run_id, a):
            for fmt in ("csv", "inspect"):
                there, here = studio.export_run(id=id, format=fmt), local.export_run(id=id, format=fmt)
                assert {k: there[k] for k in ("id", "format", "filename", "media_type", "size_bytes")} == {
                    k: here[k] for k in ("id", "format", "filename", "media_type", "size_bytes")}, (id, fmt)
        assert base64.b64decode(studio.export_run(id=a, format="csv")["base64"]) == studio.download(a, "csv")


def test_frames_hold_what_the_server_and_the_archive_hold(played):
    srv, token, a, b = played
    with Studio(srv.url, token) as studio:
        rows = frames.results(studio, a)
        archived = open_data_dir(srv.data_dir).seats_df(batch_id=a)
        assert len(rows) == len(archived) > 0
        assert sorted(rows["fitness_index"]) == pytest.approx(sorted(archived["fitness_index"]))

        summary = frames.series_summary(studio, a)
        batch = studio.get_batch(id=a)["batch"]
        assert summary.attrs["status"] == "finished" and summary.attrs["counts"] == {"finished": 3}
        assert list(summary["seat"]) == [s["seat"] for s in batch["summary"]["seats"]]
        first = batch["summary"]["seats"][0]
        assert summary.loc[0, ["fitness_index", "fitness_index_low", "fitness_index_high"]].tolist() == [
            first["fitness_index"]["estimate"], first["fitness_index"]["low"], first["fitness_index"]["high"]]
        assert summary.loc[0, "economy"] == first["dimensions"]["economy"]["estimate"] and summary.loc[0, "n"] == 3

        run_id = batch["run_ids"][0]
        cards = frames.scorecards(studio, run_id)
        results = studio.get_run(id=run_id)["results"]
        assert len(cards) == len(results["agents"]) + len(results["anchors"])
        assert cards.loc[0, ["name", "rank", "fitness_index", "survival"]].tolist() == [
            results["agents"][0][k] for k in ("name", "rank", "fitness_index")] + [
            results["agents"][0]["dimensions"]["survival"]]

        board = frames.leaderboard(studio, "svc:custom-base-v1", resamples=200)
        rest = studio.get_leaderboard(scenario_id="svc:custom-base-v1", resamples=200)["leaderboard"]
        assert board.attrs["n_matches"] == rest["n_matches"] == 6 and board.attrs["game"] == "world"
        assert board[["label", "estimate", "low", "high", "rank"]].to_dict("records") == [
            {k: r[k] for k in ("label", "estimate", "low", "high", "rank")} for r in rest["rows"]]

        cmp = frames.comparison(studio, a, b, seat=0)
        rest = studio.compare_batches(batch_a=a, batch_b=b, seat=0)["comparison"]
        assert (cmp["difference"], cmp["difference_low"], cmp["prob_improvement"], cmp["n"]) == (
            rest["difference"]["estimate"], rest["difference"]["low"], rest["prob_improvement"]["estimate"], 3)
        assert isinstance(frames.results(studio, run_id), pd.DataFrame)


def test_the_client_fails_when_the_document_drifts(shared_srv):
    with Studio(shared_srv.url, account(shared_srv.core)) as studio:
        doc = studio.openapi()
        studio.check()  # the live document is the one the client was written for
    assert compat.drift(doc) == []
    newer = copy.deepcopy(doc)
    newer["info"]["version"] = "2.0.0"
    del newer["paths"]["/api/v1/compare"]
    del newer["components"]["schemas"]["Strength"]["properties"]["tied_with_leader"]
    newer["components"]["schemas"]["Run"]["properties"]["status"]["enum"].append("paused")
    found = compat.drift(newer)
    assert len(found) == 4, found
    assert "version 2.0.0" in found[0] and "compare_batches" in found[1] and "Strength.tied_with_leader" in found[2]
    assert "statuses" in found[3]
    with pytest.raises(Drift, match="written for 1.0.0"):
        compat.require(newer)
