"""The console under its security headers: provider base URLs held to CONTRACT.md section 15, keys
checked when saved, and pages that still work under the Content-Security-Policy they are sent."""
from __future__ import annotations

import httpx
from playwright.sync_api import expect

from api.headers import CSP
from orchestrator import accounts, auth, console_auth
from orchestrator.seats import keys
from tests.console.conftest import sign_in_by_link


def _save_key(page, provider: str, key: str, base_url: str = "") -> None:
    page.get_by_label("Provider", exact=True).select_option(provider)
    page.get_by_label("Key", exact=True).fill(key)
    page.get_by_label("Base URL (for self-hosted ones)").fill(base_url)
    page.get_by_role("button", name="Save key").click()


def test_a_base_url_that_is_not_public_is_refused_and_a_saved_key_is_checked(page, live, person, allowed_provider):
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/keys")
    for url in ("http://169.254.169.254/latest/meta-data", "http://10.0.0.5:8000/v1", live.url + "/api/v1"):
        _save_key(page, "openai-compatible", "sk-anything", url)
        expect(page.get_by_test_id("error")).to_contain_text("bad_base_url")
        expect(page.get_by_test_id("error")).to_contain_text("allow_base_urls")
        expect(page.get_by_test_id("key-row")).to_have_count(0)
    owner = live.core.store.one("SELECT id FROM accounts WHERE email = ?", (person,))["id"]
    assert keys.held(live.core, owner) == {}
    # the operator lists the double's URL: an account may use it, and the key is checked on saving
    allowed_provider.rejected_keys.add("sk-made-up")
    with page.expect_navigation():
        _save_key(page, "openai-compatible", "sk-made-up", allowed_provider.url + "/v1")
    expect(page.get_by_test_id("key-check")).to_contain_text("rejected by the provider")
    with page.expect_navigation():
        _save_key(page, "openai-compatible", "sk-works", allowed_provider.url + "/v1")
    expect(page.get_by_test_id("key-check")).to_contain_text("works")
    assert keys.held(live.core, owner)["openai-compatible"]["check"]["status"] == "ok"
    # a server that ignores `tools`: the page says so, on the model the person named
    allowed_provider.tools = "ignore"
    try:
        with page.expect_navigation():
            page.fill("#key-check-model", "smollm2")
            _save_key(page, "openai-compatible", "sk-works", allowed_provider.url + "/v1")
    finally:
        allowed_provider.tools = "calls"
    expect(page.get_by_test_id("key-tools")).to_contain_text("no: model smollm2:")
    expect(page.get_by_test_id("key-tools")).to_contain_text("answered with text")
    assert keys.held(live.core, owner)["openai-compatible"]["tools"] == "no"


def test_console_and_public_pages_send_the_security_headers(live):
    accounts.create_account(live.core, "headers@example.org", plan="starter", verified=True)
    token, _ = auth.mint(live.core, "headers@example.org")
    with httpx.Client(base_url=live.url) as c:
        for path in ("/console/login", "/console", "/console/keys", "/api/v1", "/api/v1/docs",
                     "/api/v1/no-such-route", "/console/static/htmx.min.js"):
            r = c.get(path, headers={"Authorization": f"Bearer {token}"})
            assert r.headers["x-content-type-options"] == "nosniff", path
            assert r.headers["x-frame-options"] == "DENY", path
            assert "frame-ancestors 'none'" in r.headers["content-security-policy"], path
        for path in ("/console/login", "/console/keys"):
            assert c.get(path).headers["cache-control"] == "no-store", path
        assert "no-store" not in c.get("/console/static/htmx.min.js").headers.get("cache-control", "")


def test_the_consoles_scripts_run_under_the_policy(page, live, person):
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    sign_in_by_link(page, live, person)
    page.goto(live.url + "/console/scenarios")
    page.get_by_label("Name").fill("Under the policy")
    expect(page.get_by_test_id("content-hash")).to_be_visible()  # htmx validated as you typed
    for path in ("/console", "/console/keys", "/console/runs/new", "/console/arena", "/console/developer",
                 "/api/v1/docs"):
        page.goto(live.url + path)
        page.wait_for_load_state("networkidle")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Scenario Studio API")
    assert violations == [], violations
    assert page.evaluate("() => typeof htmx") == "undefined"  # the docs page loads no htmx
    page.goto(live.url + "/console/runs/new")
    assert page.evaluate("() => typeof htmx") == "object"
    assert "frame-ancestors 'none'" in CSP


def test_a_csrf_token_of_any_text_is_refused_with_403(live, person):
    """Issue 38 F2: a non-ASCII token made compare_digest raise (a 500); any token that is not the
    session's is csrf_failed, in a header, a form field, or a multipart file field."""
    with httpx.Client(base_url=live.url, follow_redirects=False) as c:
        assert c.get(console_auth.login_link(live.core, person, live.url)).status_code == 303
        assert c.get("/console/keys").status_code == 200  # signed in
        tries = [c.post("/console/runs/run_x/seats/0/actions", content=b'{"tick": 0, "actions": []}',
                        headers={"x-csrf-token": ("é" * 43).encode(), "content-type": "application/json"}),
                 c.post("/console/keys", data={"csrf": "éé", "provider": "openai", "key": "sk-x"}),
                 c.post("/console/keys", data={"provider": "openai", "key": "sk-x"}, files={"csrf": b"x"})]
        login = httpx.post(live.url + "/console/login", data={"csrf": "éé", "email": person, "password": "x"},
                           cookies={"studio_login_csrf": "abc"})
    for r in tries:
        assert r.status_code == 403 and r.json()["error"] == "csrf_failed", r.text
    assert login.status_code == 403 and "reload the page" in login.text  # the form again, with why
