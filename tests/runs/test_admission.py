"""Every launch refusal through both estimate and launch, with the same code and message; the
estimate's numbers; atomic reservations under concurrent launches."""
import threading

import pytest

from analytics.choice import method_for
from analytics.precision import SINGLE_RUN, precision_half_width
from orchestrator.errors import DomainError
from orchestrator.grading import cost as grading_cost
from orchestrator.grading.cost import DECISIONS_PER_CPU_S
from orchestrator.accounts import set_account
from tests.runs.conftest import ALL_SCOPES, CONFIG, account, local_body, start

# A tight plan for the ceilings: starter with a small month and a short history.
TIGHT = """
[plans.lab]
requests_per_minute = 1000000
[plans.starter]
requests_per_minute = 1000000
agent_turns_per_month = 1000
queued_runs = 2
graded_decisions_per_launch = 1000
[limits]
refused_per_address_per_minute = 1000000
run_history = 12
"""


@pytest.fixture(scope="module")
def idle(tmp_path_factory):
    s = start(tmp_path_factory.mktemp("adm") / "data", TIGHT, dispatch=False)
    yield s
    s.stop()


def both(c, body):
    """Estimate then launch the same body; the refusal must be the same on both."""
    e = c.post("/api/v1/runs/estimate", json=body)
    l_ = c.post("/api/v1/runs", json=body)
    assert (e.status_code, e.json()) == (l_.status_code, l_.json()), (e.json(), l_.json())
    return e.status_code, e.json()


SEAT = {"model": "local/random"}
CASES = [
    ("bad_scenario", {"scenario_id": "svc:nope"}),
    ("bad_scenario", {"scenario_id": "usc_000000000000000000000000"}),
    ("bad_roster", {"roster": []}),
    ("bad_roster", {"roster": [{"name": "no model"}]}),
    ("bad_roster", {"roster": [{"model": "local/random", "skills": ["builtin:trader"] * 5}]}),
    ("bad_roster", {"roster": [{"model": "local/random", "instructions": "x" * 4001}]}),
    ("bad_roster", {"roster": [{"model": "local/flying-monk"}]}),
    ("bad_provider", {"roster": [{"model": "m", "provider": "carrier-pigeon"}]}),
    # no key of the account's and no platform key for the provider (a sponsor's model list read as absent)
    ("router_key_required", {"roster": [{"model": "openai/gpt-x"}, SEAT]}),
    ("provider_key_required", {"roster": [{"model": "gpt-x", "provider": "openai"}, SEAT]}),
    ("unknown_skill", {"roster": [SEAT, {"model": "local/random", "skills": ["usk_nope"]}]}),
    ("bad_trials", {"trials": 0}),
    ("bad_trials", {"trials": 1.5}),
    ("bad_trials", {"trials": "2"}),
    ("bad_spend_cap", {"max_spend_usd": "5"}),
    ("bad_spend_cap", {"max_spend_usd": -1}),
    ("bad_season_ticks", {"season_ticks": 2001}),
    ("bad_env", {"env": {"actions_per_turn": 6}}),
    ("bad_request", {"name": "x" * 81}),
    ("bad_request", {"colour": "red"}),
    ("plan_seats", {"roster": [SEAT] * 7}),
    ("plan_ticks", {"season_ticks": 601}),
    ("plan_series", {"trials": 5}),
    ("seed_not_allowed", {"trials": 2, "env": {"spawn_seed": 4}}),
    ("seed_not_allowed", {"trials": 2, "seed_mode": "pinned", "env": {"seed": 4}}),
    ("seed_not_allowed", {"scenario_id": "svc:long-winter", "env": {"seed": 4}}),
]


