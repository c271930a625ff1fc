"""Arena runs through the run model: launched by the console's service functions (REST and MCP
refuse arena ids), played on the real Ray workers, read through the same endpoints."""
import secrets

import pytest
from bitbully import Board

from orchestrator import auth
from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from orchestrator.errors import DomainError
from orchestrator.records.turn import Said
from orchestrator.runs import service
from tests.runs.conftest import account, wait_terminal
from tests.seats.fake_provider import FakeProvider

C4 = "arena:connect-four"


def _launch(srv, token, body):
    core = srv.app.state.core
    return service.arena_launch(core, auth.authenticate(core, token), body)


def test_rest_refuses_arena_ids_saying_they_launch_from_the_console(lab):
    for path in ("/api/v1/runs", "/api/v1/runs/estimate"):
        r = lab.post(path, json={"scenario_id": "arena:chess", "roster": [{"model": "local/random"}] * 2})
        assert r.status_code == 400
        assert r.json()["error"] == "bad_scenario" and "web console" in r.json()["message"]


def test_arena_rosters_are_checked(srv):
    token = account(srv.core)
    core = srv.app.state.core
    p = auth.authenticate(core, token)
    bad = [([{"model": "local/stockfish-3"}, {"model": "local/random"}], "not a Connect Four seat"),
           ([{"model": "local/solver"}] * 3, "exactly 2 seats"),
           ([{"model": "local/solver", "skills": ["builtin:trader"]}, {"model": "local/random"}], "built-in")]
    for roster, words in bad:
        with pytest.raises(DomainError) as e:
            service.arena_estimate(core, p, {"scenario_id": C4, "roster": roster})
        assert e.value.code == "bad_roster" and words in str(e.value)
    est = service.arena_estimate(core, p, {"scenario_id": C4, "roster": [{"model": "local/solver"},
                                                                          {"model": "local/random"}], "trials": 2})
    assert est["batch"]["agent_turns"] == 2 * 21 * 2 and est["batch"]["usd"] == {"low": 0.0, "high": 0.0}


def test_a_scripted_series_alternates_sides_and_reads_like_a_world_run(srv):
    token = account(srv.core)
    out = _launch(srv, token, {"scenario_id": C4, "trials": 2,
                               "roster": [{"model": "local/solver"}, {"model": "local/random"}]})
    with srv.client(token) as c:
        bodies = [wait_terminal(c, r, timeout=120) for r in out["batch"]["run_ids"]]
        for k, body in enumerate(bodies):
            run, results = body["run"], body["results"]
            assert run["status"] == "finished" and run["effective"]["first_seat"] == k
            assert results["rubric"] == "arena-connect-four-1"
            solver = results["agents"][0]
            assert solver["status"] == ("won" if k == 0 else solver["status"])
            log = c.get(run["links"]["log"]).json()
            assert log["moves"][0]["seat"] == k
            board = Board()
            for m in log["moves"]:
                assert board.is_legal_move(m["column"] - 1)
                board = board.play_on_copy(m["column"] - 1)
            assert board.has_win() == (results["game"]["termination"] == "four_in_row")
            page = c.get(run["links"]["match"], headers={"accept": "text/html"})
            assert page.status_code == 200 and "id='moves'" in page.text and "optimal" in page.text
            assert c.get(run["links"]["replay"], params={"format": "json"}).json()["frames"][0][5] == [0] * 7
        series = c.get(f"/api/v1/batches/{out['batch']['batch_id']}").json()["batch"]
        assert series["status"] == "finished"


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def _model_token(srv, fake):
    # the server (and its accounts) outlives each fake provider, whose id() Python may hand out again
    email = f"arena-{secrets.token_hex(6)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1")
    token, _ = mint(srv.core, email, scopes=SCOPES)
    return token


def _model_game(srv, fake, model, fmt="json", transcript=False):
    token = _model_token(srv, fake)
    out = _launch(srv, token, {"scenario_id": C4, "env": {"turn_timeout_ms": 5000},
                               "roster": [{"model": model, "name": "m", "format": fmt}, {"model": "local/random"}]})
    with srv.client(token) as c:
        body = wait_terminal(c, out["run"]["run_id"], timeout=120)
        if transcript:
            body["transcript"] = c.get(f"/api/v1/runs/{out['run']['run_id']}/transcript").json()["turns"]
        return body


def test_a_model_seat_plays_legal_json_answers(srv, fake):
    fake.defaults["test/legal"] = {"text": '{"move": "4"}', "usage": (50, 5)}
    body = _model_game(srv, fake, "test/legal")
    assert body["run"]["status"] == "finished"
    seat = body["run"]["roster"][0]
    assert seat["usage"]["input_tokens"] > 0 and seat["usage"]["agent_turns"] >= 1
    assert body["results"]["agents"][0]["status"] in ("won", "lost", "drew", "forfeit")
    assert "Connect Four" in fake.bodies("test/legal")[0]["messages"][-1]["content"]


