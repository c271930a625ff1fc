"""Issue 50: a store an earlier version wrote with numbers JSON cannot carry (Infinity in a run's spend,
its roster's usage, a turn row, a series' budget, the data dir's price table) is read, not refused:
every account and run view answers 200 through a real server, showing null with a note, REST and MCP
alike; `studio doctor` lists them and `--repair` rewrites them. Values are written straight into the
store, as the earlier version left them."""
import json

import anyio
import pytest

from api.cli import main
from orchestrator.seats.prices import PriceTable
from orchestrator.seats.turn import TurnRecord
from tests.mcp.conftest import call, connect
from tests.runs.conftest import account, local_body, start, wait_terminal

INF = float("inf")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = start(tmp_path_factory.mktemp("stored-numbers") / "data")
    yield s
    s.stop()


def poison(core, run_id: str, batch_id: str) -> None:
    row = core.store.one("SELECT roster FROM runs WHERE id = ?", (run_id,))
    roster = json.loads(row["roster"])
    roster[0]["usage"]["usd"] = INF
    turn = TurnRecord(tick=0, seat=0, reply="{}", latency_ms=INF,
                      actions=json.dumps([{"action": "move", "direction": "north", "steps": INF}])).row()
    with core.store.write() as c:
        c.execute("UPDATE runs SET spend_usd = ?, roster = ? WHERE id = ?", (INF, json.dumps(roster), run_id))
        c.execute("UPDATE batches SET budget_usd = ? WHERE id = ?", (INF, batch_id))
        c.execute("INSERT INTO run_turns (run_id, tick, seat, n, turn, play) VALUES (?, 0, 0, 0, ?, '[]')",
                  (run_id, json.dumps(turn)))
    (core.data_dir / "prices.json").write_text(json.dumps(
        {"as_of": "2026-12-01", "source": "http://router/models", "models": {"vendor/poisoned": [INF, 1.0]}}))


def reads(server, token: str, run_id: str, batch_id: str) -> dict:
    """Every view of the account and the run through REST, each 200; MCP's run and transcript equal REST's."""
    out = {}
    with server.client(token) as c:
        for path in ("/api/v1/me", "/api/v1/runs", "/api/v1/usage", f"/api/v1/runs/{run_id}",
                     f"/api/v1/runs/{run_id}/transcript", f"/api/v1/batches/{batch_id}",
                     f"/api/v1/runs/{run_id}/export?format=inspect", f"/api/v1/batches/{batch_id}/export"):
            r = c.get(path)
            assert r.status_code == 200, (path, r.text[:300])
            out[path.split("?")[0].replace(run_id, "RUN").replace(batch_id, "BATCH")] = \
                r.json() if "export" not in path else None
    # the table's poisoned row is passed over: the fallback prices that model, finite
    assert PriceTable.for_data_dir(server.data_dir).lookup("router", "vendor/poisoned")[2] == "fallback"

    async def over_mcp():
        async with connect(server, token) as client:
            return (await call(client, "get_run", {"id": run_id}),
                    await call(client, "get_transcript", {"id": run_id}), await call(client, "get_usage"))
    (e1, run), (e2, transcript), (e3, usage) = anyio.run(over_mcp)
    assert not (e1 or e2 or e3)
    assert run == out["/api/v1/runs/RUN"] and transcript == out["/api/v1/runs/RUN/transcript"]
    assert usage == out["/api/v1/usage"]
    return out


def _printed(capsys) -> dict:
    """The command's JSON object: Ray's driver may print a warning of its own on the same stdout first."""
    out = capsys.readouterr().out
    return json.loads(out[out.index("{\n"):] if not out.startswith("{") else out)


def test_stored_infinity_reads_as_null_with_a_note_and_doctor_repairs_it(server, capsys):
    token = account(server.core)
    with server.client(token) as c:
        batch = c.post("/api/v1/runs", json=local_body(season_ticks=20, trials=2)).json()["batch"]
        for rid in batch["run_ids"]:
            wait_terminal(c, rid, timeout=240)
    run_id, batch_id = batch["run_ids"][0], batch["batch_id"]
    poison(server.core, run_id, batch_id)

    seen = reads(server, token, run_id, batch_id)
    run = seen["/api/v1/runs/RUN"]["run"]
    assert run["spend"]["usd"] is None and run["roster"][0]["usage"]["usd"] is None
    assert "roster[0].usage.usd" in run["note"] and "spend.usd" in run["note"] and "studio doctor" in run["note"]
    listed = {r["run_id"]: r for r in seen["/api/v1/runs"]["runs"]}
    assert listed[run_id]["spend"]["usd"] is None and "note" in listed[run_id]
    noted = [r for m in seen["/api/v1/usage"]["months"] for r in m["runs"] if r["run_id"] == run_id]
    assert "note" in noted[0]
    turn = seen["/api/v1/runs/RUN/transcript"]["turns"][0]
    assert turn["actions"][0]["steps"] is None and turn["latency_ms"] is None and "actions[0].steps" in turn["note"]

    data_dir = str(server.data_dir)
    assert main(["doctor", "--data-dir", data_dir]) == 1
    found = _printed(capsys)["found"]
    assert {f["what"] for f in found} >= {"spend_usd", "roster [0].usage.usd", "budget_usd", "models.vendor/poisoned"}
    assert main(["doctor", "--data-dir", data_dir, "--repair"]) == 0
    assert _printed(capsys)["repaired"] is True
    assert main(["doctor", "--data-dir", data_dir]) == 0
    assert _printed(capsys)["found"] == []

    seen = reads(server, token, run_id, batch_id)
    run = seen["/api/v1/runs/RUN"]["run"]
    assert "note" not in run and run["spend"]["usd"] == run["roster"][0]["usage"]["usd"] == 0
    assert "note" not in seen["/api/v1/runs/RUN/transcript"]["turns"][0]
