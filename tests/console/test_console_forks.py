"""Forks in the console (CONTRACT.md sections 16 and 17), in headless Chromium against a playing server:
the replay page of an ended world run offers "Fork from this tick", which opens the run builder with the
fork filled in; a seat handed to another player there launches the fork. A fork series' page says what
it forks, each trial's arm and continuation seed, and the effect fork - control; with `until`, its
target and stopping state."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from api.console.pages import number
from orchestrator import accounts
from orchestrator.runs import service as runs_service
from orchestrator.runs.series import read as series
from tests.console.conftest import sign_in_by_link
from tests.console.test_console import _shot, fits_window
from tests.console.test_console_replay import _ended, _errors, _principal
from tests.waiting import until


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


@pytest.fixture(scope="module")
def forker(browser, playing):
    """An account with an ended 30-tick run of two scripted seats: (its email, the run's view)."""
    email = "fork-series@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    page = browser.new_context().new_page()
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    original = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 30, "env": {"seed": 3, "spawn_seed": 4}, "name": "base",
        "roster": [{"model": "local/greedy-harvester"}, {"model": "local/honest-trader"}]})["run"]["run_id"]
    page.context.close()
    return email, p, _ended(playing, p, original)["run"]


def _fork_form(browser, playing, forker, trials: str):
    """A 1280 px window on the fork builder of the forker's run at tick 10, seat 0 handed to random,
    with a control arm and a spend cap of 0.5 USD."""
    email, _, run = forker
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    sign_in_by_link(page, playing, email)
    page.goto(f"{playing.url}/console/runs/{run['run_id']}/fork?tick=10")
    page.get_by_label("Seat 0 new model").fill("local/random")
    page.get_by_label("Trials", exact=True).fill(trials)
    page.get_by_label("control arm").check()
    page.get_by_label("Spend cap (USD)").fill("0.5")
    return page


def _launched(page, playing, p) -> dict:
    """Launch the form; on the series' page, the batch view once every run of it has ended."""
    with page.expect_navigation():
        page.get_by_role("button", name="Launch the fork").click()
    assert re.search(r"/console/batches/bat_[0-9a-z]+$", page.url), page.url
    batch_id = page.url.rsplit("/", 1)[1]
    return until(lambda: (b := series.get_series(playing.core, p, batch_id)["batch"])["status"] in
                 ("finished", "cancelled", "failed") and b, 180, every=0.2, what="the series' end")


def test_a_fork_series_page_says_what_it_forks_each_arm_and_seed_and_the_effect(browser, playing, forker):
    _, p, run = forker
    page = _fork_form(browser, playing, forker, "3")
    expect(page.get_by_test_id("estimate-turns")).to_have_text(str(2 * 20 * 3 * 2), timeout=30_000)  # 2 seats, 20 ticks, 2 arms
    errors = _errors(page)
    got = _launched(page, playing, p)
    views = [runs_service.get_run(playing.core, p, r)["run"] for r in got["run_ids"]]
    assert {v["spend"]["cap_usd"] for v in views} == {0.5}  # the decimal cap as typed, every arm
    page.reload()
    head = page.get_by_test_id("series-fork")
    expect(head).to_contain_text("forks run base at tick 10")
    expect(head).to_contain_text("seat 0 · random (local/random) in place of greedy-harvester")
    expect(head).to_contain_text("as many control trials")
    expect(head.get_by_test_id("fork-original")).to_have_attribute("href", f"/console/runs/{run['run_id']}")
    assert "of one configuration" not in page.content()
    # pairs: trial j's fork run beside its control run, on one continuation seed
    seeds = [v["effective"]["fork"]["continuation_seed"] for v in views]
    expect(page.get_by_test_id("trial-arm")).to_have_text(["fork", "control"] * 3)
    expect(page.get_by_test_id("trial-continuation-seed")).to_have_text(
        [str(seeds[j]) for j in range(3) for _ in (0, 1)])
    expect(page.get_by_test_id("series-trial").locator("a")).to_have_text(
        [f"trial {j + 1}" for j in range(3) for _ in (0, 1)])
    # the effect at the top: each metric of the changed seat, as the batch view has it
    rows = page.get_by_test_id("effect-row")
    expect(rows).to_have_count(6)
    assert [e["n"] for e in got["effect"]] == [3] * 6
    expect(page.get_by_test_id("effect-n")).to_have_text(["3"] * 6)
    fit = next(e for e in got["effect"] if e["metric"] == "fitness_index")
    expect(rows.first).to_contain_text("seat 0 · random")
    expect(rows.first).to_contain_text("Fitness index")
    expect(rows.first).to_contain_text(f"{fit['mean']:+.1f}")
    effect_box = page.get_by_test_id("series-effect-section").bounding_box()
    assert effect_box["y"] < page.get_by_test_id("series-summary").bounding_box()["y"]  # at the top
    expect(page.get_by_test_id("effect-plot").locator("svg")).to_be_visible()
    assert "Effect of the fork" in page.get_by_test_id("effect-plot").text_content()
    _shot(page, "fork-series")  # no wider than the 1280 px window
    assert not errors
    # a control trial's own page: trial 1 of 3 in its arm, of which run, from which tick, on which seed
    page.get_by_test_id("series-trial").nth(1).locator("a").click()
    expect(page.get_by_test_id("run-fork")).to_have_text(
        f"of run {run['run_id']} from tick 10 (control arm, continuation seed {seeds[0]})")
    expect(page.get_by_test_id("series-link").locator("..")).to_contain_text("trial 1 of 3 (control arm)")
    page.context.close()


