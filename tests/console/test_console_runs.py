"""Runs from the console: build, see the estimate, launch, watch it finish live, results and match
pages, cancel. A server that plays runs (real Ray, local policies: no model provider needed)."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from orchestrator import accounts
from orchestrator.seats import keys
from orchestrator.runs import service as runs_service
from orchestrator import console_auth
from tests.console.conftest import open_run_builder, sign_in_by_link
from tests.console.test_console import _shot, at_widths
from tests.waiting import until


def test_build_launch_watch_and_open_results(page, playing):
    email = "runner@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    open_run_builder(page, playing, email, "5")
    page.get_by_label("Seat 0 model").fill("local/honest-trader")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("season_ticks")
    page.get_by_label("Season ticks").fill("60")
    page.get_by_label("Seat 1 model").fill("local/aggressive-raider")
    # the server's first estimate that passes admission builds the world once: seconds on a busy machine
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns", timeout=30_000)
    _shot(page, "run-builder")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    assert "/console/runs/run_" in page.url or "/console/runs/" in page.url
    # the page updates itself (SSE, polling as fallback) until the run is over
    expect(page.get_by_test_id("run-status")).to_have_text("finished", timeout=90_000)
    expect(page.get_by_test_id("result-row").filter(has_text="local/honest-trader")).to_have_count(1)
    # one name per seat, its API index: the builder's row 0, the run's results, the public report
    expect(page.get_by_test_id("result-row").filter(has_text="local/honest-trader")).to_contain_text("seat 0")
    # the 0-100 index with the precision the public report uses
    expect(page.get_by_test_id("result-fitness").first).to_have_text(re.compile(r"^\d{1,3}\.\d$"))
    expect(page.get_by_test_id("seat-row").first).to_contain_text("seat 0 · ")
    _shot(page, "run")
    link = page.get_by_test_id("match-link").first
    href = link.get_attribute("href")
    page.goto(playing.url + href if href.startswith("/") else href)
    assert page.url.startswith(playing.url + "/api/matches/") or page.url.startswith(playing.url + "/matches/")
    page.goto(page.url.split("?")[0].rsplit("/", 1)[0] + "/report?format=html")
    expect(page.locator("tr").filter(has_text="local/honest-trader")).to_contain_text("seat 0")
    page.goto(playing.url + "/console/runs")
    expect(page.get_by_test_id("run-row").first).to_contain_text("finished")
    # a finished run's tick is where its season ended, not an empty cell
    expect(page.get_by_test_id("run-row").first.get_by_test_id("run-row-tick")).to_have_text("60 / 60")


def _principal(page, live):
    s = console_auth.session(live.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    return console_auth.principal(live.core, s)


def test_cancel_a_running_run_and_a_queued_one(page, playing):
    email = "canceller@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    # 2000 ticks at the server's 20 ms a tick: trial 1 plays for 40 s, trial 2 waits for the one worker
    out = runs_service.launch(playing.core, _principal(page, playing),
                              {"scenario_id": "svc:custom-base-v1", "season_ticks": 2000, "trials": 2,
                               "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]})
    running, queued = out["batch"]["run_ids"]
    page.goto(f"{playing.url}/console/runs/{running}")
    expect(page.get_by_test_id("run-status")).to_have_text("running", timeout=30_000)
    expect(page.get_by_test_id("run-tick")).not_to_have_text(re.compile(r"^0 /"), timeout=10_000)
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("cancelled", timeout=30_000)
    expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)
    stopped = runs_service.get_run(playing.core, _principal(page, playing), running)["run"]
    assert stopped["stop_reason"] is not None and stopped["finished_at_ms"] is not None
    page.goto(f"{playing.url}/console/runs/{queued}")
    if page.get_by_test_id("run-status").inner_text() != "cancelled":
        with page.expect_navigation():
            page.get_by_role("button", name="Cancel run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("cancelled", timeout=30_000)


def test_seat_rows_are_added_and_removed_up_to_the_plan(page, playing):
    email = "seats@example.org"
    accounts.create_account(playing.core, email, plan="starter", verified=True)
    most = playing.core.plans["starter"]["seats_per_run"]
    open_run_builder(page, playing, email, "40")
    expect(page.get_by_label("Seat 2 model")).to_have_count(0)
    add = page.get_by_role("button", name="Add seat")
    for _ in range(most - 2):
        add.click()
    expect(add).to_be_disabled()  # the plan's seats
    expect(page.locator("#seat-count")).to_have_text(f"{most} of at most {most} seats")
    for k in range(most - 1, 3, -1):
        page.get_by_role("button", name=f"Remove seat {k}").click()
    expect(page.get_by_label("Seat 4 model")).to_have_count(0)
    for k, model in enumerate(["local/honest-trader", "local/aggressive-raider", "local/random", "local/greedy-harvester"]):
        page.get_by_label(f"Seat {k} model").fill(model)
    expect(page.get_by_test_id("estimate")).to_contain_text("local/greedy-harvester")
    # removing seat 1 renumbers the rest: the old seat 2 is now seat 1 (seats count from 0, as in the API)
    page.get_by_role("button", name="Remove seat 1").click()
    expect(page.get_by_label("Seat 1 model")).to_have_value("local/random")
    expect(page.get_by_label("Seat 3 model")).to_have_count(0)
    expect(add).to_be_enabled()
    expect(page.get_by_test_id("estimate")).not_to_contain_text("aggressive-raider")
    expect(page.get_by_test_id("estimate")).to_contain_text("local/random")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    run_id = page.url.rsplit("/", 1)[1]
    roster = runs_service.get_run(playing.core, _principal(page, playing), run_id)["run"]["roster"]
    assert [seat["model"] for seat in roster] == ["local/honest-trader", "local/random", "local/greedy-harvester"]


def test_a_series_lands_on_its_page_with_its_name_trials_and_intervals(page, playing):
    email = "series@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    open_run_builder(page, playing, email, "30")
    page.get_by_label("Run name").fill("three maps")
    page.get_by_label("Trials").fill("3")
    page.get_by_label("Seat 0 model").fill("local/honest-trader")
    page.get_by_label("Seat 1 model").fill("local/aggressive-raider")
    expect(page.get_by_test_id("estimate")).to_contain_text("Trials")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    expect(page).to_have_url(re.compile(r"/console/batches/[^/]+$"))  # the series, not its first trial
    expect(page.get_by_test_id("series-name")).to_have_text("Series three maps")
    expect(page).to_have_title("Series three maps · Scenario Studio")
    # the page follows the series itself (the batch read's long-poll over SSE, polling as fallback)
    expect(page.get_by_test_id("series-status")).to_have_text("finished", timeout=120_000)
    expect(page.get_by_test_id("series-counts")).to_have_text("3 finished")
    expect(page.get_by_test_id("series-plot").locator("svg")).to_be_visible()
    # the forest plot names its axis as the table does
    plot = page.get_by_test_id("series-plot").locator("svg").text_content()  # the words are SVG text
    assert "mean fitness index (0-100), 95% interval" in plot and "fitness_index" not in plot
    assert page.get_by_test_id("series-seat").count() >= 2
    expect(page.get_by_test_id("series-seat").first).to_contain_text("seat 0 · ")
    # every dimension with its interval, named for people
    summary = page.get_by_test_id("series-summary")
    for name in ("Fitness index", "Wins", "Survival", "Economy", "Social", "Competitiveness", "Exploration"):
        expect(summary.locator("thead")).to_contain_text(name)
    assert "_" not in summary.inner_text()
    expect(page.get_by_test_id("series-seat").first.locator("td").nth(4)).to_contain_text(" to ")
    # a row per trial with its own seeds, and every seat's scores
    trials = page.get_by_test_id("series-trial")
    expect(trials).to_have_count(3)
    seeds = page.get_by_test_id("trial-seeds").all_inner_texts()
    assert len(set(seeds)) == 3, seeds
    expect(page.get_by_test_id("series-trials").locator("tbody tr")).to_have_count(3 * 2)
    at_widths(page, "series")  # every column of the summary and the trials in sight
    # the dashboard lists the series once, with its progress, its trials under it rather than beside it
    page.goto(playing.url + "/console")
    row = page.get_by_test_id("series-row").filter(has_text="three maps")
    expect(row).to_have_count(1)
    expect(row.get_by_test_id("series-progress")).to_have_text("3 of 3 ended")
    expect(page.get_by_test_id("run-row").filter(has_text="three maps")).to_have_count(0)
    row.get_by_test_id("series-trials").locator("summary").click()
    expect(row.get_by_test_id("series-trials").get_by_role("link")).to_have_count(3)
    _shot(page, "dashboard-series")
    # the series index, from the navigation: name, scenario, trials ended of all, status
    page.locator("nav").get_by_role("link", name="Series", exact=True).click()
    expect(page).to_have_title("Series · Scenario Studio")
    listed = page.get_by_test_id("series-index-row").filter(has_text="three maps")
    expect(listed).to_contain_text("Custom base world")
    expect(listed.get_by_test_id("series-index-progress")).to_have_text("3 of 3")
    expect(listed).to_contain_text("finished")
    _shot(page, "series-index")
    listed.get_by_role("link").first.click()
    # a trial's page says whose seed it plays: its own, drawn from the series', not "shared"
    trials.nth(1).get_by_role("link").click()
    expect(page.get_by_test_id("run-seeds")).to_contain_text(f"seed {seeds[1].split(', ')[0]} (trial 2's own, drawn "
                                                              "from the series' seed")
    expect(page.get_by_test_id("run-seeds")).not_to_contain_text("shared")


def test_a_series_sent_without_a_name_is_titled_by_its_scenario(page, playing):
    email = "unnamed-series@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    out = runs_service.launch(playing.core, _principal(page, playing), {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 10, "trials": 2,
        "roster": [{"model": "local/random"}, {"model": "local/honest-trader"}]})
    batch_id = out["batch"]["batch_id"]
    page.goto(f"{playing.url}/console/batches/{batch_id}")
    expect(page.get_by_test_id("series-name")).to_have_text("Series Custom base world")
    expect(page).to_have_title("Series Custom base world · Scenario Studio")
    expect(page.get_by_test_id("series-scenario")).to_have_text("Custom base world svc:custom-base-v1")
    page.goto(playing.url + "/console/batches")
    expect(page.get_by_test_id("series-index-row").filter(has_text=batch_id)).to_contain_text("Custom base world")


def test_the_public_match_page_shows_positions_while_the_match_plays(page, playing):
    email = "spectator@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    run_id = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": 2000,
        "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]})["run"]["run_id"]
    try:
        for _ in range(300):
            run = runs_service.get_run(playing.core, p, run_id)["run"]
            if run["status"] == "running" and run["match_id"]:
                break
            page.wait_for_timeout(100)
        page.goto(f"{playing.url}/api/matches/{run['match_id']}/replay")
        expect(page.locator("#status")).to_contain_text("Playing now")
        expect(page.locator("#legend")).to_contain_text("honest-trader")
        page.wait_for_function("() => window.liveFrame && window.liveFrame.tick > 0")
        first = page.evaluate("() => window.liveFrame.tick")
        page.wait_for_function(f"() => window.liveFrame.tick > {first}")  # it moves on its own
        # every living agent is drawn in its legend colour at its live position (one may cover another)
        hits = page.evaluate("""() => {
          const f = window.liveFrame, c = document.getElementById('map'), x = c.getContext('2d');
          const dots = [...document.querySelectorAll('#legend .dot')].map(e => getComputedStyle(e).backgroundColor);
          const s = c.width / window.mapCells;
          return f.agents.map((a, j) => {
            if (!a[2]) return null;
            const p = x.getImageData(a[0] * s + s / 2, a[1] * s + s / 2, 1, 1).data;
            return `rgb(${p[0]}, ${p[1]}, ${p[2]})` === dots[j];
          });
        }""")
        assert len(hits) >= 2 and any(h for h in hits if h is not None), hits
        _shot(page, "match-live")
    finally:
        runs_service.cancel(playing.core, p, run_id)


def test_the_builder_shows_its_defaults_offers_models_and_asks_for_grading(page, playing):
    """Every field the run body takes, its default shown; the models the account's keys reach; the
    estimate as the form changes, and again when the browser restores the typed form (back), where no
    input event fires; a run of scripted seats graded because the form asked for it."""
    email = "builder@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    keys.set_key(playing.core, provider="router", key="k-router", email=email)
    open_run_builder(page, playing, email, "20")
    expect(page.get_by_label("Season ticks")).to_have_attribute("placeholder", "300")  # the scenario's
    expect(page.get_by_label("Trials")).to_have_attribute("placeholder", "1")
    expect(page.get_by_label("Turn timeout (ms)")).to_have_attribute("placeholder", "30000")
    expect(page.get_by_label("Seat 0 format").locator("option:checked")).to_have_text("tools (default)")
    expect(page.get_by_label("Seat 0 reasoning").locator("option:checked")).to_have_text("provider's default")
    expect(page.get_by_label("Decision grading").locator("option:checked")).to_have_text(
        "auto (default): model and agent seats")
    offered = page.locator("#models option").evaluate_all("os => os.map(o => o.value + ' ' + o.dataset.provider)")
    assert "local/honest-trader local" in offered and "openai/gpt-4o router" in offered
    page.get_by_label("Seat 0 model").fill("local/greedy-harvester")
    page.get_by_label("Seat 0 model").dispatch_event("change")
    expect(page.get_by_label("Seat 0 provider")).to_have_value("local")  # the list's provider came with it
    page.get_by_label("Seat 1 model").fill("local/random")
    page.get_by_label("Decision grading").select_option("all")
    # the server's first estimate that passes admission builds the world once: seconds on a busy machine
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns", timeout=30_000)
    page.goto(playing.url + "/console")
    page.go_back()  # the browser restores the typed fields without an input event
    expect(page.get_by_label("Seat 1 model")).to_have_value("local/random")
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns")
    page.get_by_label("Decision grading").select_option("all")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    expect(page.get_by_test_id("run-status")).to_have_text("finished", timeout=120_000)
    run_id = page.url.rsplit("/", 1)[1]
    until(lambda: runs_service.get_run(playing.core, _principal(page, playing), run_id)["run"]["grading"]["status"]
          == "done", timeout=180, every=0.5, what="the run's grading")
    page.reload()  # the graded turns are listed once grading is done
    expect(page.get_by_test_id("run-grading")).to_contain_text("done")
    expect(page.get_by_test_id("graded-turn").first).to_be_visible()
    # a turn in words ("gather, then move north"), worst first, linked to its tick on the replay
    taken = page.get_by_test_id("turn-taken").all_inner_texts()
    assert taken and not any("{" in t or "action" in t for t in taken), taken
    regrets = [float(r) for r in page.get_by_test_id("graded-turn").locator("td:nth-child(4)").all_inner_texts()]
    assert regrets == sorted(regrets, reverse=True) and len(regrets) <= 10
    # turns in words wrap inside their cells: the table reads without scrolling sideways
    box = page.locator("div.scroll", has=page.get_by_test_id("graded-turns"))
    assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    _shot(page, "graded-run")
    tick = page.get_by_test_id("graded-tick").first.inner_text()
    page.get_by_test_id("graded-tick").first.click()
    expect(page.locator("#tick")).to_contain_text(f"tick {tick} of", timeout=30_000)
