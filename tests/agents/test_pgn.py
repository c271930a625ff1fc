"""GET /api/matches/:id/pgn: a played, graded chess game as annotated PGN on the public pages (no
token), read back by python-chess; other games and world matches answer the 404 envelope. The chess
game is fool's mate between two agent seats: four plies, so grading takes a second."""
import io
import threading

import chess.pgn
import httpx
import pytest

from orchestrator import auth, datadir
from orchestrator.runs import service
from tests.agents.conftest import play_rest
from tests.arena.test_pgn import check_round_trip
from tests.runs.conftest import account, local_body, wait_terminal

FOOLS_MATE = (["f2f3", "g2g4"], ["e7e5", "d8h4"])


def _launch(srv, token, scenario, roster):
    core = srv.app.state.core
    return service.arena_launch(core, auth.authenticate(core, token), {"scenario_id": scenario, "roster": roster})


def _arena(srv, token, scenario, roster):
    out = _launch(srv, token, scenario, roster)
    with srv.client(token) as c:
        return wait_terminal(c, out["run"]["run_id"], timeout=180)


def _fools_mate(srv, token) -> dict:
    out = _launch(srv, token, "arena:chess", [{"provider": "agent", "model": "white v1", "name": "Ann"},
                                              {"provider": "agent", "model": "black v1", "name": "Bo"}])
    run_id = out["run"]["run_id"]

    def side(seat):
        moves = list(FOOLS_MATE[seat])
        with srv.client(token) as c:
            play_rest(c, run_id, seat, lambda turn: [{"move": moves.pop(0)}], timeout_s=120)
    players = [threading.Thread(target=side, args=(s,)) for s in (0, 1)]
    for t in players:
        t.start()
    for t in players:
        t.join()
    with srv.client(token) as c:
        return wait_terminal(c, run_id, timeout=120)


@pytest.fixture(scope="module")
def fools_mate(srv) -> dict:
    # where `studio serve` would have recorded itself (the in-process server does not)
    datadir.record_serving(srv.data_dir, srv.url)
    return _fools_mate(srv, account(srv.core))


def test_a_chess_game_downloads_as_pgn_that_round_trips(srv, fools_mate):
    run, results = fools_mate["run"], fools_mate["results"]
    match = run["match_id"]
    r = httpx.get(f"{srv.url}/api/matches/{match}/pgn")  # public: no token
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-chess-pgn")
    assert r.headers["content-disposition"] == f'attachment; filename="{match}.pgn"'
    moves = httpx.get(srv.url + run["links"]["log"]).json()["moves"]
    assert [m["uci"] for m in moves] == ["f2f3", "e7e5", "g2g4", "d8h4"] and results["game"]["result"] == "0-1"
    game = check_round_trip(r.text, moves)
    assert game.end().board().is_checkmate() and game.next().next().next().nags == {chess.pgn.NAG_BLUNDER}
    h = game.headers
    assert (h["White"], h["Black"], h["Round"]) == ("Ann", "Bo", "-")
    assert h["Result"] == results["game"]["result"] and h["Site"] == f"{srv.url}/api/matches/{match}/report"
    assert h["Date"].count(".") == 2 and h["Event"] == f"Scenario Studio: {run['name']}"
    assert h["Annotator"].startswith("stockfish ") and h["Termination"] == results["game"]["termination"]
    assert chess.pgn.read_game(io.StringIO(r.text)).end().board().fen() == \
        chess.pgn.read_game(io.StringIO(results["game"]["pgn"])).end().board().fen()
    page = httpx.get(srv.url + run["links"]["match"], headers={"accept": "text/html"}).text
    assert f"href='/api/matches/{match}/pgn' download" in page


def test_other_games_and_unknown_matches_have_no_pgn(srv):
    token = account(srv.core)
    c4 = _arena(srv, token, "arena:connect-four", [{"model": "local/solver"}, {"model": "local/random"}])
    with srv.client(token) as c:
        world = c.post("/api/v1/runs", json=local_body(season_ticks=10)).json()["run"]["run_id"]
        world = wait_terminal(c, world)
    for match, words in ((c4["run"]["match_id"], "Connect Four"), (world["run"]["match_id"], "world"),
                         ("0" * 32, "no match")):
        r = httpx.get(f"{srv.url}/api/matches/{match}/pgn")
        assert r.status_code == 404 and r.json()["error"] == "not_found" and words in r.json()["message"], r.text
    page = httpx.get(srv.url + c4["run"]["links"]["match"], headers={"accept": "text/html"}).text
    assert "/pgn" not in page


def test_the_pgn_site_is_the_configured_address_not_the_host_header(srv, fools_mate):
    match = fools_mate["run"]["match_id"]

    def site(**headers) -> str:
        r = httpx.get(f"{srv.url}/api/matches/{match}/pgn", headers=headers)
        assert r.status_code == 200, r.text
        return chess.pgn.read_game(io.StringIO(r.text)).headers["Site"]
    assert site(host="evil.test") == site(host="evil.test:8443") == f"{srv.url}/api/matches/{match}/report"
    datadir.record_serving(srv.data_dir, "http://studio.internal:9000")  # a later `studio serve` elsewhere
    try:
        assert site(host="evil.test") == f"http://studio.internal:9000/api/matches/{match}/report"
    finally:
        datadir.record_serving(srv.data_dir, srv.url)
