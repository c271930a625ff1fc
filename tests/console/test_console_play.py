"""A person plays an agent seat in the browser (CONTRACT.md section 13): Connect Four against the perfect
solver to the end by clicking columns, a short world season by clicking on its map, and what another
account and the public pages see. A real server playing runs (Ray), Debian's Chromium."""
from __future__ import annotations

import asyncio
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from playwright.sync_api import Page, expect

from orchestrator import accounts, console_auth
from orchestrator.runs import service as runs_service
from orchestrator.runs.pages.transcript import get_transcript, observations
from tests.console.conftest import Live, open_run_builder, sign_in_by_link
from tests.console.test_console import _shot

TURN = 90_000  # ms: a turn of the person's, then the next one opening (the first: the run starting, on a loaded machine)


def _principal(page: Page, live: Live):
    s = console_auth.session(live.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    return console_auth.principal(live.core, s)


def _run_id(page: Page) -> str:
    return page.url.rstrip("/").rsplit("/", 1)[1]


def _wait_for_turn(page: Page) -> str:
    """'open' when the seat's turn is open on the page, 'ended' when the run's turns are over."""
    body = page.locator("body")
    # the page reloads as the run moves on: between two documents there is no body
    page.wait_for_function("() => document.body && ['open', 'ended'].includes(document.body.dataset.turn)",
                           timeout=TURN)
    return body.get_attribute("data-turn")


def _public_pages(live: Live, run: dict) -> str:
    """Every public page of the run's match, as an anonymous visitor reads them."""
    mid = run["match_id"]
    with httpx.Client(base_url=live.url, timeout=30) as c:
        paths = [f"/api/matches/{mid}/report", f"/api/matches/{mid}/report?format=html", f"/api/matches/{mid}/log",
                 f"/api/matches/{mid}/log?format=json", f"/api/matches/{mid}/replay",
                 f"/api/matches/{mid}/replay?format=json"]
        pages = [c.get(p) for p in paths]
    assert all(r.status_code == 200 for r in pages), [(p, r.status_code) for p, r in zip(paths, pages)]
    return "\n".join(r.text for r in pages)


def test_the_pickers_offer_an_agent_seat_checked_by_the_service(page, playing):
    email = "picker@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    open_run_builder(page, playing, email, "10")
    expect(page.get_by_test_id("agent-hint")).to_contain_text("agent")
    assert "agent" in page.locator("#providers option").evaluate_all("os => os.map(o => o.value)")
    page.get_by_label("Seat 0 provider").fill("agent")
    page.get_by_label("Seat 0 model").fill("x" * 81)
    page.get_by_label("Seat 1 model").fill("local/honest-trader")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("1 to 80 characters")
    page.get_by_label("Seat 0 model").fill("me")
    page.get_by_label("Seat 0 temperature").fill("0.5")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("temperature cannot be set on an agent seat")
    page.get_by_label("Seat 0 temperature").fill("")
    page.get_by_label("Turn timeout (ms)").fill("100")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("turn_timeout_ms")
    page.get_by_label("Turn timeout (ms)").fill("60000")
    # the server's first estimate that passes admission builds the world once: seconds on a busy machine
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns", timeout=30_000)


def test_a_person_plays_connect_four_against_the_solver_to_the_end(page, playing):
    email = "human@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    page.goto(playing.url + "/console/arena")
    page.get_by_label("Connect Four").check()
    page.get_by_label("Seat 0 provider").fill("agent")
    page.get_by_label("Seat 0 model").fill("human baseline")
    page.get_by_label("Seat 1 model").fill("local/solver")
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns", timeout=30_000)
    with page.expect_navigation():
        page.get_by_role("button", name="Launch game").click()
    run_id = _run_id(page)
    page.get_by_test_id("play-link").click()
    expect(page).to_have_title("Play seat 0 · human baseline · Scenario Studio")
    plies = 0
    while _wait_for_turn(page) == "open":
        expect(page.get_by_test_id("turn-status")).to_have_text("your turn")
        expect(page.get_by_test_id("play-notice")).not_to_contain_text("Waiting")  # nothing stale beside "your turn"
        expect(page.get_by_test_id("observation")).to_contain_text("Playable columns")
        assert page.get_by_test_id("deadline").inner_text().endswith(" s")
        expect(page.locator("#board thead button").first).to_have_text("1 ↓")  # columns numbered as the moves are
        if plies:  # the solver's last disc is marked
            expect(page.get_by_test_id("last-move")).to_have_count(1)
        playable = page.locator("#board thead button:enabled").evaluate_all("bs => bs.map(b => +b.dataset.column)")
        # the disc goes where the person clicks: the column's top cell, as a person would
        page.locator(f'#board td.c4[data-column="{playable[0]}"]').first.click()
        expect(page.get_by_test_id("play-sent")).to_contain_text("Sent 1 action")
        plies += 1
        if plies == 2:
            _shot(page, "play-connect-four")
        assert plies <= 21, "a Connect Four game has at most 21 moves a side"
    expect(page.get_by_test_id("turn-status")).to_have_text("ended")
    expect(page.get_by_test_id("game-result")).to_contain_text("0-1", timeout=60_000)  # the solver never loses
    expect(page.get_by_test_id("my-result")).to_contain_text("you lost")
    expect(page.get_by_test_id("grade-note")).to_contain_text("not the result")
    expect(page.get_by_test_id("turn-tick")).to_have_text(f"game over after {2 * plies} plies")
    # the board stays, drawn as the game ended, with the winning four marked; nothing reads as waiting
    expect(page.locator("#board td.c4 .disc.p1, #board td.c4 .disc.p2")).to_have_count(2 * plies)
    assert page.get_by_test_id("winning-disc").count() >= 4
    expect(page.locator("#resign")).to_be_hidden()
    expect(page.get_by_test_id("observation")).to_have_text("The game is over: the board shows the position it ended on.")
    assert "waiting" not in page.locator("main").inner_text().lower()
    _shot(page, "play-connect-four-result")
    got = runs_service.get_run(playing.core, _principal(page, playing), run_id)
    assert got["run"]["status"] == "finished" and got["results"]["game"]["plies"] == 2 * plies
    seat = got["run"]["roster"][0]
    assert seat["provider"] == "agent" and seat["model"] == "human baseline"
    assert seat["turns"]["answered"] == plies and seat["usage"]["usd"] == 0
    page.goto(f"{playing.url}/console/runs/{run_id}")
    expect(page.get_by_test_id("result-row")).to_have_count(2)
    expect(page.get_by_test_id("result-row").filter(has_text="human baseline")).to_contain_text("lost")


def test_a_person_moves_on_the_chess_board_then_resigns(page, playing):
    email = "chess-human@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    page.goto(playing.url + "/console/arena")
    page.get_by_label("Chess").check()
    page.get_by_label("Seat 0 provider").fill("agent")
    page.get_by_label("Seat 0 model").fill("me")
    page.get_by_label("Seat 1 model").fill("local/random")
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns", timeout=30_000)
    with page.expect_navigation():
        page.get_by_role("button", name="Launch game").click()
    run_id = _run_id(page)
    # a game counts plies and moves, not a world's ticks, and has no spawn seed
    expect(page.get_by_test_id("run-tick")).to_have_text(re.compile(r"^\d+ played \(move \d+\)$"), timeout=30_000)
    text = page.locator("main").inner_text()
    assert "Tick" not in text and "spawn seed" not in text, text
    page.get_by_test_id("play-link").click()
    for src, dst in (("e2", "e4"), ("g1", "f3")):  # a click on the piece, then on its square
        assert _wait_for_turn(page) == "open"
        expect(page.get_by_test_id("observation")).to_contain_text("Legal moves")
        ply = page.get_by_test_id("turn-tick").inner_text()
        page.locator(f'#board [data-square="{src}"]').first.click()
        page.locator(f'#board [data-square="{dst}"]').first.click()
        expect(page.get_by_test_id("play-sent")).to_contain_text(f"Sent 1 action for ply {ply}.")
    assert _wait_for_turn(page) == "open"
    # the board has its coordinates, and random's last move is marked on it
    last = page.locator("#board").get_attribute("data-last-move")
    assert last and page.locator("#board .square.last-move").count() == 2
    assert page.locator(f'#board .square.last-move[data-square="{last[2:4]}"]').count() == 1
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.get_by_test_id("game-result")).to_contain_text("0-1", timeout=60_000)
    expect(page.get_by_test_id("game-result")).to_contain_text("resign")
    turns = get_transcript(playing.core, _principal(page, playing), run_id, seat="0", cursor=None, limit="10")["turns"]
    assert [json.loads(t["reply"])["actions"] for t in turns] == [
        [{"move": "e2e4"}], [{"move": "g1f3"}], [{"action": "resign"}]]


