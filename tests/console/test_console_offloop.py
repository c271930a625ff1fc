"""The console's builder estimate waits on the router off the event loop (issue 50, F6): its admission asks
the router key's balance (GET {base}/key), and while that answer is slow every other request of the
process (REST, MCP, long-polls) is still answered."""
from __future__ import annotations

import threading
import time

import httpx

from orchestrator import console_auth
from orchestrator.seats import keys
from tests.waiting import until


def test_a_slow_router_balance_during_a_console_estimate_leaves_the_api_answering(live, person, allowed_provider):
    keys.set_key(live.core, provider="router", key="k-slow", email=person, base_url=allowed_provider.url + "/v1")
    allowed_provider.key_info = {"limit_remaining": 0.0}  # too little for the seat: the estimate says so
    allowed_provider.key_gate = gate = threading.Event()
    answers: list[httpx.Response] = []
    try:
        with httpx.Client(base_url=live.url, follow_redirects=False, timeout=60) as c:
            assert c.get(console_auth.login_link(live.core, person, live.url)).status_code == 303
            assert c.get("/api/v1").status_code == 200  # its document built: the probe below times the loop alone
            csrf = console_auth.session(live.core, c.cookies["studio_console"]).csrf
            form = {"csrf": csrf, "scenario_id": "svc:custom-base-v1", "season_ticks": "10",
                    "seat0_model": "openai/gpt-4o", "seat0_provider": "router", "seat1_model": "local/random"}
            posting = threading.Thread(target=lambda: answers.append(c.post("/console/runs/estimate", data=form)))
            posting.start()
            until(lambda: allowed_provider.key_waiting == 1, 30, what="the estimate to ask the router's /key")
            t0 = time.perf_counter()
            probe = httpx.get(live.url + "/api/v1", timeout=30)
            probe_s = time.perf_counter() - t0
            held = allowed_provider.key_waiting == 1
            gate.set()
            posting.join(timeout=60)
    finally:
        allowed_provider.key_gate = None
        gate.set()
    assert probe.status_code == 200
    # answered while the router still held its answer, well inside the balance read's 2 s wait
    assert held and probe_s < 1.0, f"GET /api/v1 took {probe_s:.2f} s while the estimate waited on the router"
    # and the estimate went on to read the balance the router sent, once it came
    assert answers and answers[0].status_code == 200
    assert "estimate-error" in answers[0].text and "balance $0.00" in answers[0].text, answers[0].text
