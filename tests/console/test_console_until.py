"""The run builder's precision and budget fields for a series (decimal amounts as typed), with the
estimate's expected trials, and the series page's confidence sequences narrowing trial by trial and
where the series stopped (CONTRACT.md section 17)."""
from __future__ import annotations

from playwright.sync_api import expect

from orchestrator import accounts
from orchestrator.runs import service as runs_service
from orchestrator.runs.series import read as series
from tests.console.conftest import open_run_builder
from tests.console.test_console_replay import _principal


def test_a_series_until_precise_from_the_builder_to_its_plot(page, playing):
    email = "until@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    open_run_builder(page, playing, email, "20")
    page.get_by_label("Trials").fill("30")
    page.get_by_label("Seat 0 model").fill("local/honest-trader")
    page.get_by_label("Seat 1 model").fill("local/greedy-harvester")
    page.get_by_label("Stop at ± (points, series)").fill("0")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("until.half_width")
    page.get_by_label("Stop at ± (points, series)").fill("30")
    page.get_by_label("Series budget (USD)").fill("1.5")
    page.get_by_label("Spend cap (USD)").fill("0.5")
    expect(page.get_by_test_id("estimate-expected-trials")).to_contain_text("of at most 30", timeout=30_000)
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    # a launched series lands on its own page
    expect(page.get_by_test_id("series-until")).to_contain_text("±30")
    expect(page.get_by_test_id("series-stopped")).to_contain_text("Stopped: precise", timeout=120_000)
    expect(page.get_by_test_id("series-sequence").locator("svg")).to_be_visible()
    plot = page.get_by_test_id("series-sequence").locator("svg").text_content()  # the words are SVG text
    assert "Mean fitness index, valid at every trial at once" in plot and "fitness_index" not in plot
    expect(page.get_by_test_id("series-cs").first).to_contain_text("±")
    # the amounts as typed; the header says the trials are a ceiling, and the trials left say they were not played
    p = _principal(page, playing)
    got = series.get_series(playing.core, p, page.url.rsplit("/", 1)[1])["batch"]
    assert got["budget_usd"] == 1.5 and got["stopped"] == "precise"
    views = [runs_service.get_run(playing.core, p, r)["run"] for r in got["run_ids"]]
    assert {v["spend"]["cap_usd"] for v in views} == {0.5}
    expect(page.get_by_text("up to 30 trials (it stops once precise enough) of one configuration")).to_be_visible()
    unplayed = sum(v["stop_reason"] == "series_stopped" for v in views)
    assert unplayed > 0
    expect(page.get_by_test_id("trial-status").filter(has_text="not played (the series stopped)")).to_have_count(
        unplayed)