def test_a_person_plays_a_short_world_season_by_clicking(page, playing, browser):
    email = "baseline@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    open_run_builder(page, playing, email, "10")
    page.get_by_label("Seat 0 provider").fill("agent")
    page.get_by_label("Seat 0 model").fill("me")
    page.get_by_label("Seat 1 model").fill("local/honest-trader")
    page.get_by_label("Turn timeout (ms)").fill("60000")
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns", timeout=30_000)
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    run_id = _run_id(page)
    # while the run plays its decision grading has not begun: the page says when it will
    expect(page.get_by_test_id("run-grading")).to_have_text("starts when the match ends")
    page.get_by_test_id("play-link").click()
    p = _principal(page, playing)

    # three turns by clicking: a step toward a tile next to the seat, then "Gather here" where the seat's
    # tile holds goods (else the button is off, and "Wait" is clicked); the rest passed
    ticks, clicked, second = [], [], []
    while _wait_for_turn(page) == "open":
        expect(page.get_by_test_id("turn-status")).to_have_text("your turn")
        expect(page.get_by_test_id("play-notice")).not_to_contain_text("Waiting")  # nothing stale beside "your turn"
        expect(page.get_by_test_id("observation")).not_to_be_empty()
        tick = int(page.get_by_test_id("turn-tick").inner_text().split()[0])
        if len(ticks) < 3:
            you = page.locator("#world-map .cell.you")
            expect(you).to_contain_text("you")
            x, y = int(you.get_attribute("data-x")), int(you.get_attribute("data-y"))
            # the first tile beside the seat that is on the map: north, east, south or west of it
            for direction, (dx, dy) in (("north", (0, -1)), ("east", (1, 0)), ("south", (0, 1)), ("west", (-1, 0))):
                tile = page.locator(f'#world-map .cell[data-x="{x + dx}"][data-y="{y + dy}"]')
                if tile.is_enabled():
                    break
            tile.click()
            state = json.loads(page.get_by_test_id("state").text_content())
            here = [r for r in state["resources"] if (r["x"], r["y"]) == (x, y) and r["amount"] >= 1]
            gather = page.get_by_role("button", name="Gather here", exact=True)
            assert gather.is_enabled() == bool(here), (here, gather.get_attribute("title"))
            (gather if here else page.get_by_role("button", name="Wait", exact=True)).click()
            expect(page.get_by_label("Action 1", exact=True)).to_have_value("move")
            expect(page.get_by_label("Action 1 direction")).to_have_value(direction)
            expect(page.get_by_label("Action 2", exact=True)).to_have_value("gather" if here else "wait")
            clicked.append(direction)
            second.append("gather" if here else "wait")
            if len(ticks) == 0:
                expect(page.get_by_test_id("terrain-key")).to_contain_text("forest: wood")
                expect(page.get_by_test_id("amount-key")).to_contain_text("a number on a tile: the goods left there")
                expect(page.get_by_test_id("seat-state")).to_contain_text("Health")
                # "you" is ringed on every terrain, water included
                assert you.evaluate("e => getComputedStyle(e).outlineStyle") != "none"
                assert float(you.evaluate("e => getComputedStyle(e).outlineWidth")[:-2]) >= 2
                # the status line is in the page's flow: scrolled to the map, it covers neither the map nor "At"
                covered = page.evaluate("""() => {
                  const map = document.querySelector('#world-map');
                  window.scrollTo(0, map.getBoundingClientRect().top + window.scrollY);
                  const bar = document.querySelector('.play-bar').getBoundingClientRect();
                  const at = [...document.querySelectorAll('#you dt')].find((d) => d.textContent === 'At').nextElementSibling;
                  const over = (r) => bar.bottom > r.top && bar.top < r.bottom && bar.right > r.left && bar.left < r.right;
                  return [over(map.getBoundingClientRect()), over(at.getBoundingClientRect())];
                }""")
                assert covered == [False, False], covered
                page.evaluate("window.scrollTo(0, 0)")
                _shot(page, "play-world")
            else:  # last tick's outcome, as a banner
                expect(page.get_by_test_id("last-outcome")).to_contain_text(f"Tick {tick - 1}: move")
        page.get_by_role("button", name="Submit actions").click()
        expect(page.get_by_test_id("play-sent")).to_have_text(f"Sent {2 if len(ticks) < 3 else 0} actions for tick {tick}.")
        ticks.append(tick)
    assert len(ticks) == 10 and ticks == sorted(ticks)
    expect(page.get_by_test_id("my-result")).to_contain_text("seat 0 · me", timeout=60_000)
    expect(page.get_by_test_id("turn-tick")).to_have_text("season over: 10 of 10 ticks played")
    got = runs_service.get_run(playing.core, p, run_id)
    assert got["run"]["status"] == "finished" and got["run"]["roster"][0]["turns"]["answered"] == 10

    # the owner's transcript has what the person sent, marked as sent from the console
    turns = get_transcript(playing.core, p, run_id, seat="0", cursor=None, limit="100")["turns"]
    assert len(turns) == 10 and {t["submitted_by"] for t in turns} == {f"console:{p.handle}"}
    sent = [json.loads(t["reply"]) for t in turns[:3]]
    assert sent == [{"tick": t, "actions": [{"action": "move", "direction": d}, {"action": g}]}
                    for t, d, g in zip(ticks, clicked, second)]
    page.goto(f"{playing.url}/console/runs/{run_id}/transcript?seat=0")
    expect(page.get_by_test_id("transcript-turn").first).to_contain_text(clicked[0])
    # a turn opens to what the seat was shown, rebuilt from the match's log
    shown = page.get_by_test_id("turn-observation").first
    shown.locator("summary").click()
    expect(shown).to_contain_text(f"tick {ticks[0]} of 10")
    assert observations(playing.core, p, run_id, turns[:1])[(ticks[0], 0)].startswith(f"tick {ticks[0]} of 10")

    # the public pages never show what was submitted, nor who sent it
    public = _public_pages(playing, got["run"])
    for t in turns:
        assert t["reply"] not in public
    assert "console:" not in public and p.handle not in public

    # another account cannot open the seat, ask for its turn or answer it
    other = browser.new_context()
    try:
        stranger = other.new_page()
        stranger.set_default_timeout(10_000)
        accounts.create_account(playing.core, "stranger@example.org", plan="lab", verified=True)
        sign_in_by_link(stranger, playing, "stranger@example.org")
        r = stranger.goto(f"{playing.url}/console/runs/{run_id}/seats/0")
        assert r.status == 404
        expect(stranger.get_by_role("heading")).to_contain_text("Not found")
        assert "me" not in stranger.locator("main").inner_text().split()
        r = stranger.request.get(f"{playing.url}/console/runs/{run_id}/seats/0/turn")
        assert r.status == 404 and r.json()["error"] == "unknown_run"
    finally:
        other.close()


