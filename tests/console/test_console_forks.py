"""Forks in the console (CONTRACT.md section 16), in headless Chromium against a playing server: the
replay page of an ended world run offers "Fork from this tick", which opens the run builder with the
fork filled in; a seat handed to another player there launches the fork."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from orchestrator import accounts
from orchestrator.runs import service as runs_service
from tests.console.conftest import sign_in_by_link
from tests.console.test_console_replay import _ended, _errors, _principal


def test_fork_from_this_tick_opens_the_builder_and_launches_the_fork(browser, playing):
    email = "forker@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    page = browser.new_context().new_page()
    page.set_default_timeout(20_000)
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    original = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 30, "env": {"seed": 3, "spawn_seed": 4},
        "roster": [{"model": "local/greedy-harvester"}, {"model": "local/honest-trader"}]})["run"]["run_id"]
    run = _ended(playing, p, original)["run"]
    errors = _errors(page)
    page.goto(playing.url + run["links"]["replay"])
    link = page.get_by_role("link", name="Fork from this tick")
    expect(link).to_be_visible()
    page.get_by_label("tick", exact=True).fill("9")  # the state at the end of tick 9: the fork plays from 10
    expect(link).to_have_attribute("href", re.compile(r"tick=10$"))
    link.click()
    page.wait_for_url(re.compile(rf"/console/runs/{run['run_id']}/fork\?tick=10$"))
    expect(page.get_by_test_id("fork-tick")).to_have_value("10")
    page.get_by_label("Seat 0 new model").fill("local/random")
    expect(page.get_by_test_id("estimate-turns")).to_have_text("40")  # 2 seats x 20 ticks left
    assert not errors  # the replay page and the builder (the run page's live block is tested on its own)
    page.get_by_role("button", name="Launch the fork").click()
    page.wait_for_url(re.compile(r"/console/runs/run_[0-9a-z]+$"))
    fork = _ended(playing, p, page.url.rsplit("/", 1)[1])
    assert fork["run"]["effective"]["fork"]["tick"] == 10 and fork["run"]["effective"]["fork"]["run_id"] == original
    assert [s["model"] for s in fork["run"]["roster"]] == ["local/random", "local/honest-trader"]
    page.context.close()
