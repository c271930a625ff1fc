"""Runs from the console: build, see the estimate, launch, watch it finish live, results and match
pages, cancel. A server that plays runs (real Ray, local policies: no model provider needed)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from api.app import create_app
from orchestrator import accounts
from orchestrator.core import Core
from orchestrator.runs import service as runs_service
from orchestrator import console_auth
from tests.api.util import free_port, start_server
from tests.console.conftest import Live, sign_in_by_link
from tests.console.test_console import _shot


@pytest.fixture(scope="module")
def playing(tmp_path_factory, ray_pool) -> Live:
    data_dir = tmp_path_factory.mktemp("console-runs") / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text("[limits]\nsign_in_per_minute = 1000\n")
    port = free_port()
    server, thread = start_server(create_app(data_dir, dispatch=True, workers=1), port)
    yield Live(url=f"http://127.0.0.1:{port}", core=Core.open(data_dir))
    server.should_exit = True
    thread.join(timeout=30)


def test_build_launch_watch_and_open_results(page, playing):
    email = "runner@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    page.goto(playing.url + "/console/runs/new")
    page.get_by_label("Scenario").select_option("svc:custom-base-v1")
    page.get_by_label("Season ticks").fill("5")
    page.get_by_label("Seat 1 model").fill("local/honest-trader")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("season_ticks")
    page.get_by_label("Season ticks").fill("60")
    page.get_by_label("Seat 2 model").fill("local/aggressive-raider")
    expect(page.get_by_test_id("estimate")).to_contain_text("Agent turns")
    _shot(page, "run-builder")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    assert "/console/runs/run_" in page.url or "/console/runs/" in page.url
    # the page updates itself (SSE, polling as fallback) until the run is over
    expect(page.get_by_test_id("run-status")).to_have_text("finished", timeout=90_000)
    expect(page.get_by_test_id("result-row").filter(has_text="local/honest-trader")).to_have_count(1)
    _shot(page, "run")
    link = page.get_by_test_id("match-link").first
    href = link.get_attribute("href")
    page.goto(playing.url + href if href.startswith("/") else href)
    assert page.url.startswith(playing.url + "/api/matches/") or page.url.startswith(playing.url + "/matches/")
    page.goto(playing.url + "/console/runs")
    expect(page.get_by_test_id("run-row").first).to_contain_text("finished")


def test_cancel_a_run_from_its_page(page, playing):
    email = "canceller@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    s = console_auth.session(playing.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    out = runs_service.launch(playing.core, console_auth.principal(playing.core, s),
                              {"scenario_id": "svc:custom-base-v1", "season_ticks": 2000, "trials": 8,
                               "roster": [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]})
    # local seats play fast: the last trial of a series on one worker is still waiting its turn
    run_id = out["batch"]["run_ids"][-1]
    page.goto(f"{playing.url}/console/runs/{run_id}")
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("cancelled", timeout=60_000)
    expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)


def test_batch_page_plots_per_seat_intervals(page, playing):
    email = "series@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    page.goto(playing.url + "/console/runs/new")
    page.get_by_label("Scenario").select_option("svc:custom-base-v1")
    page.get_by_label("Season ticks").fill("30")
    page.get_by_label("Trials").fill("3")
    page.get_by_label("Seat 1 model").fill("local/honest-trader")
    page.get_by_label("Seat 2 model").fill("local/aggressive-raider")
    expect(page.get_by_test_id("estimate")).to_contain_text("Trials")
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    page.get_by_test_id("batch-link").click()
    for _ in range(60):
        if page.get_by_test_id("batch-status").inner_text() == "finished":
            break
        page.wait_for_timeout(1000)
        page.reload()
    expect(page.get_by_test_id("batch-plot").locator("svg")).to_be_visible()
    assert page.get_by_test_id("batch-seat").count() >= 2
    _shot(page, "batch")
