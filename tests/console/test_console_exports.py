"""The run and series pages' downloads: the owner's Inspect log, read back by inspect_ai; and the
exported file opened in Inspect's own viewer (`inspect view`) in the browser."""
from __future__ import annotations

import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from inspect_ai.log import read_eval_log as _read_eval_log
from playwright.sync_api import expect

from orchestrator import accounts, console_auth
from orchestrator.runs import service as runs_service
from tests.api.util import free_port
from tests.console.conftest import sign_in_by_link
from tests.waiting import until


def _principal(page, live):
    s = console_auth.session(live.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    return console_auth.principal(live.core, s)


@pytest.fixture(scope="module")
def series_file(browser, playing, tmp_path_factory):
    """A two-trial series launched by its owner, and the .eval its series page downloads."""
    email = "exporter@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    page = browser.new_context().new_page()
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    out = runs_service.launch(playing.core, p, {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "trials": 2,
                                                "roster": [{"model": "local/honest-trader"},
                                                           {"model": "local/random"}]})
    batch = out["batch"]
    for run_id in batch["run_ids"]:
        until(lambda: runs_service.get_run(playing.core, p, run_id)["results"], 120, every=0.2,
              what="the trial's results")
    page.goto(f"{playing.url}/console/batches/{batch['batch_id']}")
    with page.expect_download() as got:
        page.get_by_test_id("export-inspect").click()
    path = tmp_path_factory.mktemp("exports") / got.value.suggested_filename
    got.value.save_as(path)
    yield p, batch, path, page
    page.context.close()


def read_eval_log(path: str):
    """inspect_ai's reader on a thread of its own: called where Playwright's sync API runs its loop,
    it patches asyncio for the whole process (nest_asyncio2), and a later test's chess engine hung."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_read_eval_log, path).result()


def test_the_series_and_run_pages_download_the_owners_inspect_log(page, playing, series_file):
    p, batch, path, owner = series_file
    assert path.name == f"{batch['batch_id']}.eval"
    log = read_eval_log(str(path))
    assert sorted((s.id, s.epoch) for s in log.samples) == [("seat-0", 1), ("seat-0", 2), ("seat-1", 1), ("seat-1", 2)]
    run_id = batch["run_ids"][1]
    results = runs_service.get_run(playing.core, p, run_id)["results"]
    owner.goto(f"{playing.url}/console/runs/{run_id}")
    with owner.expect_download() as got:
        owner.get_by_test_id("export-inspect").click()
    got.value.save_as(path.parent / "run.eval")
    one = read_eval_log(str(path.parent / "run.eval"))
    assert {s.id: s.scores["fitness_index"].value for s in one.samples} == \
        {f"seat-{a['seat']}": a["fitness_index"] for a in results["agents"]}
    # another account's browser gets the console's 404 page, not the file
    accounts.create_account(playing.core, "nosy@example.org", plan="lab", verified=True)
    sign_in_by_link(page, playing, "nosy@example.org")
    r = page.request.get(f"{playing.url}/console/runs/{run_id}/export?format=inspect")
    assert r.status == 404 and "There is no run" in r.text()


def test_inspect_view_opens_an_exported_series(page, series_file):
    _, batch, path, _ = series_file
    port = free_port()
    viewer = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(path.parent),
                               "--port", str(port), "--host", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until(lambda: _listening(port), 60, every=0.2, what="inspect view's port")
        page.goto(f"http://127.0.0.1:{port}/#/tasks/{path.name}")
        expect(page.get_by_text("fitness_index").first).to_be_visible(timeout=30_000)
        expect(page.get_by_text("seat-0", exact=True).first).to_be_visible()
        expect(page.get_by_text("4 Samples")).to_be_visible()  # two seats, two epochs
    finally:
        viewer.terminate()
        viewer.wait(timeout=20)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
