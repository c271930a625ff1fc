"""The web console as a person uses it, in headless Chromium against a real server."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
from playwright.sync_api import expect

from api.cli import main
from orchestrator import console_auth
from orchestrator.seats import keys
from tests.console.conftest import sign_in_by_link
from tests.waiting import until

# The README's screenshots are refreshed on demand (`make shots`), so a test run writes no tracked file.
SHOTS = os.environ.get("STUDIO_SHOTS")


def fits_window(page) -> None:
    """No page is wider than the window: a wide table scrolls inside its own box, not the page."""
    doc, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert doc <= window, f"{page.url} is {doc} px wide in a {window} px window"


def _shot(page, name: str) -> None:
    """Every page the README shows fits the window; `make shots` also saves it."""
    fits_window(page)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


WIDTHS = (1280, 1440)  # a laptop's window and a desktop's


def nothing_clipped(page) -> None:
    """Every visible table shows all its columns: none runs past the window or hides in a scroll box."""
    clipped = page.evaluate("""() => [...document.querySelectorAll('table')]
        .filter((t) => t.getClientRects().length && !t.closest('[hidden], details:not([open])'))
        .map((t) => {
          const box = t.closest('.scroll');
          const over = Math.max(t.getBoundingClientRect().right - window.innerWidth,
                                box ? box.scrollWidth - box.clientWidth : 0);
          return [t.dataset.testid || t.id || t.className || 'table', Math.round(over)];
        }).filter(([, over]) => over > 1)""")
    assert not clipped, f"{page.url}: tables clipped by so many px: {clipped}"


def at_widths(page, name: str) -> None:
    """The page at each width: no wider than the window, no table clipped; `make shots` saves each
    (the 1280 px one under the plain name)."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        if SHOTS:  # before the checks, so that a page that fails them can be looked at
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            suffix = "" if width == WIDTHS[0] else f"-{width}"
            page.screenshot(path=str(Path(SHOTS) / f"{name}{suffix}.png"), full_page=True)
        fits_window(page)
        nothing_clipped(page)


def test_root_leads_to_sign_in_and_a_link_signs_in_once(page, live, person):
    page.goto(live.url + "/")
    expect(page).to_have_url(live.url + "/console/login")
    _shot(page, "login")
    link = console_auth.login_link(live.core, person, live.url)
    page.goto(link)
    expect(page).to_have_url(live.url + "/console")
    expect(page.locator("nav .who")).to_have_text(person)
    _shot(page, "dashboard")
    # a second use of the same link is refused with the reason
    other = page.context.browser.new_context().new_page()
    other.goto(link)
    expect(other.get_by_test_id("error")).to_contain_text("unknown, used or expired")
    other.context.close()


def test_password_sign_in_set_by_the_cli(page, live, person):
    subprocess.run([sys.executable, "-m", "api.cli", "account", "password", "--email", person,
                    "--data-dir", str(live.core.data_dir)], input="correct horse battery\n", text=True, check=True)
    page.goto(live.url + "/console/login")
    page.get_by_label("Email").fill(person)
    page.get_by_label("Password").fill("wrong password!!")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("error")).to_have_text("the email or password is wrong")
    page.get_by_label("Email").fill(person)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(live.url + "/console")


