"""The run builder's precision and budget fields for a series, with the estimate's expected trials,
and the series page's confidence sequences narrowing trial by trial (CONTRACT.md section 17)."""
from __future__ import annotations

from playwright.sync_api import expect

from orchestrator import accounts
from tests.console.conftest import open_run_builder


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
    page.get_by_label("Series budget (USD)").fill("2")
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
