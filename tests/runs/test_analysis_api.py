"""Leaderboard, paired comparison and export over REST, the same through MCP's functions and Python,
on series the server really played."""
import csv
import io

import pyarrow.parquet as pq
import pytest

from analytics.archive.format import LOCAL_PROVIDER
from analytics.compare import compare_configs
from analytics.data import open_data_dir
from api.python import Studio
from orchestrator.provider_kinds import LOCAL
from tests.runs.conftest import account, local_body, wait_terminal


def test_the_archive_names_scripted_seats_with_the_orchestrators_provider_kind():
    # the archive's seat rows and the analysis views over them read scripted seats by this one word
    assert LOCAL_PROVIDER == LOCAL


@pytest.fixture(scope="module")
def played(srv):
    token = account(srv.core)
    with srv.client(token) as c:
        a = c.post("/api/v1/runs", json=local_body(trials=3, season_ticks=40)).json()["batch"]
        b = c.post("/api/v1/runs", json=local_body(trials=3, season_ticks=40, paired_with=a["batch_id"],
                                                   env={"resources": {"food": {"regen": 0.5}}})).json()["batch"]
        for run_id in a["run_ids"] + b["run_ids"]:
            assert wait_terminal(c, run_id, timeout=120)["run"]["status"] == "finished"
    return token, a["batch_id"], b["batch_id"]


def test_leaderboard_ranks_the_models_of_a_scenario_over_rest_mcp_and_python(srv, played):
    token, a, b = played
    with srv.client(token) as c:
        r = c.get("/api/v1/leaderboard", params={"scenario_id": "svc:custom-base-v1", "resamples": 200})
        assert r.status_code == 200, r.json()
        board = r.json()["leaderboard"]
        assert board["n_matches"] == 6 and board["n_resamples"] == 200
        rows = {row["label"]: row for row in board["rows"]}
        assert {"local/honest-trader", "local/aggressive-raider"} <= set(rows)
        assert rows["local/honest-trader"]["provider"] == "local" and rows["local/honest-trader"]["n"] == 6
        assert sorted(row["rank"] for row in board["rows"]) == list(range(1, len(rows) + 1))
        assert Studio(srv.data_dir, token).get_leaderboard(scenario_id="svc:custom-base-v1", resamples=200) == r.json()
        assert c.get("/api/v1/leaderboard").json() == {"error": "bad_request", "message": "scenario_id is required"}
        assert c.get("/api/v1/leaderboard", params={"scenario_id": "x", "by": "colour"}).json()["error"] == "bad_request"
    with srv.client(account(srv.core)) as stranger:  # another account sees none of these matches
        other = stranger.get("/api/v1/leaderboard", params={"scenario_id": "svc:custom-base-v1"}).json()
        assert other["leaderboard"]["n_matches"] == 0 and other["leaderboard"]["rows"] == []


def test_leaderboard_of_one_game_over_every_scenario(srv, played):
    """game: a board of every scenario of one game (world, an arena game), never two games on one board."""
    token = played[0]
    with srv.client(token) as c:
        by_scenario = c.get("/api/v1/leaderboard", params={"scenario_id": "svc:custom-base-v1", "resamples": 200})
        assert by_scenario.json()["leaderboard"]["game"] == "world"
        world = c.get("/api/v1/leaderboard", params={"game": "world", "resamples": 200}).json()["leaderboard"]
        assert world["scenario_id"] is None and world["game"] == "world"
        assert world["rows"] == by_scenario.json()["leaderboard"]["rows"]  # the account played one world scenario
        chess = c.get("/api/v1/leaderboard", params={"game": "arena:chess"}).json()["leaderboard"]
        assert chess["n_matches"] == 0 and chess["rows"] == []  # world matches never count for chess
        assert Studio(srv.data_dir, token).get_leaderboard(game="world", resamples=200) == {"leaderboard": world}
        # a world scenario holds no chess matches: an empty board, as for a scenario never played
        mismatch = c.get("/api/v1/leaderboard", params={"scenario_id": "svc:custom-base-v1", "game": "arena:chess"})
        assert mismatch.json()["leaderboard"]["rows"] == [] and mismatch.json()["leaderboard"]["game"] == "arena:chess"
        r = c.get("/api/v1/leaderboard", params={"game": "go"})
        assert r.status_code == 400 and r.json()["error"] == "bad_request", r.json()


def test_compare_pairs_two_series_on_their_seeds(srv, played):
    token, a, b = played
    with srv.client(token) as c:
        r = c.get("/api/v1/compare", params={"batch_a": a, "batch_b": b, "seat": 0})
        assert r.status_code == 200, r.json()
        got = r.json()["comparison"]
        assert (got["batch_a"], got["batch_b"], got["seat"], got["seat_b"], got["metric"]) == (a, b, 0, 0,
                                                                                                 "fitness_index")
        assert len(got["paired_on"]) == 3
        direct = compare_configs(open_data_dir(srv.data_dir), a, b, 0)
        assert got["difference"] == direct["difference"] and got["paired_on"] == direct["paired_on"]
        assert c.get("/api/v1/compare", params={"batch_a": a, "batch_b": "bat_nope"}).status_code == 404
        bad = c.get("/api/v1/compare", params={"batch_a": a, "batch_b": b, "metric": "luck"}).json()
        assert bad["error"] == "bad_request" and "fitness_index" in bad["message"]
        assert c.get("/api/v1/compare", params={"batch_a": a, "batch_b": b, "seat": 9}).json()["error"] == "bad_request"


def test_export_gives_every_seat_row_as_csv_and_parquet(srv, played):
    token, a, _ = played
    with srv.client(token) as c:
        r = c.get(f"/api/v1/batches/{a}/export")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(r.text)))
        p = c.get(f"/api/v1/batches/{a}/export", params={"format": "parquet"})
        assert p.status_code == 200 and p.headers["content-type"] == "application/vnd.apache.parquet"
        table = pq.read_table(io.BytesIO(p.content))
        assert len(rows) == table.num_rows and len({row["match_id"] for row in rows}) == 3
        assert {row["batch_id"] for row in rows} == {a} and {row["provider"] for row in rows} == {"local"}
        assert {"seed", "spawn_seed", "model", "fitness_index", "survival"} <= set(table.column_names)
        assert Studio(srv.data_dir, token).export_batch(id=a)["csv"] == r.text
        assert c.get(f"/api/v1/batches/{a}/export", params={"format": "xml"}).json()["error"] == "bad_request"
    with srv.client(account(srv.core)) as stranger:
        assert stranger.get(f"/api/v1/batches/{a}/export").json()["error"] == "unknown_run"