def test_illegal_answers_are_re_asked_then_forfeit(srv, fake):
    fake.defaults["test/illegal"] = {"text": '{"move": "9"}'}
    body = _model_game(srv, fake, "test/illegal", transcript=True)
    results = body["results"]
    assert results["game"]["termination"] == "forfeit" and results["agents"][0]["status"] == "forfeit"
    asked = fake.bodies("test/illegal")
    assert len(asked) == 3 and "refused" in asked[1]["messages"][-1]["content"]
    assert body["run"]["roster"][0]["turns"] == {"answered": 3, "invalid": 3, "timed_out": 0, "provider_errors": 0,
                                                 "retries": 0}
    mine = [t for t in body["transcript"] if t["seat"] == 0]
    assert [t["actions"] for t in mine] == [["9"]] * 3 and all(t["refused"] for t in mine)
    assert "forfeit" in mine[2]["refused"][0]


def test_a_tools_seat_answers_with_the_move_tool_and_its_turns_are_in_the_transcript(srv, fake):
    fake.defaults["test/tools"] = {"calls": [("move", {"move": "4"})], "usage": (40, 4)}
    body = _model_game(srv, fake, "test/tools", fmt="tools", transcript=True)
    assert body["run"]["status"] == "finished"
    sent = fake.bodies("test/tools")
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["move"]
    assert "`move` tool" in sent[0]["messages"][0]["content"]
    seat = body["run"]["roster"][0]
    mine = [t for t in body["transcript"] if t["seat"] == 0]
    assert seat["turns"]["answered"] == len(mine) == len(sent) and seat["usage"]["input_tokens"] == 40 * len(sent)
    # the reply in the world's encoding: the call as the model made it
    assert [c.name for c in Said.decode(mine[0]["reply"]).calls] == ["move"] and not Said.decode(mine[0]["reply"]).text
    assert mine[0]["actions"] == ["4"] and mine[0]["input_tokens"] == 40
    # column 4 until it is full; the refusals that follow stay in the transcript too
    assert seat["turns"]["invalid"] == sum(1 for t in mine if t["refused"])


def test_resign(srv, fake):
    fake.defaults["test/resign"] = {"text": "resign"}
    results = _model_game(srv, fake, "test/resign")["results"]
    assert results["game"]["termination"] == "resignation" and results["agents"][0]["status"] == "lost"


def test_a_provider_outage_fails_the_run_never_a_loss(srv, fake):
    fake.defaults["test/down"] = {"status": 500}
    body = _model_game(srv, fake, "test/down")
    assert body["run"]["status"] == "failed" and body["results"] is None
    assert "router" in body["run"]["error"]["message"]


def test_a_chess_game_is_graded_on_a_worker_and_its_page_serves_its_own_board(srv):
    token = account(srv.core)
    out = _launch(srv, token, {"scenario_id": "arena:chess", "env": {"seed": 7},
                               "roster": [{"model": "local/stockfish-20"}, {"model": "local/random"}]})
    with srv.client(token) as c:
        body = wait_terminal(c, out["run"]["run_id"], timeout=300)
        results = body["results"]
        assert body["run"]["status"] == "finished" and results["rubric"] == "arena-chess-2"
        assert results["game"]["oracle"]["engine"] == "stockfish" and results["game"]["oracle"]["nodes"] == 100_000
        assert results["agents"][0]["status"] == "won" and results["game"]["termination"] == "checkmate"
        moves = c.get(body["run"]["links"]["log"]).json()["moves"]
        assert len(moves) == results["game"]["plies"] and moves[-1]["eval_after_cp"] == 1000
        page = c.get(body["run"]["links"]["match"], params={"format": "html"}).text
        assert "/arena/assets/cm-chessboard/src/Chessboard.js" in page and "<svg id='graph'" in page
        for asset in ("cm-chessboard/src/Chessboard.js", "cm-chessboard/src/view/ChessboardView.js",
                      "cm-chessboard/assets/chessboard.css", "cm-chessboard/assets/pieces/standard.svg"):
            assert c.get(f"/arena/assets/{asset}").status_code == 200, asset
        frames = c.get(body["run"]["links"]["replay"], params={"format": "json"}).json()["frames"]
        assert frames[0].startswith("rnbqkbnr/pppppppp") and len(frames) == len(moves) + 1


def test_every_model_move_is_metered_in_tokens_and_usd_at_the_keys_own_price(srv, fake):
    email = f"arena-priced-{secrets.token_hex(6)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="openai-compatible", key="k-local", email=email, base_url=fake.url + "/v1",
                 usd_per_mtok_in=2.0, usd_per_mtok_out=10.0)
    token, _ = mint(srv.core, email, scopes=SCOPES)
    fake.defaults["test/priced"] = {"calls": [("move", {"move": "4"})], "usage": (300, 20)}
    out = _launch(srv, token, {"scenario_id": C4, "env": {"turn_timeout_ms": 5000},
                               "roster": [{"model": "test/priced", "provider": "openai-compatible", "name": "m"},
                                          {"model": "local/random"}]})
    run_id = out["run"]["run_id"]
    with srv.client(token) as c:
        body = wait_terminal(c, run_id, timeout=120)
        turns = c.get(f"/api/v1/runs/{run_id}/transcript").json()["turns"]
    mine = [t for t in turns if t["seat"] == 0]
    usage = body["run"]["roster"][0]["usage"]
    assert mine and all(t["input_tokens"] == 300 and t["output_tokens"] == 20 for t in mine)
    assert usage["agent_turns"] == len(mine) and usage["input_tokens"] == 300 * len(mine)
    assert usage["usd"] == pytest.approx(len(mine) * (300 * 2.0 + 20 * 10.0) / 1e6)
