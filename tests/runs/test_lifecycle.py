"""A run end to end through the API with real Ray: launch, poll, results, pages, determinism."""

import duckdb
import pyarrow.parquet as pq

from analytics.archive.layout import EVENTS_DIR, SEATS_DIR, series_archived, series_files
from analytics.archive.materialize import materialize
from analytics.archive.store import Archive
from analytics.choice import METHOD_NAMES, method_for
from engine.hashing import content_hash
from tests.runs.conftest import local_body, wait_terminal
from tests.waiting import until


def test_launch_poll_finish_and_read_results(lab, srv):
    r = lab.post("/api/v1/runs", json=local_body(name="first"))
    assert r.status_code == 201
    launched = r.json()
    assert launched["ok"] is True and launched["batch"] is None
    run = launched["run"]
    assert run["status"] in ("queued", "launching", "running", "finished")
    assert run["name"] == "first" and run["agent_turns"]["reserved"] == 2 * 60
    body = wait_terminal(lab, run["run_id"])
    run, res = body["run"], body["results"]
    assert run["status"] == "finished" and run["stop_reason"] == "season_end" and run["error"] is None
    assert res["match_ticks"] == 60 and res["field_size"] == 6 and len(res["agents"]) == 2
    assert run["agent_turns"]["settled"] == 120 and run["live"] is None
    assert [s["funding"] for s in run["roster"]] == ["free", "free"]
    assert run["roster"][0]["usage"]["agent_turns"] == 60
    eff = run["effective"]
    assert eff["seed_source"] == "drawn" and eff["spawn_seed_source"] == "drawn"
    assert eff["hash"] == content_hash("svc:custom-base-v1", 60, eff["env"])
    assert run["started_at_ms"] <= run["finished_at_ms"]
    # the log agrees with the results: recomputing from the Parquet part `studio archive materialize`
    # writes (a scripted match keeps its inputs, its log derived) gives them
    srv.dispatcher.archiver.flush()
    assert not series_files(srv.data_dir, EVENTS_DIR, run["match_id"])
    assert materialize(Archive.of(srv.data_dir), [run["match_id"]])["written"] == 1
    [path] = series_files(srv.data_dir, EVENTS_DIR, run["match_id"])
    group = pq.read_metadata(path).row_group(0)
    column = group.column(0)
    assert column.compression.startswith("LZ4") and column.statistics.has_min_max  # match_id: readers skip by it
    assert "DELTA_BINARY_PACKED" in group.column(1).encodings  # tick
    from engine.rubric import score
    from orchestrator.play.world import specs_from_meta
    cols, meta = Archive.of(srv.data_dir).read_events(run["match_id"])
    assert meta["run_id"] == run["run_id"]
    graded = [a.pop("decisions") for a in res["agents"]]  # the run view's decision grades: none for local seats
    assert graded == [None, None] and score(cols, specs_from_meta(meta)) == res


def test_public_pages_need_no_token(lab, srv):
    run = lab.post("/api/v1/runs", json=local_body()).json()["run"]
    run = wait_terminal(lab, run["run_id"])["run"]
    import httpx
    with httpx.Client(base_url=srv.url) as anon:
        rep = anon.get(run["links"]["match"])
        assert rep.status_code == 200 and rep.json()["results"]["match_ticks"] == 60
        html = anon.get(run["links"]["match"], headers={"Accept": "text/html"})
        assert html.headers["content-type"].startswith("text/html") and "<svg" in html.text
        assert html.text.count("<svg") == 5  # a chart per dimension
        log = anon.get(run["links"]["log"])
        assert log.status_code == 200 and "tick 0" in log.text and "honest-trader" in log.text
        page = anon.get(run["links"]["replay"])
        assert page.status_code == 200 and "<canvas" in page.text
        frames = anon.get(run["links"]["replay"], params={"format": "json"}).json()
        assert len(frames["terrain"]) == len(frames["terrain"][0]) >= 24
        assert frames["frames"][-1]["tick"] == 60 and len(frames["frames"][0]["agents"]) == 6
        assert anon.get("/api/matches/" + "0" * 32 + "/report").status_code == 404


def test_pinned_seeds_replay_identically(lab):
    body = local_body(env={"seed": 77, "spawn_seed": 78})
    a = wait_terminal(lab, lab.post("/api/v1/runs", json=body).json()["run"]["run_id"])
    b = wait_terminal(lab, lab.post("/api/v1/runs", json=body).json()["run"]["run_id"])
    assert a["run"]["run_id"] != b["run"]["run_id"]  # not idempotent: two runs
    assert a["results"] == b["results"]
    assert a["run"]["effective"]["seed_source"] == "run" and a["run"]["effective"]["seed"] == 77
    assert a["run"]["effective"]["hash"] == b["run"]["effective"]["hash"]


