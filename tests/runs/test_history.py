"""Reads that must not slow down as runs pile up: what an account holds, which a launch reads inside its write
transaction (what it counts, and that an index answers it rather than the account's whole history,
whose rows carry each run's results), and a page of one account's runs in one state."""
from __future__ import annotations

import json
import time

from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint, verify
from orchestrator.core import Core
from orchestrator.runs import service
from orchestrator.runs.admission import holdings


def _run(c, account: str, k: int, status: str, finished_at_ms: int | None, reserved: int, settled: int | None,
         launch: str | None = None) -> None:
    c.execute("INSERT INTO runs (id, account_id, launch_id, name, status, scenario_id, scenario_hash, scripted, "
              "effective, roster, turns_reserved, turns_settled, results, created_at_ms, finished_at_ms) "
              "VALUES (?, ?, ?, 'r', ?, 's', 'h', 1, '{}', '[]', ?, ?, ?, 0, ?)",
              (f"run_{account}_{k}", account, launch or f"run_{account}_{k}", status, reserved, settled,
               json.dumps({"padding": "x" * 5000}) if finished_at_ms else None, finished_at_ms))


def _core(tmp_path) -> tuple[Core, str, str]:
    """A data dir with two accounts; their ids (mine, other's)."""
    core = Core.open(tmp_path / "d")
    mine, other = (create_account(core, f"{who}@example.org", plan="lab", verified=True)["id"]
                   for who in ("mine", "other"))
    return core, mine, other


def test_turns_queue_and_history_count_what_they_should(tmp_path):
    core, mine, other = _core(tmp_path)
    now = int(time.time() * 1000)
    last_month = holdings.month_start_ms(now) - 1
    with core.store.write() as c:
        _run(c, mine, 1, "finished", now, 100, 90)
        _run(c, mine, 2, "failed", now, 100, 40)
        _run(c, mine, 3, "cancelled", last_month, 100, 70)   # settled last month: not this month's use
        _run(c, mine, 4, "queued", None, 300, None, launch="bat_1")
        _run(c, mine, 5, "running", None, 300, None, launch="bat_1")  # one series: one queue slot
        _run(c, mine, 6, "launching", None, 50, None)
        _run(c, other, 7, "finished", now, 999, 999)
    c = core.store.conn()
    assert holdings.turns(c, mine, now) == {"used": 130, "held": 650}
    assert holdings.active_launches(c, mine) == 2
    assert holdings.history(c, mine) == 6
    assert holdings.turns(c, other, now) == {"used": 999, "held": 0}


def test_the_holdings_read_an_index_not_the_run_rows(tmp_path):
    """Every statement the holdings read sends is answered from a covering index: reading the rows meant
    reading each run's results on the way to finished_at_ms, for every run the account ever had."""
    core, mine, _ = _core(tmp_path)
    c = core.store.conn()
    now = core.clock.now_ms()
    plans = _plans(c, lambda: (holdings.turns(c, mine, now), holdings.active_launches(c, mine), holdings.history(c, mine)))
    assert len(plans) == 4
    for sql, plan in plans:
        assert "USING COVERING INDEX" in plan and "SCAN runs" not in plan, (sql, plan)


def _plans(c, call) -> list[tuple[str, str]]:
    sent: list[str] = []
    c.set_trace_callback(sent.append)
    try:
        call()
    finally:
        c.set_trace_callback(None)
    return [(sql, " ".join(r[3] for r in c.execute("EXPLAIN QUERY PLAN " + sql).fetchall())) for sql in sent]


def test_a_page_of_runs_in_one_state_reads_only_the_accounts_own(tmp_path):
    """status=finished for an account with a handful of runs must not walk every other account's
    finished runs (the global status index) to find them."""
    core, mine, other = _core(tmp_path)
    with core.store.write() as c:
        for k in range(30):
            _run(c, other, k, "finished", 1, 10, 10)
        for k in range(3):
            _run(c, mine, k, "finished", 1, 10, 10)
    token, _ = mint(core, "mine@example.org", scopes=SCOPES)
    me = verify(core, token)
    page = service.list_runs(core, me, status="finished", limit=2)
    assert [r["run_id"] for r in page["runs"]] == [f"run_{mine}_2", f"run_{mine}_1"] and page["next_cursor"]
    plans = _plans(core.store.conn(), lambda: service.list_runs(core, me, status="finished", limit=2))
    assert len(plans) == 1 and "(account_id=? AND status=?)" in plans[0][1], plans
