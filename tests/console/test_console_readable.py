"""What a person reads in the console on a first hour: sentences rather than Python values, forms quiet
until typed in, one name per seat, a run page that says what it plays and how each seat fares while it
plays, confirmations, a console 404, an icon, and no JavaScript error."""
from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from orchestrator import accounts
from orchestrator.seats import keys
from orchestrator.runs import service as runs_service
from tests.console.conftest import sign_in_by_link
from tests.console.test_console import WIDTHS, at_widths
from tests.console.test_console_runs import _principal
from tests.seats.fake_provider import FakeProvider

PYTHON_VALUES = re.compile(r"\{'|\bNone\b|\[\]")  # a dict's repr, None, an empty list


def _js_errors(page) -> list[str]:
    """Collects the page's console errors and uncaught exceptions from now on."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_the_dashboard_reads_as_sentences(page, live, person):
    errors = _js_errors(page)
    sign_in_by_link(page, live, person)  # a starter account
    expect(page.get_by_test_id("allowance-turns")).to_have_text(
        "12,000 of 12,000 remaining (0 used, 0 held by runs not yet settled)")
    expect(page.get_by_test_id("allowance-queue")).to_have_text("0 of at most 2 at a time")
    expect(page.get_by_test_id("allowance-cap")).to_have_text("from 0.05 USD to 50.00 USD")
    expect(page.get_by_test_id("allowance-tokens")).to_have_text("0 of 3 active")
    assert not PYTHON_VALUES.search(page.locator("main").inner_text())
    page.wait_for_load_state("networkidle")
    assert errors == []  # the icon included: /favicon.ico answers


def test_the_favicon_is_served_by_the_service(live):
    r = httpx.get(live.url + "/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg")


def test_the_scenario_builder_is_quiet_until_typed_in_and_its_placeholder_is_valid(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/scenarios")
    page.wait_for_load_state("networkidle")
    expect(page.locator("main .error:visible")).to_have_count(0)  # no message, and no empty boxes
    env = page.get_by_label("Env (JSON)")
    example = env.get_attribute("placeholder")
    page.get_by_label("Name").fill("S")
    expect(page.locator("#err-name")).to_contain_text("name")  # after input, the message comes
    page.get_by_label("Name").fill("Seeded world")
    env.fill(example)
    expect(page.get_by_test_id("scenario-valid")).to_be_visible()
    expect(page.locator("main .error:visible")).to_have_count(0)
    with page.expect_navigation():
        page.get_by_role("button", name="Save scenario").click()
    expect(page.get_by_test_id("scenario-row").filter(has_text="Seeded world")).to_have_count(1)
    page.wait_for_load_state("networkidle")
    expect(page.locator("main .error:visible")).to_have_count(0)  # a fresh form after a save, not a refusal


def test_the_run_builder_and_arena_picker_show_no_refusal_before_input(page, live, person):
    sign_in_by_link(page, live, person)
    for path in ("/console/runs/new", "/console/arena"):
        page.goto(live.url + path)
        page.wait_for_load_state("networkidle")
        expect(page.get_by_test_id("estimate-error")).to_have_count(0)
        expect(page.locator("main .error:visible")).to_have_count(0)
    page.get_by_label("Seat 1 model").fill("local/random")
    expect(page.get_by_test_id("estimate-error")).to_contain_text("exactly 2 seats")


def test_the_run_builder_fits_the_window_reads_as_examples_and_asks_for_a_seat_in_words(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/runs/new")
    page.wait_for_load_state("networkidle")
    at_widths(page, "run-builder-empty")
    for width in WIDTHS:  # every column of the seat table in sight, Remove included
        page.set_viewport_size({"width": width, "height": 900})
        for label in ("Seat 1 temperature", "Seat 1 max tokens", "Remove seat 1"):
            box = page.get_by_label(label).bounding_box()
            assert box and box["width"] > 20 and box["x"] + box["width"] <= width, (width, label, box)
    # a placeholder is an example or a default, drawn lighter and in italics, never as a typed value
    model = page.get_by_label("Seat 0 model")
    assert model.get_attribute("placeholder") == "e.g. local/honest-trader"
    assert page.get_by_label("Seat 0 provider").get_attribute("placeholder").startswith("e.g. ")
    drawn, typed, italic = model.evaluate(
        "e => [getComputedStyle(e, '::placeholder').color, getComputedStyle(e).color,"
        " getComputedStyle(e, '::placeholder').fontStyle]")
    assert italic == "italic" and drawn != typed, (drawn, typed, italic)
    # launching the empty form asks for a seat in the form's words, not the API's
    with page.expect_navigation():
        page.get_by_role("button", name="Launch").click()
    error = page.get_by_test_id("error").inner_text()
    assert error.startswith("Add a seat before launching"), error
    assert "roster" not in error and "{" not in error and "non-empty array" not in error
    expect(page.get_by_test_id("estimate-error")).to_contain_text("Add a seat before launching")  # the estimate too


def test_saving_and_removing_a_key_is_confirmed(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/keys")
    expect(page.get_by_test_id("done")).to_have_count(0)
    page.get_by_label("Provider", exact=True).select_option("anthropic")
    page.get_by_label("Key", exact=True).fill("sk-ant-confirm")
    with page.expect_navigation():
        page.get_by_role("button", name="Save key").click()
    expect(page.get_by_test_id("done")).to_have_text(
        "Saved the anthropic key. It is stored encrypted and never shown back.")
    with page.expect_navigation():
        page.get_by_test_id("key-row").get_by_role("button", name="Remove").click()
    expect(page.get_by_test_id("done")).to_have_text("Removed the anthropic key.")
    page.goto(live.url + "/console/keys?saved=<b>nope</b>")  # only a provider's name is ever echoed
    expect(page.get_by_test_id("done")).to_have_count(0)


def test_a_console_404_is_a_console_page_with_a_way_back(page, live, person):
    signed_out = page.goto(live.url + "/console/no-such-page")
    assert signed_out.status == 404
    expect(page).to_have_title("Not found · Scenario Studio")
    expect(page.get_by_test_id("not-found")).to_have_text("This page does not exist.")
    sign_in_by_link(page, live, person)
    for path, text, back in [("/console/runs/run_nope", "There is no run run_nope on this account.", "/console/runs"),
                             ("/console/batches/bat_nope", "There is no series bat_nope on this account.",
                              "/console/runs"),
                             ("/console/scenarios/usc_nope/edit",
                              "There is no saved scenario usc_nope on this account.", "/console/scenarios"),
                             ("/console/whatever", "This page does not exist.", "/console")]:
        assert page.goto(live.url + path).status == 404
        expect(page.get_by_test_id("not-found")).to_have_text(text)
        assert "/api/v1" not in page.locator("main").inner_text()  # words for a person, not an API client
        expect(page.locator("nav .who")).to_have_text(person)
        page.get_by_test_id("back").click()
        expect(page).to_have_url(live.url + back)
    # the API keeps its envelope
    r = httpx.get(live.url + "/api/v1/nope")
    assert r.status_code == 404 and r.json()["error"] == "not_found"


def test_a_run_page_names_what_it_plays_and_warns_per_seat_while_live(page, playing):
    """A model seat whose provider refuses its first call: the live page counts it on that seat, names
    the scenario and the seeds, and closes its event stream without a JavaScript error when the run ends;
    the transcript shows the missed turn with dashes, never None or []."""
    email = "reader@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    with FakeProvider() as fake:
        fake.script("faulty-7b", {"status": 400})  # one provider error, then answers
        # slowly enough that the season is still playing when the page is read, on any machine
        fake.defaults["faulty-7b"] = {"calls": [("gather", {})], "delay_ms": 50}
        keys.set_key(playing.core, provider="openai-compatible", key="k-local", email=email,
                     base_url=fake.url + "/v1")
        errors = _js_errors(page)
        sign_in_by_link(page, playing, email)
        p = _principal(page, playing)
        run_id = runs_service.launch(playing.core, p, {
            "scenario_id": "svc:custom-base-v1", "season_ticks": 2000, "name": "warned",
            "roster": [{"model": "faulty-7b", "provider": "openai-compatible"},
                       {"model": "local/honest-trader"}]})["run"]["run_id"]
        try:
            page.goto(f"{playing.url}/console/runs/{run_id}")
            expect(page.get_by_test_id("run-scenario")).to_have_text("Custom base world svc:custom-base-v1")
            run = runs_service.get_run(playing.core, p, run_id)["run"]
            expect(page.get_by_test_id("run-seeds")).to_have_text(
                f"seed {run['effective']['seed']} (drawn for this run), "
                f"spawn seed {run['effective']['spawn_seed']} (drawn for this run)")
            seats = page.get_by_test_id("seat-row")
            expect(seats.nth(0)).to_contain_text("seat 0 · ")
            expect(seats.nth(1)).to_contain_text("scripted: no model calls")
            # the page updates itself: the warning comes while the run still plays
            warning = page.get_by_test_id("seat-warning")
            expect(warning).to_contain_text("1 provider error so far", timeout=30_000)
            expect(warning).to_contain_text("seat 0 · ")
            expect(page.get_by_test_id("run-status")).to_have_text("running")
            expect(seats.nth(0).locator("td").nth(3)).not_to_have_text("0")  # turns answered, live
            expect(page.get_by_test_id("transcript-link")).to_have_text(re.compile(r"^seat 0 · .+ \(faulty-7b\)$"))
        finally:
            runs_service.cancel(playing.core, p, run_id)
        expect(page.get_by_test_id("run-status")).to_have_text("cancelled", timeout=30_000)
        page.wait_for_timeout(1500)  # room for the stream's close to show up as an error, if it did
        assert errors == [], errors
        page.get_by_test_id("transcript-link").click()
        first = page.get_by_test_id("transcript-turn").first
        expect(first).to_contain_text("status 400")
        expect(first.locator("td").nth(1)).to_have_text("0")  # the seat, by its index
        expect(first.locator("td").nth(2)).to_have_text("-")  # no reply
        expect(first.locator("td").nth(3)).to_have_text("-")  # no actions
        assert not PYTHON_VALUES.search(page.locator("main").inner_text())