def test_series_runs_in_parallel_and_summarises(lab):
    r = lab.post("/api/v1/runs", json=local_body(trials=4)).json()
    series = r["batch"]
    assert series["trials"] == 4 and series["seed_mode"] == "vary" and len(series["run_ids"]) == 4
    assert r["run"]["run_id"] == series["run_ids"][0] and r["run"]["batch_id"] == series["batch_id"]
    runs = [wait_terminal(lab, rid) for rid in series["run_ids"]]
    seeds = {x["run"]["effective"]["seed"] for x in runs}
    assert len(seeds) == 4 and {x["run"]["effective"]["seed_source"] for x in runs} == {"series"}
    b = lab.get(f"/api/v1/batches/{series['batch_id']}").json()["batch"]
    assert b["status"] == "finished" and b["run_ids"] == series["run_ids"]
    summary = b["summary"]
    assert summary["run_ids"] == sorted(series["run_ids"])
    seat0 = summary["seats"][0]
    assert seat0["n"] == 4 and seat0["fitness_index"]["method"] == METHOD_NAMES[method_for("fitness_index", 4)]
    fits = [x["results"]["agents"][0]["fitness_index"] for x in runs]
    # the summary averages the stored full-precision values, the run views show them rounded to 0.01:
    # the two means agree to within a rounding step, not always to the last digit
    assert abs(seat0["fitness_index"]["estimate"] - sum(fits) / 4) <= 0.0101
    for seat in summary["seats"]:  # every score interval on the scale, to 2 decimals
        for got in (seat["fitness_index"], *seat["dimensions"].values()):
            assert 0.0 <= got["low"] <= got["estimate"] <= got["high"] <= 100.0
            assert all(got[k] == round(got[k], 2) for k in ("estimate", "low", "high"))
        assert 0.0 <= seat["survival_rate"]["low"] <= seat["survival_rate"]["high"] <= 1.0
    listed = lab.get("/api/v1/runs", params={"batch_id": series["batch_id"]}).json()["runs"]
    assert sorted(x["run_id"] for x in listed) == sorted(series["run_ids"])


def test_series_pinned_mode_shares_one_map(lab):
    r = lab.post("/api/v1/runs", json=local_body(trials=3, seed_mode="pinned")).json()
    runs = [wait_terminal(lab, rid)["run"]["effective"] for rid in r["batch"]["run_ids"]]
    assert len({e["seed"] for e in runs}) == 1 and len({e["spawn_seed"] for e in runs}) == 3


def test_list_filters_and_cursor(lab):
    ids = [lab.post("/api/v1/runs", json=local_body(season_ticks=10)).json()["run"]["run_id"] for _ in range(3)]
    for rid in ids:
        wait_terminal(lab, rid)
    page1 = lab.get("/api/v1/runs", params={"limit": 2}).json()
    assert [x["run_id"] for x in page1["runs"]] == ids[::-1][:2]
    page2 = lab.get("/api/v1/runs", params={"limit": 2, "cursor": page1["next_cursor"]}).json()
    assert page2["runs"][0]["run_id"] == ids[0]
    assert lab.get("/api/v1/runs", params={"status": "finished", "limit": 100}).json()["runs"]
    assert lab.get("/api/v1/runs", params={"limit": 0}).json()["error"] == "bad_request"
    assert lab.get("/api/v1/runs", params={"status": "nope"}).status_code == 400


def test_usage_reports_turns_and_allowances(lab):
    rid = lab.post("/api/v1/runs", json=local_body(season_ticks=20)).json()["run"]["run_id"]
    wait_terminal(lab, rid)
    u = lab.get("/api/v1/usage").json()
    month = u["months"][0]
    assert any(x["run_id"] == rid and x["agent_turns"] == 40 for x in month["runs"])
    assert {m["model"] for m in month["by_model"]} >= {"local/honest-trader"}
    assert u["allowances"]["agent_turns"]["used"] >= 40 and u["allowances"]["queued_runs"]["limit"] == 10


