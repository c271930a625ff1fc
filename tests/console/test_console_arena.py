"""The arena game picker and a model seat's transcript, in the browser against a playing server."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from orchestrator import accounts, console_auth
from orchestrator.seats import keys
from orchestrator.errors import DomainError
from orchestrator.runs import service as runs_service
from tests.console.conftest import open_run_builder, sign_in_by_link
from tests.console.test_console import _shot

ROOT = Path(__file__).resolve().parents[2]


def test_pick_connect_four_launch_and_see_the_graded_board(page, playing):
    email = "arena@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    page.goto(playing.url + "/console")
    page.get_by_role("link", name="Arena").click()
    page.get_by_label("Connect Four").check()
    page.get_by_label("Seat 1 model").fill("local/random")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("exactly 2 seats")
    page.get_by_label("Seat 0 model").fill("local/stockfish-3")  # a chess seat
    expect(page.get_by_test_id("estimate-error")).to_contain_text("not a Connect Four seat")
    page.get_by_label("Seat 0 model").fill("local/solver")
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns")
    expect(page.get_by_test_id("estimate")).to_contain_text("local/solver")
    expect(page.get_by_test_id("estimate")).to_contain_text("from the mean accuracy")  # a game's score
    expect(page.get_by_label("Trials")).to_have_attribute("placeholder", "1")
    _shot(page, "arena")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch game").click()
    expect(page.get_by_test_id("run-status")).to_have_text("finished", timeout=60_000)
    # the solver moves first in a single game and never loses
    expect(page.get_by_test_id("game-result")).to_contain_text("1-0")
    expect(page.get_by_test_id("game-result")).to_contain_text("seat 0 · solver won with four in a row")
    expect(page.get_by_test_id("result-row")).to_have_count(2)
    # the result first; the figure under its own name, and what its letter grades said beside it
    results = page.get_by_test_id("results")
    expect(results.locator("th").nth(3)).to_have_text("Result")
    expect(results.locator("th").nth(4)).to_have_text("Accuracy")
    assert "Fitness" not in results.inner_text() and "_" not in results.locator("thead").inner_text()
    expect(page.get_by_test_id("result-status").first).to_have_text("won (first)")
    expect(page.get_by_test_id("result-row").first).to_contain_text("100.0%")
    expect(page.get_by_test_id("grade-note")).to_contain_text("Accuracy grades each seat's moves, not the result")
    href = page.get_by_test_id("match-link").first.get_attribute("href")
    page.goto(playing.url + href)
    moves = page.locator("#moves li")
    assert moves.count() >= 7
    expect(moves.first).to_contain_text("optimal")
    expect(page.locator("#board")).to_be_visible()
    expect(page.locator("li").filter(has_text="seat 0 · ")).to_have_count(1)  # as the console names it
    expect(page.locator("li").filter(has_text="seat 1 · ")).to_contain_text("lost; accuracy")
    expect(page.locator("li").filter(has_text="seat 1 · ")).to_contain_text("not the result")
    _shot(page, "arena-match")


def test_arena_ids_are_refused_outside_the_console_and_a_bad_roster_is_shown(page, playing):
    email = "arena-rest@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    s = console_auth.session(playing.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    p = console_auth.principal(playing.core, s)
    body = {"scenario_id": "arena:connect-four", "roster": [{"model": "local/solver"}, {"model": "local/random"}]}
    with pytest.raises(DomainError) as refused:
        runs_service.estimate(playing.core, p, body)
    assert refused.value.code == "bad_scenario" and "/console/arena" in refused.value.message
    # a roster the game does not take is refused on launch with the service's message, form kept
    page.goto(playing.url + "/console/arena")
    page.get_by_label("Seat 0 model").fill("local/solver")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch game").click()
    expect(page.get_by_test_id("error")).to_contain_text("exactly 2 seats")
    expect(page.get_by_label("Seat 0 model")).to_have_value("local/solver")


@pytest.fixture
def provider():
    """The fake provider in a process of its own (as the seat benchmarks run it), answering every turn
    with gather then move north; its port is the first line it prints."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.seats.fake_provider"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}/v1"
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def test_a_model_seats_transcript_is_readable_from_the_run_page(page, playing, provider):
    email = "transcript@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    keys.set_key(playing.core, provider="openai-compatible", key="k-local", email=email, base_url=provider)
    open_run_builder(page, playing, email, "10")
    page.get_by_label("Seat 0 model").fill("qwen2.5-7b")
    page.get_by_label("Seat 0 provider").fill("openai-compatible")
    page.get_by_label("Seat 1 model").fill("local/honest-trader")
    expect(page.get_by_test_id("estimate")).to_contain_text("qwen2.5-7b")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    expect(page.get_by_test_id("run-status")).to_have_text("finished", timeout=60_000)
    links = page.get_by_test_id("transcript-link")
    expect(links).to_have_count(1)  # the scripted seat has no transcript
    links.click()
    turns = page.get_by_test_id("transcript-turn")
    expect(turns).to_have_count(10)
    expect(turns.first).to_contain_text("gather")
    expect(turns.first).to_contain_text("north")
    expect(turns.first).to_contain_text("100 / 20")  # the provider's reported tokens
    _shot(page, "transcript")
