"""The public match pages (report, replay, play-by-play) as a new reader meets them, at a 1280 px
window: a graded world run of scripted seats and a chess and a Connect Four game. Every page fits the
window (a wide table scrolls inside its own box), names its figures for people (no snake_case field
names, counts as integers, money with two decimals) and names each page one way."""
from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from orchestrator import accounts, console_auth
from orchestrator.runs import service as runs_service
from tests.console.conftest import sign_in_by_link
from tests.console.test_console import _shot, at_widths, fits_window
from tests.console.test_console_replay import _ended
from tests.waiting import until

# a metric's field name shown to a person: lower-case words joined by underscores (fitness_index, legal_rate)
SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
FLOAT_COUNT = re.compile(r"\b\d+\.0 (?:blunders|mistakes|inaccuracies|turns|trades|raids)\b")


def _principal(page, live):
    s = console_auth.session(live.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    return console_auth.principal(live.core, s)


def _signed_in(browser, live, email: str):
    accounts.create_account(live.core, email, plan="lab", verified=True)
    page = browser.new_context().new_page()
    sign_in_by_link(page, live, email)
    p = _principal(page, live)
    page.context.close()
    return p


@pytest.fixture(scope="module")
def graded(browser, playing):
    """A finished world run of two scripted seats, every decision graded."""
    p = _signed_in(browser, playing, "report-reader@example.org")
    run_id = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 20, "grading": "all", "name": "graded pair",
        "env": {"seed": 11, "spawn_seed": 12},
        "roster": [{"model": "local/greedy-harvester"}, {"model": "local/random"}]})["run"]["run_id"]
    assert _ended(playing, p, run_id)["run"]["status"] == "finished"
    until(lambda: runs_service.get_run(playing.core, p, run_id)["run"]["grading"]["status"] == "done",
          timeout=180, every=0.5, what="the run's grading")
    return runs_service.get_run(playing.core, p, run_id)


@pytest.fixture(scope="module")
def games(browser, playing):
    """A finished chess game and a finished Connect Four game: their runs."""
    p = _signed_in(browser, playing, "games-reader@example.org")
    out = {}
    for scenario, roster in (("arena:chess", [{"model": "local/stockfish-1"}, {"model": "local/random"}]),
                             ("arena:connect-four", [{"model": "local/solver-3"}, {"model": "local/random"}])):
        run_id = runs_service.arena_launch(playing.core, p, {"scenario_id": scenario, "roster": roster})["run"]["run_id"]
        out[scenario] = _ended(playing, p, run_id)
        assert out[scenario]["run"]["status"] == "finished"
    return out


def _readable(page) -> str:
    """The page's visible text, checked for what a person should not meet; returned for more checks."""
    text = page.locator("body").inner_text()
    assert not SNAKE.findall(text), SNAKE.findall(text)
    assert not FLOAT_COUNT.findall(text), FLOAT_COUNT.findall(text)
    return text


def test_the_world_report_names_its_figures_and_fits_the_window(page, playing, graded):
    run = graded["run"]
    page.goto(playing.url + run["links"]["match"].split("?")[0] + "?format=html")
    fits_window(page)
    table = page.get_by_test_id("scorecard")
    heads = table.locator("th").all_inner_texts()
    assert heads[:5] == ["Rank", "Seat", "Name", "Model", "Fitness index (0-100)"], heads
    assert "Crafter score (0-100)" in heads and "Epilogue" in heads
    text = _readable(page)
    # what crafter means, and what the letter grades, said where the table is
    assert "Crafter score:" in text and "grade:" in text.lower()
    # the epilogue is a sentence on a line or two, not a word per line
    epilogue = table.locator("td.epilogue").first.bounding_box()
    assert epilogue["width"] >= 200, epilogue
    # the decisions block: counts as integers, accuracy with its unit
    decisions = page.get_by_test_id("decisions")
    expect(decisions.locator("th").nth(3)).to_have_text("Accuracy (%)")
    _shot(page, "report")
    # one name per page in every link that leads to it
    expect(page.locator("nav a")).to_have_text(["report", "replay", "play-by-play"])


def test_the_world_play_by_play_and_replay_fit_the_window(page, playing, graded):
    run = graded["run"]
    for link in ("replay", "log"):
        page.goto(playing.url + run["links"][link])
        fits_window(page)


def test_arena_pages_name_their_figures_and_fit_the_window(page, playing, games):
    for scenario, body in games.items():
        run = body["run"]
        page.goto(playing.url + run["links"]["match"].split("?")[0] + "?format=html")
        fits_window(page)
        text = _readable(page)
        # how the game ended in words (four in a row, not four_in_row); the seat's figures by their display names
        assert re.search(r"Result \S+, [^,_]+, after \d+ plies", text), text[:400]
        assert "Legal answers" in text and "Blunders 0.0" not in text
        if scenario == "arena:chess":
            assert "Average centipawn loss" in text
            _shot(page, "arena-chess")
        for link in ("replay", "log"):
            page.goto(playing.url + run["links"][link] + ("?format=html" if link == "log" else ""))
            fits_window(page)
            _readable(page)
        expect(page.locator("nav a")).to_have_text(["report", "replay", "play-by-play"])


def test_a_won_game_graded_f_says_why_on_every_page(playing, games):
    """The report JSON of a won game carries the result beside the grade and the note that the letter
    grades the moves (docs/RUBRIC.md, Arena seats)."""
    for body in games.values():
        rep = httpx.get(playing.url + body["run"]["links"]["match"].split("?")[0]).json()
        for a in rep["results"]["agents"]:
            assert a["fitness_measure"] == "accuracy"
            assert a["grade_note"].startswith(a["status"].capitalize() + ";"), a["grade_note"]
            assert "not the result" in a["grade_note"]


OWNERS = {"graded": "report-reader@example.org", "games": "games-reader@example.org"}


def _every_column(page, playing, runs: dict) -> None:
    """The public report and the run page's results table of each run: every column in sight at both
    widths, and the page's title naming the scenario once."""
    for name, (run, owner) in runs.items():
        page.goto(playing.url + run["links"]["match"].split("?")[0] + "?format=html")
        at_widths(page, f"report-{name}")
        for title in (page.title(), page.locator("h1").first.inner_text()):
            assert title.count(run["scenario_id"]) == 1, title
        sign_in_by_link(page, playing, owner)
        page.goto(f"{playing.url}/console/runs/{run['run_id']}")
        expect(page.get_by_test_id("results")).to_be_visible()
        at_widths(page, f"results-{name}")


def test_a_world_report_and_results_show_every_column_at_1280_and_1440(page, playing, graded):
    _every_column(page, playing, {"world": (graded["run"], OWNERS["graded"])})


def test_game_reports_and_results_show_every_column_at_1280_and_1440(page, playing, games):
    _every_column(page, playing, {scenario.split(":")[1]: (body["run"], OWNERS["games"])
                                  for scenario, body in games.items()})


def test_a_chess_move_that_was_the_best_says_so_once(page, playing, games):
    run = games["arena:chess"]["run"]
    for link in (run["links"]["match"].split("?")[0] + "?format=html", run["links"]["log"] + "?format=html"):
        page.goto(playing.url + link)
        text = page.locator("body").inner_text()
        # the report lists the moves in a line each, the play-by-play in a table's cells
        assert not re.search(r"(\S+)\s+best\s+\(accuracy \d+, best \1\b", text), link
        assert re.search(r"\S+\s+best\s+\(accuracy \d+[;)]", text), link