@pytest.mark.parametrize("code,over", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_refusals_match_between_estimate_and_launch(idle, code, over):
    with idle.client(account(idle.core, plan="starter")) as c:
        status, body = both(c, local_body(**over))
        assert body["error"] == code, body
        assert status == (404 if code == "unknown_skill" else 400)
        assert body["message"]


def test_unknown_skill_message_names_the_seat(idle):
    with idle.client(account(idle.core, plan="starter")) as c:
        _, body = both(c, local_body(roster=[SEAT, {"model": "local/random", "skills": ["usk_nope"]}]))
        assert "roster[1]" in body["message"] and "usk_nope" in body["message"]


def test_scope_and_plan_refusals(idle):
    read_only = account(idle.core, plan="starter", scopes=("runs:read",))
    with idle.client(read_only) as c:
        assert c.post("/api/v1/runs/estimate", json=local_body()).status_code == 200
        r = c.post("/api/v1/runs", json=local_body())
        assert (r.status_code, r.json()["error"]) == (403, "scope_required")
    no_runs = account(idle.core, plan="starter", scopes=("scenarios:read",))
    with idle.client(no_runs) as c:
        assert c.post("/api/v1/runs/estimate", json=local_body()).json()["error"] == "scope_required"
        assert c.get("/api/v1/runs").json()["error"] == "scope_required"
    free = account(idle.core, plan="free", scopes=ALL_SCOPES[:3] + ("runs:write",))
    with idle.client(free) as c:
        assert c.post("/api/v1/runs/estimate", json=local_body()).status_code == 200  # free may estimate
        r = c.post("/api/v1/runs", json=local_body())
        assert (r.status_code, r.json()["error"]) == (403, "plan_api")


def test_billing_frozen(idle):
    token = account(idle.core, plan="starter")
    email = idle.core.store.one("SELECT a.email FROM accounts a JOIN tokens t ON t.account_id = a.id "
                                "WHERE t.prefix = ?", (token[:12],))["email"]
    set_account(idle.core, email, frozen=True)
    with idle.client(token) as c:
        assert both(c, local_body())[1]["error"] == "billing_frozen"


def test_queue_quota_and_history_ceilings(idle):
    with idle.client(account(idle.core, plan="starter")) as c:
        body = local_body(season_ticks=200)  # 2 seats x 200 ticks = 400 turns of the month's 1000
        assert c.post("/api/v1/runs", json=body).status_code == 201
        e = c.post("/api/v1/runs/estimate", json=body).json()["batch"]
        assert e["queue"] == {"queued": 1, "limit": 2, "headroom": 1}
        assert e["quota"] == {"agent_turns_remaining": 600, "after_launch": 200}
        assert c.post("/api/v1/runs", json=body).status_code == 201
        assert both(c, local_body(season_ticks=10))[1]["error"] == "too_many_runs"
    with idle.client(account(idle.core, plan="starter")) as c:
        assert both(c, local_body(season_ticks=300, trials=2))[1]["error"] == "plan_quota"  # 1200 > 1000
    with idle.client(account(idle.core, plan="lab")) as c:
        for _ in range(3):
            c.post("/api/v1/runs", json=local_body(trials=4, season_ticks=10))
        assert both(c, local_body(season_ticks=10, trials=2))[1]["error"] == "run_history_full"


def test_estimate_reports_the_launch(idle):
    with idle.client(account(idle.core, plan="lab")) as c:
        e = c.post("/api/v1/runs/estimate", json=local_body(trials=10, season_ticks=100, max_spend_usd=1e9)).json()
        b = e["batch"]
        assert b["trials"] == 10 and b["agent_turns"] == 2 * 100 * 10
        assert b["usd"] == {"low": 0.0, "high": 0.0} and b["spend_cap_usd"] == 2500.0
        assert [s["funding"] for s in b["seats"]] == ["free", "free"]
        assert b["quota"]["agent_turns_remaining"] is None
        assert b["precision"]["reference_sd"] == 10.0
        # the mean half-width of the summary's own fitness interval at 10 trials, at the reference spread
        figure = precision_half_width(10, 10.0, metric="fitness_index")
        assert b["precision"]["half_width_95"] == pytest.approx(figure.half_width, abs=1e-4)
        assert b["precision"]["method"] == method_for("fitness_index", 10) == figure.method
        assert b["precision"]["single_run_half_width_95"] == pytest.approx(19.5996, abs=1e-3)
        assert b["wall_clock_ms"]["low"] <= b["wall_clock_ms"]["high"]
        low = c.post("/api/v1/runs/estimate", json=local_body(max_spend_usd=0)).json()["batch"]
        assert low["spend_cap_usd"] == 0.05  # clamped into the plan's range
        # one run: no interval, and the method says so; more trials narrow it
        assert low["precision"]["half_width_95"] is None and low["precision"]["method"] == SINGLE_RUN
        widths = [c.post("/api/v1/runs/estimate", json=local_body(trials=n, season_ticks=10)).json()["batch"]
                  ["precision"]["half_width_95"] for n in (2, 4, 10)]
        assert widths[0] > widths[1] > widths[2]


def test_the_estimate_costs_the_grading_a_launch_asks_for(idle):
    with idle.client(account(idle.core, plan="lab")) as c:
        b = c.post("/api/v1/runs/estimate", json=local_body(trials=10, season_ticks=100, grading="all")).json()["batch"]
        cpu_s = 2 * 100 * 10 / DECISIONS_PER_CPU_S
        assert b["grading"]["decisions"] == 2000 and b["grading"]["cpu_s"] == round(cpu_s, 1)
        # no dispatcher here: one slot, so the whole CPU time is the wall clock at both ends
        assert b["grading"]["wall_clock_ms"] == {"low": -(-1000 * cpu_s // 1), "high": -(-1000 * cpu_s // 1)}
        for mode in ("auto", "off"):  # two local seats: auto grades none of them
            assert c.post("/api/v1/runs/estimate", json=local_body(grading=mode)).json()["batch"]["grading"] is None


def test_the_plan_caps_the_decisions_a_launch_may_grade(idle):
    with idle.client(account(idle.core, plan="starter")) as c:
        status, body = both(c, local_body(grading="all", season_ticks=501))  # 1002 decisions, the cap 1000
        assert (status, body["error"]) == (400, "bad_request")
        assert "1002" in body["message"] and "at most 1000" in body["message"] and "grading" in body["message"]
        ok = c.post("/api/v1/runs/estimate", json=local_body(grading="all", season_ticks=500)).json()
        assert ok["batch"]["grading"]["decisions"] == 1000
        # off asks for no grading: what refuses it then is the month's agent turns (1002 of 1000), checked later
        off = c.post("/api/v1/runs/estimate", json=local_body(grading="off", season_ticks=501)).json()
        assert off["error"] == "plan_quota"
        # grading left out is section 14's default (every agent decision graded): never refused for it
        plan = {"name": "Starter", "graded_decisions_per_launch": 1000}
        grading_cost.check(plan, 1002, None)
        for mode in ("auto", "all"):
            with pytest.raises(DomainError):
                grading_cost.check(plan, 1002, mode)


def test_fifty_concurrent_launches_never_overflow(idle):
    token = account(idle.core, plan="starter")  # queue of 2, 1000 turns a month
    results = []

    def go():
        with idle.client(token) as c:
            r = c.post("/api/v1/runs", json=local_body(season_ticks=100))  # 200 turns each
            results.append((r.status_code, r.json().get("error")))

    threads = [threading.Thread(target=go) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for s, _ in results if s == 201) == 2
    assert {e for s, e in results if s != 201} == {"too_many_runs"}
    acct = idle.core.store.one("SELECT account_id FROM tokens WHERE prefix = ?", (token[:12],))["account_id"]
    held = idle.core.store.one("SELECT SUM(turns_reserved) s, COUNT(*) n FROM runs WHERE account_id = ?", (acct,))
    assert held["n"] == 2 and held["s"] == 400


def test_fifty_concurrent_launches_never_exceed_the_allowance(tmp_path):
    s = start(tmp_path / "data", CONFIG + "\n[plans.pro]\nqueued_runs = 100\nagent_turns_per_month = 2100\n"
              "requests_per_minute = 1000000\n", dispatch=False)
    try:
        token = account(s.core, plan="pro")
        codes = []

        def go():
            with s.client(token) as c:
                r = c.post("/api/v1/runs", json=local_body(season_ticks=100))
                codes.append(r.json().get("error", "ok"))

        threads = [threading.Thread(target=go) for _ in range(50)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert codes.count("ok") == 10 and codes.count("plan_quota") == 40
    finally:
        s.stop()


def test_four_full_skills_fit_the_directions_limit(idle):
    token = account(idle.core, plan="starter")
    with idle.client(token) as c:
        ids = [c.post("/api/v1/skills", json={"name": f"s{k}", "text": "x" * 2000}).json()["skill"]["id"]
               for k in range(4)]
        seat = {"model": "local/random", "skills": ids}
        assert c.post("/api/v1/runs/estimate", json=local_body(roster=[seat])).status_code == 200
        over = dict(seat, instructions="y")
        assert both(c, local_body(roster=[over]))[1]["error"] == "bad_roster"


def test_local_seat_scaffold_carries_its_directions_tag(idle):
    with idle.client(account(idle.core, plan="starter")) as c:
        plain = c.post("/api/v1/runs", json=local_body()).json()["run"]["roster"][0]["scaffold"]
        c.post(f"/api/v1/runs/{c.get('/api/v1/runs').json()['runs'][0]['run_id']}/cancel")
        told = c.post("/api/v1/runs", json=local_body(roster=[{"model": "local/random", "instructions": "Hoard."}]))
        assert plain == "local-policy-v1" and told.json()["run"]["roster"][0]["scaffold"].startswith(
            "local-policy-v1+custom.")


@pytest.mark.parametrize("query", ["limit=%C2%B2", "cursor=%C2%B2", "limit=abc"])
def test_odd_list_queries_are_bad_requests(idle, query):
    with idle.client(account(idle.core)) as c:
        r = c.get(f"/api/v1/runs?{query}")
        assert (r.status_code, r.json()["error"]) == (400, "bad_request")


def test_deeply_nested_body_is_a_bad_request(idle):
    with idle.client(account(idle.core)) as c:
        r = c.post("/api/v1/runs/estimate", content=b"[" * 40000, headers={"content-type": "application/json"})
        assert (r.status_code, r.json()["error"]) == (400, "bad_request")


def test_roster_refusals_say_the_plan_and_speak_json(idle):
    with idle.client(account(idle.core, plan="starter")) as c:
        status, body = both(c, local_body(roster=[SEAT] * 100))
        assert body == {"error": "plan_seats", "message": "the roster has 100 seats; the Starter plan allows at most "
                                                          "6 per run"}
        _, body = both(c, local_body(roster=[]))
        assert body["error"] == "bad_roster" and body["message"].startswith("roster: should hold at least 1 item;")
        _, body = both(c, local_body(season_ticks=5))
        assert body["message"].startswith("season_ticks: should be at least 10;")
        _, body = both(c, local_body(roster=[{"model": "local/random", "reasoning": "max"}]))
        assert body["message"].startswith("roster[0].reasoning: should be one of off, low, medium or high;")
        for message in (b["message"] for _, b in (both(c, local_body(roster=[{"model": ""}])),
                                                  both(c, local_body(name=7)))):
            assert not any(p in message for p in ("Input should", "after validation", "valid string", "String should"))


def test_directions_on_a_local_seat_are_reported_as_ignored(idle):
    with idle.client(account(idle.core, plan="starter")) as c:
        est = c.post("/api/v1/runs", json=local_body(roster=[{"model": "local/random", "instructions": "Hoard."},
                                                             SEAT])).json()["run"]["roster"]
        c.post(f"/api/v1/runs/{c.get('/api/v1/runs').json()['runs'][0]['run_id']}/cancel")
    assert "ignored" in est[0]["note"] and "note" not in est[1]