def test_only_an_agent_seat_opens_and_a_submission_needs_the_csrf_token(page, playing):
    email = "csrf@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    run_id = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 10, "env": {"turn_timeout_ms": 5000},
        "roster": [{"provider": "agent", "model": "me"}, {"model": "local/honest-trader"}]})["run"]["run_id"]
    try:
        r = page.goto(f"{playing.url}/console/runs/{run_id}/seats/1")  # the scripted seat
        assert r.status == 400
        expect(page.get_by_test_id("error")).to_contain_text("is not an agent seat; its agent seats: 0")
        page.goto(f"{playing.url}/console/runs/{run_id}/seats/0")
        _wait_for_turn(page)
        tick = int(page.get_by_test_id("turn-tick").inner_text().split()[0])
        url = f"{playing.url}/console/runs/{run_id}/seats/0/actions"
        body = {"tick": tick, "actions": [{"action": "wait"}]}
        r = page.request.post(url, data=body)  # no token: refused before the turn is touched
        assert r.status == 403 and r.json()["error"] == "csrf_failed"
        csrf = console_auth.session(playing.core, {c["name"]: c["value"] for c in page.context.cookies()}[
            "studio_console"]).csrf
        r = page.request.post(url, data={"tick": tick, "actions": [{"action": "wait"}] * 3},
                              headers={"x-csrf-token": csrf})
        assert r.status == 400 and r.json()["error"] == "bad_actions"
        r = page.request.post(url, data={"tick": tick + 5, "actions": []}, headers={"x-csrf-token": csrf})
        assert r.status == 409 and r.json()["error"] == "turn_closed"
        r = page.request.get(f"{playing.url}/console/runs/{run_id}/seats/0/turn?wait_ms=30001")
        assert r.status == 400 and r.json()["error"] == "bad_request"
    finally:
        runs_service.cancel(playing.core, p, run_id)