def test_notebook_reads_while_service_runs(lab, srv):
    rid = lab.post("/api/v1/runs", json=local_body()).json()["run"]["run_id"]
    run = wait_terminal(lab, rid)["run"]
    srv.dispatcher.archiver.flush()  # an ended single run is compacted off the request path
    from analytics.data import open_data_dir
    data = open_data_dir(srv.data_dir)
    # a query over the events view writes the match's derived log first, then reads Parquet
    rows = data.query("SELECT count(*) AS n FROM events WHERE event = 'move' AND match_id = ?", [run["match_id"]])
    assert int(rows["n"].iloc[0]) > 0
    con = duckdb.connect()
    assert con.execute("SELECT count(*) FROM read_parquet(?) WHERE match_id = ?",
                       [str(srv.data_dir / "archive" / "events" / "**" / "*.parquet"), run["match_id"]]).fetchone()[0]
    seats = data.seats_df(run_ids=[rid])
    assert len(seats) == 6 and set(seats["match_id"]) == {run["match_id"]}


def test_every_ended_run_is_exported_to_the_archive(lab, srv):
    series = lab.post("/api/v1/runs", json=local_body(trials=2)).json()["batch"]
    single = lab.post("/api/v1/runs", json=local_body()).json()["run"]["run_id"]
    runs = [wait_terminal(lab, r)["run"] for r in [*series["run_ids"], single]]
    srv.dispatcher.archiver.flush()
    glob = str(srv.data_dir / "archive" / "runs" / "*.parquet")
    got = duckdb.connect().execute("SELECT run_id, status, parse_filename(filename, true) FROM "
                                   "read_parquet(?, union_by_name = true, filename = true)", [glob]).fetchall()
    mine = {r["run_id"] for r in runs}
    got = [row for row in got if row[0] in mine]  # the data dir is shared with the module's other tests
    files = {run_id: file for run_id, _, file in got}
    assert len(got) == len(files) == 3 and {s for _, s, _ in got} == {"finished"}
    # a series' views go in one file, named after it, once none of its runs is left to play
    assert {files[r] for r in series["run_ids"]} == {series["batch_id"]} and files[single] == single


def test_paired_series_replay_the_same_seeds_and_compare(lab, srv):
    from analytics.compare import compare_configs, skill_uplift
    from analytics.data import open_data_dir

    first = lab.post("/api/v1/runs", json=local_body(trials=3)).json()["batch"]
    seat = {"model": "local/honest-trader", "instructions": "Trade early."}
    second = lab.post("/api/v1/runs", json=local_body(trials=3, paired_with=first["batch_id"],
                                                       roster=[seat, {"model": "local/aggressive-raider"}])).json()
    assert second.get("batch"), second
    a = [wait_terminal(lab, r)["run"]["effective"] for r in first["run_ids"]]
    b = [wait_terminal(lab, r)["run"]["effective"] for r in second["batch"]["run_ids"]]
    assert [(e["seed"], e["spawn_seed"]) for e in a] == [(e["seed"], e["spawn_seed"]) for e in b]
    # a run's result is readable when it ends; its series' seat rows are published after (the head lands them)
    for batch_id in (first["batch_id"], second["batch"]["batch_id"]):
        until(lambda: series_archived(srv.data_dir, SEATS_DIR, batch_id), what=f"series {batch_id} published")
    data = open_data_dir(srv.data_dir)
    got = compare_configs(data, first["batch_id"], second["batch"]["batch_id"], 0)
    assert len(got["paired_on"]) == 3 and got["difference"]["n"] == 3
    assert skill_uplift(data, second["batch"]["batch_id"], first["batch_id"], 0)["difference"]["n"] == 3
    # a seat past the bound the API document states is refused by it, never passed to the comparison
    from orchestrator.runs.analysis import MAX_SEAT
    doc = lab.get("/api/v1/openapi.json").json()
    seat_params = [p for p in doc["paths"]["/api/v1/compare"]["get"]["parameters"] if p["name"] in ("seat", "seat_b")]
    assert [p["schema"]["maximum"] for p in seat_params] == [MAX_SEAT, MAX_SEAT]
    for name in ("seat", "seat_b"):
        r = lab.get("/api/v1/compare", params={"batch_a": first["batch_id"], "batch_b": second["batch"]["batch_id"],
                                                name: MAX_SEAT + 1})
        assert r.status_code == 400 and r.json()["error"] == "bad_request" and r.json()["message"].startswith(name)
    bad = lab.post("/api/v1/runs", json=local_body(trials=2, paired_with="bat_nope")).json()
    assert bad["error"] == "bad_request" and "paired_with" in bad["message"]
    single = lab.post("/api/v1/runs", json=local_body(paired_with=first["batch_id"])).json()
    assert single["error"] == "bad_request"