def test_mint_use_and_revoke_a_token(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/developer")
    expect(page.get_by_label("runs:write")).not_to_be_checked()
    page.get_by_label("Token name").fill("laptop")
    page.get_by_label("runs:write").check()
    page.get_by_role("button", name="Mint token").click()
    token = page.get_by_test_id("new-token").inner_text().strip()
    assert re.fullmatch(r"dsk_[0-9a-f]{64}", token)
    row = page.get_by_test_id("token-row").filter(has_text=token[:12])
    expect(row).to_contain_text(token[:12])
    expect(row).to_contain_text("runs:write")
    expect(row.get_by_test_id("last-used")).to_have_text("never")
    _shot(page, "developer")

    me = httpx.get(live.url + "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["user"]["email"] == person
    def shown() -> bool:  # last-used is written off the request path
        page.goto(live.url + "/console/developer")
        return row.get_by_test_id("last-used").inner_text() != "never"
    until(shown, 5, every=0.2, what="the token's last use on the page")
    expect(row.get_by_test_id("last-used")).to_contain_text("UTC")
    # the plaintext is shown once: not when the page is opened again
    expect(page.get_by_test_id("new-token")).to_have_count(0)
    expect(page.get_by_test_id("token-row").filter(has_text="laptop")).to_have_count(1)

    row.get_by_role("button", name="Revoke").click()
    expect(row).to_contain_text("revoked")
    gone = httpx.get(live.url + "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert gone.status_code == 401 and gone.json()["error"] == "token_required"
    events = page.get_by_test_id("security-event")
    expect(events.filter(has_text="token_minted")).to_have_count(1)
    expect(events.filter(has_text="token_revoked")).to_have_count(1)
    expect(events.filter(has_text="signed_in")).to_have_count(1)


def test_the_plan_token_allowance_is_shown(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/developer")
    for k in range(3):  # starter allows 3
        page.get_by_label("Token name").fill(f"t{k}")
        page.get_by_role("button", name="Mint token").click()
        expect(page.get_by_test_id("new-token")).to_be_visible()
    page.get_by_label("Token name").fill("one too many")
    page.get_by_role("button", name="Mint token").click()
    expect(page.get_by_test_id("error")).to_contain_text("the Starter plan allows 3 active tokens")
    expect(page.get_by_test_id("new-token")).to_have_count(0)


def test_add_replace_and_remove_a_provider_key(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/keys")
    page.get_by_label("Provider", exact=True).select_option("openai-compatible")
    page.get_by_label("Key", exact=True).fill("sk-secret-value-1")
    page.get_by_role("button", name="Save key").click()
    expect(page.get_by_test_id("error")).to_contain_text("needs --base-url")
    page.get_by_label("Provider", exact=True).select_option("openai")
    page.get_by_label("Key", exact=True).fill("sk-secret-value-1")
    page.get_by_role("button", name="Save key").click()
    expect(page.get_by_test_id("key-row")).to_contain_text("openai")
    assert "sk-secret-value-1" not in page.content()
    _shot(page, "keys")
    owner = live.core.store.one("SELECT id FROM accounts WHERE email = ?", (person,))["id"]
    assert keys.plaintext(live.core, owner, "openai") == "sk-secret-value-1"
    page.get_by_label("Provider", exact=True).select_option("openai")
    page.get_by_label("Key", exact=True).fill("sk-secret-value-2")
    with page.expect_navigation():
        page.get_by_role("button", name="Save key").click()
    assert keys.plaintext(live.core, owner, "openai") == "sk-secret-value-2"
    page.get_by_role("button", name="Remove").click()
    expect(page.get_by_test_id("key-row")).to_have_count(0)
    assert keys.plaintext(live.core, owner, "openai") is None


def test_csrf_and_revoked_sessions_are_refused(page, live, person):
    sign_in_by_link(page, live, person)
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    # a cross-site form post carries the cookie but not the page's CSRF token
    forged = httpx.post(live.url + "/console/developer/tokens", data={"name": "forged", "scopes": "runs:write"},
                        cookies=cookies, follow_redirects=False)
    assert forged.status_code == 403 and forged.json()["error"] == "csrf_failed"
    assert all(t["name"] != "forged" for t in __import__("orchestrator.auth").auth.list_tokens(live.core, person))
    # the console cookie never authenticates the API, and a token never opens the console
    assert httpx.get(live.url + "/api/v1/me", cookies=cookies).status_code == 401
    from orchestrator import auth
    token, _ = auth.mint(live.core, person, name="api")
    opened = httpx.get(live.url + "/console/developer", headers={"Authorization": f"Bearer {token}"})
    assert opened.status_code == 303 and opened.headers["location"] == "/console/login"

    second = page.context.browser.new_context()
    other = second.new_page()
    sign_in_by_link(other, live, person)
    page.goto(live.url + "/console/developer")
    page.get_by_role("button", name="Sign out everywhere").click()
    expect(page).to_have_url(live.url + "/console/login")
    other.goto(live.url + "/console/developer")
    expect(other).to_have_url(live.url + "/console/login")
    # the old cookie, replayed by hand, is dead too
    replayed = httpx.get(live.url + "/console", cookies=cookies)
    assert replayed.status_code == 303 and replayed.headers["location"] == "/console/login"
    second.close()


def test_api_docs_work_offline(page, live):
    page.route(re.compile(r"^https?://(?!127\.0\.0\.1).*"), lambda route: route.abort())
    page.goto(live.url + "/api/v1/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Scenario Studio API")


def test_scenario_builder_validates_as_you_type(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/scenarios")
    page.get_by_label("Name").fill("Small world")
    page.get_by_label("Season ticks").fill("5")
    expect(page.locator("#err-season_ticks")).to_contain_text("season_ticks")
    expect(page.get_by_test_id("scenario-valid")).to_have_count(0)
    page.get_by_label("Season ticks").fill("120")
    expect(page.get_by_test_id("content-hash")).to_have_text(re.compile(r"^[0-9a-f]{16}$"))
    expect(page.locator("#err-season_ticks")).to_have_text("")
    shown = page.get_by_test_id("content-hash").inner_text()
    with page.expect_navigation():
        page.get_by_role("button", name="Save scenario").click()
    expect(page.get_by_test_id("scenario-row")).to_contain_text(shown)
    _shot(page, "scenarios")


def test_skills_are_kept_and_bad_ones_refused_with_the_api_message(page, live, person):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/skills")
    page.get_by_label("Skill name").fill("patient")
    page.get_by_label("Text").fill("")
    page.get_by_role("button", name="Save skill").click()
    expect(page.get_by_test_id("error")).to_contain_text("text")
    page.get_by_label("Skill name").fill("patient")
    page.get_by_label("Text").fill("Trade before you fight.")
    with page.expect_navigation():
        page.get_by_role("button", name="Save skill").click()
    expect(page.get_by_test_id("skill-row")).to_contain_text("patient")
    with page.expect_navigation():
        page.get_by_test_id("skill-row").get_by_role("button", name="Delete").click()
    expect(page.get_by_test_id("skill-row")).to_have_count(0)


def _cli(capsys, *args: str) -> str:
    """The admin command through api.cli.main in this process (tests/api/test_cli.py runs `studio` as
    its own process); its stdout."""
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_usage_page_and_login_link_cli(page, live, person, capsys):
    out = _cli(capsys, "account", "login-link", "--email", person, "--data-dir", str(live.core.data_dir),
               "--base-url", live.url).strip()
    assert out.startswith(live.url + "/console/login/link/")
    page.goto(out)
    events = json.loads(_cli(capsys, "account", "events", "--email", person, "--data-dir", str(live.core.data_dir)))
    assert [e["kind"] for e in events] == ["signed_in"] and events[0]["detail"] == {"how": "link"}
    page.goto(live.url + "/console/usage")
    expect(page.get_by_role("heading", name="Usage")).to_be_visible()


def test_a_saved_scenario_is_edited_in_place_through_the_same_checks(page, live, person):
    from orchestrator import scenarios
    sign_in_by_link(page, live, person)
    s = console_auth.session(live.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    p = console_auth.principal(live.core, s)
    _, made = scenarios.create(live.core, p, {"name": "editable", "description": "before", "season_ticks": 100})
    sc = made["scenario"]
    page.goto(live.url + "/console/scenarios")
    page.get_by_test_id("scenario-row").filter(has_text="editable").get_by_role("link", name="Edit").click()
    expect(page.get_by_test_id("saved-hash")).to_have_text(sc["hash"])
    expect(page.get_by_label("Description")).to_have_value("before")
    expect(page.get_by_test_id("content-hash")).to_have_text(sc["hash"])  # unchanged form: the same hash
    page.get_by_label("Season ticks").fill("5")
    expect(page.locator("#err-season_ticks")).to_contain_text("season_ticks")
    # saved anyway: the update is refused by the service and the message sits beside the field
    with page.expect_navigation():
        page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#err-season_ticks")).to_contain_text("season_ticks")
    expect(page.get_by_test_id("saved-hash")).to_have_text(sc["hash"])
    assert scenarios.get(live.core, p, sc["id"])["scenario"]["season_ticks"] == 100
    page.get_by_label("Season ticks").fill("150")
    page.get_by_label("Description").fill("after")
    expect(page.get_by_test_id("content-hash")).not_to_have_text(sc["hash"])
    shown = page.get_by_test_id("content-hash").inner_text()
    _shot(page, "scenario-edit")
    with page.expect_navigation():
        page.get_by_role("button", name="Save changes").click()
    row = page.get_by_test_id("scenario-row").filter(has_text=sc["id"])
    expect(row).to_contain_text(shown)
    expect(row).to_contain_text("150")
    after = scenarios.get(live.core, p, sc["id"])["scenario"]
    assert after["hash"] == shown and after["description"] == "after" and after["id"] == sc["id"]
