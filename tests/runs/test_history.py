"""Reads that must not slow down as runs pile up: the ledger a launch reads inside its write
transaction (what it counts, and that an index answers it rather than the account's whole history,
whose rows carry each run's results), and a page of one account's runs in one state."""
from __future__ import annotations

import json
import time

from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint, verify
from orchestrator.core import Core
from orchestrator.runs import ledger, service
from orchestrator.store import Store


def _run(c, k: int, status: str, finished_at_ms: int | None, reserved: int, settled: int | None,
         account: str = "acc_1", launch: str | None = None) -> None:
    c.execute("INSERT INTO runs (id, account_id, launch_id, name, status, scenario_id, scenario_hash, scripted, "
              "effective, roster, turns_reserved, turns_settled, results, created_at_ms, finished_at_ms) "
              "VALUES (?, ?, ?, 'r', ?, 's', 'h', 1, '{}', '[]', ?, ?, ?, 0, ?)",
              (f"run_{account}_{k}", account, launch or f"run_{account}_{k}", status, reserved, settled,
               json.dumps({"padding": "x" * 5000}) if finished_at_ms else None, finished_at_ms))


def _store(tmp_path) -> Store:
    store = Store(tmp_path / "d")
    with store.write() as c:
        for acc in ("acc_1", "acc_2"):
            c.execute("INSERT INTO accounts (id, email, handle, plan, created_at_ms) VALUES (?, ?, ?, 'lab', 0)",
                      (acc, f"{acc}@example.org", acc))
    return store


def test_turns_queue_and_history_count_what_they_should(tmp_path):
    store = _store(tmp_path)
    now = int(time.time() * 1000)
    last_month = ledger.month_start_ms(now) - 1
    with store.write() as c:
        _run(c, 1, "finished", now, 100, 90)
        _run(c, 2, "failed", now, 100, 40)
        _run(c, 3, "cancelled", last_month, 100, 70)   # settled last month: not this month's use
        _run(c, 4, "queued", None, 300, None, launch="bat_1")
        _run(c, 5, "running", None, 300, None, launch="bat_1")  # one series: one queue slot
        _run(c, 6, "launching", None, 50, None)
        _run(c, 7, "finished", now, 999, 999, account="acc_2")
    c = store.conn()
    assert ledger.turns(c, "acc_1") == {"used": 130, "held": 650}
    assert ledger.active_launches(c, "acc_1") == 2
    assert ledger.history(c, "acc_1") == 6
    assert ledger.turns(c, "acc_2") == {"used": 999, "held": 0}


def test_the_ledger_reads_an_index_not_the_run_rows(tmp_path):
    """Every statement the ledger sends is answered from a covering index: reading the rows meant
    reading each run's results on the way to finished_at_ms, for every run the account ever had."""
    store = _store(tmp_path)
    c = store.conn()
    plans = _plans(c, lambda: (ledger.turns(c, "acc_1"), ledger.active_launches(c, "acc_1"),
                               ledger.history(c, "acc_1")))
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
    core = Core.open(tmp_path / "d")
    for email in ("mine@example.org", "other@example.org"):
        create_account(core, email, plan="lab", verified=True)
    ids = {r["email"]: r["id"] for r in core.store.all("SELECT id, email FROM accounts")}
    with core.store.write() as c:
        for k in range(30):
            _run(c, k, "finished", 1, 10, 10, account=ids["other@example.org"])
        for k in range(3):
            _run(c, k, "finished", 1, 10, 10, account=ids["mine@example.org"])
    token, _ = mint(core, "mine@example.org", scopes=SCOPES)
    me = verify(core, token)
    page = service.list_runs(core, me, status="finished", limit=2)
    mine = ids["mine@example.org"]
    assert [r["run_id"] for r in page["runs"]] == [f"run_{mine}_2", f"run_{mine}_1"] and page["next_cursor"]
    plans = _plans(core.store.conn(), lambda: service.list_runs(core, me, status="finished", limit=2))
    assert len(plans) == 1 and "(account_id=? AND status=?)" in plans[0][1], plans