def test_a_fork_series_with_until_shows_its_target_and_where_it_stopped(browser, playing, forker):
    _, p, _ = forker
    page = _fork_form(browser, playing, forker, "4")
    page.get_by_label("Stop at ± (points, series)").fill("95")
    page.get_by_label("Series budget (USD)").fill("0.75")
    expect(page.get_by_test_id("estimate-expected-trials")).to_contain_text("of at most 4", timeout=30_000)
    got = _launched(page, playing, p)
    assert got["until"] == {"half_width": 95, "metric": "fitness_index", "seat": None} and got["budget_usd"] == 0.75
    page.reload()
    expect(page.get_by_test_id("series-fork")).to_contain_text("Up to 4 trials (it stops once precise enough)")
    expect(page.get_by_test_id("series-until")).to_contain_text(
        "each changed seat's effect (fork - control) on fitness_index is known within ±95")
    expect(page.get_by_test_id("series-until")).to_contain_text("0.75 USD")
    expect(page.get_by_test_id("series-stopped")).to_contain_text(f"Stopped: {got['stopped']}")
    # each seat's sequence beside its interval, as the batch view has it
    cs = [s.get("cs") for s in got["summary"]["seats"] if not s["anchor"]]
    shown = page.get_by_test_id("series-cs")
    for k, c in enumerate(cs):
        expect(shown.nth(k)).to_contain_text(f"±{c['half_width']:.1f}" if c else "n/a")
    views = [runs_service.get_run(playing.core, p, r)["run"] for r in got["run_ids"]]
    unplayed = sum(v["stop_reason"] == "series_stopped" for v in views)
    expect(page.get_by_test_id("trial-status").filter(has_text="not played (the series stopped)")).to_have_count(
        unplayed)
    expect(page.get_by_test_id("effect-n")).to_have_text([str(e["n"]) for e in got["effect"]])
    for k, e in enumerate(got["effect"]):  # the target metric's effect carries its own sequence
        if e.get("cs"):
            expect(page.get_by_test_id("effect-row").nth(k)).to_contain_text(f"±{e['cs']['half_width']:.1f}")
    fits_window(page)
    page.context.close()


def test_a_form_number_is_an_integer_a_decimal_or_the_text_as_typed():
    """Every builder's fields (spend cap, budget, trials, tick, target): what the service is sent."""
    assert number("0.5") == 0.5 and number("12") == 12 and type(number("12")) is int and number("1e3") == 1000.0
    # not a finite number: sent as typed, so the service's refusal names the field
    assert [number(t) for t in ("nan", "inf", "1e400", "half", "")] == ["nan", "inf", "1e400", "half", ""]