def test_waiting_pages_hold_no_server_thread(page, playing):
    """More long-polls than the server's thread pool (40) wait at once, and a route served from that
    pool still answers at once: a page waiting for its turn holds a coroutine, not a thread."""
    email = "waiters@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    # seat 1's agent never comes, so tick 0 waits for it (up to the absence limit) after seat 0 answers
    run_id = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 10, "env": {"turn_timeout_ms": 5000},
        "roster": [{"provider": "agent", "model": "a"}, {"provider": "agent", "model": "b"},
                   {"model": "local/honest-trader"}]})["run"]["run_id"]
    try:
        page.goto(f"{playing.url}/console/runs/{run_id}/seats/0")
        assert _wait_for_turn(page) == "open"
        page.get_by_role("button", name="Submit actions").click()
        expect(page.get_by_test_id("play-sent")).to_contain_text("Sent 0 actions")
        cookie = {c["name"]: c["value"] for c in page.context.cookies()}

        async def crowd():
            limits = httpx.Limits(max_connections=200)
            async with httpx.AsyncClient(base_url=playing.url, cookies=cookie, timeout=30, limits=limits) as c:
                polls = [asyncio.create_task(c.get(f"/console/runs/{run_id}/seats/0/turn?wait_ms=4000"))
                         for _ in range(48)]
                await asyncio.sleep(1.0)
                t0 = time.monotonic()
                sync_route = await c.get("/api/matches/no-such-match/report")  # a def route: the thread pool's
                took = time.monotonic() - t0
                return sync_route, took, await asyncio.gather(*polls)

        with ThreadPoolExecutor(1) as pool:  # Playwright's own loop runs on this thread
            sync_route, took, answers = pool.submit(asyncio.run, crowd()).result()
        assert sync_route.status_code == 404 and took < 2.0, took
        assert all(r.status_code == 200 and r.json()["status"] == "waiting" for r in answers)
    finally:
        runs_service.cancel(playing.core, p, run_id)
