"""One real uvicorn server and one headless Chromium (Debian's, driven by Playwright) per session."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from api.app import create_app
from orchestrator import accounts, console_auth
from orchestrator.core import Core
from tests.api.util import free_port, start_server

CHROMIUM = os.environ.get("STUDIO_CHROMIUM", "/usr/lib/chromium/chromium")
INSTALL_LINE = "apt-get install -y chromium (or `make install` as root)"


@dataclass
class Live:
    url: str
    core: Core  # a second Core on the server's data dir, like the admin CLI


@pytest.fixture(scope="package")
def allowed_provider():
    """A provider double on the loopback, which the live server's operator allows accounts to use."""
    from tests.seats.fake_provider import FakeProvider

    with FakeProvider() as fake:
        yield fake


@pytest.fixture(scope="package")
def live(tmp_path_factory, allowed_provider) -> Live:
    data_dir = tmp_path_factory.mktemp("console") / "data"
    data_dir.mkdir()
    # every browser here signs in from 127.0.0.1; the default ceiling is tested on its own
    (data_dir / "config.toml").write_text("[limits]\nsign_in_per_minute = 1000\n\n"
                                          f'[providers]\nallow_base_urls = ["{allowed_provider.url}/v1"]\n')
    port = free_port()
    server, thread = start_server(create_app(data_dir), port)
    yield Live(url=f"http://127.0.0.1:{port}", core=Core.open(data_dir))
    server.should_exit = True
    thread.join(timeout=10)


# package scope: Playwright's sync API keeps an event loop running on the main thread until it
# stops, which would break every asyncio test collected after the console's
@pytest.fixture(scope="package")
def browser() -> Browser:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"the browser tests need Chromium at {CHROMIUM}: {INSTALL_LINE}", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser) -> Page:
    context = browser.new_context()
    page = context.new_page()
    # a bound for a loaded machine (a form post that launches waits on the service's admission), not a target
    page.set_default_timeout(20_000)
    yield page
    context.close()


_n = iter(range(10**6))


@pytest.fixture
def person(live):
    """A new account on plan starter; returns its email."""
    email = f"person{next(_n)}@example.org"
    accounts.create_account(live.core, email, plan="starter", verified=True)
    return email


# package scope: one playing server (real Ray workers) for every console test that runs matches.
# 20 ms a tick lets a test catch a scripted run while it plays; short runs still end in a second or two.
@pytest.fixture(scope="package")
def playing(tmp_path_factory, ray_pool) -> Live:
    data_dir = tmp_path_factory.mktemp("console-runs") / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text("[limits]\nsign_in_per_minute = 1000\n\n[runs]\nmin_tick_ms = 20\n")
    port = free_port()
    server, thread = start_server(create_app(data_dir, dispatch=True, workers=1), port)
    yield Live(url=f"http://127.0.0.1:{port}", core=Core.open(data_dir))
    server.should_exit = True
    thread.join(timeout=30)


def sign_in_by_link(page: Page, live: Live, email: str) -> None:
    page.goto(console_auth.login_link(live.core, email, live.url))
    page.wait_for_url(f"{live.url}/console")


def open_run_builder(page: Page, live: Live, email: str, season_ticks: str) -> None:
    """Signed in as `email`, on the run builder with the base world and a season length chosen."""
    sign_in_by_link(page, live, email)
    page.goto(live.url + "/console/runs/new")
    assert page.title() == "New run · Scenario Studio"
    page.get_by_label("Scenario").select_option("svc:custom-base-v1")
    page.get_by_label("Season ticks").fill(season_ticks)
