"""The Recorder's grouped writes (orchestrator.runs.head.recorder): many runs' turns in one transaction, each
call answered only once its rows are committed, and one entry the store refuses failing alone."""
import asyncio
import json

import pytest

from orchestrator.runs.head import recorder
from orchestrator.seats import keys
from orchestrator.runs import lifecycle, service


def _playing_runs(core, principal, n: int) -> list[str]:
    """n model runs of one series, claimed as a dispatcher claims them (launching)."""
    p, email, _ = principal()
    keys.set_key(core, provider="router", key="k-router", email=email, base_url="https://openrouter.ai/api/v1")
    service.launch(core, p, {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "trials": n,
                                   "roster": [{"model": "openai/gpt-4o-mini"}]})
    with core.store.write() as c:
        rows = lifecycle.claim(c, False, n)
    assert len(rows) == n
    return [r.id for r in rows]


def _turn(run_id: str, tick: int) -> tuple:
    row = {"tick": tick, "seat": 0, "reply": "wait", "actions": "[]", "refused": [], "latency_ms": 1.0,
           "input_tokens": 10, "output_tokens": 2, "error": None, "refusal": None, "truncated": False}
    report = {"usage": {"agent_turns": tick + 1, "input_tokens": 10, "output_tokens": 2, "usd": 0.001 * (tick + 1)},
              "turns": {"answered": tick + 1, "invalid": 0, "timed_out": 0, "provider_errors": 0, "retries": 0}}
    return run_id, tick, 0, row, [], None, report


def test_many_runs_turns_share_transactions_and_each_is_committed_when_answered(core, principal, monkeypatch):
    runs = _playing_runs(core, principal, 40)
    transactions = []
    real = recorder.record_many

    def counted(core_, entries):
        transactions.append(len(entries))
        return real(core_, entries)
    monkeypatch.setattr(recorder, "record_many", counted)
    rec = recorder.Recorder(str(core.data_dir))
    seen = []

    async def one(run_id: str, tick: int):
        assert await rec.turn(*_turn(run_id, tick)) is True
        # committed by the time the call returns: another connection reads it
        row = core.store.one("SELECT COUNT(*) n FROM run_turns WHERE run_id = ? AND tick = ?", (run_id, tick))
        seen.append(row["n"])

    async def go():
        for tick in range(3):
            await asyncio.gather(*(one(r, tick) for r in runs))
    asyncio.run(go())
    assert seen == [1] * (40 * 3)
    assert sum(transactions) == 40 * 3 and len(transactions) <= 3 * 3  # not one transaction per turn
    roster = json.loads(core.store.one("SELECT roster FROM runs WHERE id = ?", (runs[0],))["roster"])
    assert roster[0]["turns"]["answered"] == 3 and roster[0]["usage"]["agent_turns"] == 3


def test_an_entry_the_store_refuses_fails_alone(core, principal):
    runs = _playing_runs(core, principal, 3)
    bad = list(_turn(runs[1], 0))
    bad[2] = 5  # no seat 5 in a one-seat roster: that write raises
    out = recorder.record_many(core, [("turn", _turn(runs[0], 0)), ("turn", tuple(bad)),
                                      ("report", (runs[2], 1, {0: _turn(runs[2], 0)[-1]}))])
    assert out[0] is True and isinstance(out[1], IndexError) and out[2] is True
    assert core.store.one("SELECT COUNT(*) n FROM run_turns WHERE run_id = ?", (runs[0],))["n"] == 1
    assert core.store.one("SELECT COUNT(*) n FROM run_turns WHERE run_id = ?", (runs[1],))["n"] == 0


def test_a_superseded_dispatchers_writes_are_refused_and_the_counts_stay_exact(core, principal):
    """Head A hands a model run over and loses the lease (paused past it); head B takes it and replays
    the run from what was recorded. A's worker, still playing, writes on: refused, in the same
    transaction as B's that land, so the run holds exactly the turns of one play."""
    from orchestrator.clock import ManualClock
    from orchestrator.runs.head.lease import Lease
    from orchestrator.seats.recording import Stale

    run = _playing_runs(core, principal, 1)[0]
    clock = ManualClock(1_000_000)
    a, b = Lease(core.store, clock, "head-a", ttl_s=6), Lease(core.store, clock, "head-b", ttl_s=6)
    assert a.take(fresh=True)
    old = a.tenure
    assert recorder.record_many(core, [("turn", _turn(run, 0), old), ("turn", _turn(run, 1), old)]) == [True, True]
    clock.advance(6_001)
    assert b.take(fresh=True)
    new = b.tenure
    assert [t["tick"] for t in recorder.replay(core, run)["turns"]] == [0, 1]  # what B replays
    out = recorder.record_many(core, [("turn", _turn(run, 2), old), ("turn", _turn(run, 2), new),
                                      ("report", (run, 3, {0: _turn(run, 2)[-1]}), old)])
    assert isinstance(out[0], Stale) and out[1] is True and isinstance(out[2], Stale)
    # the actor's own calls answer a stale write with the error the play code stops on
    rec = recorder.Recorder(str(core.data_dir))
    with pytest.raises(Stale):
        asyncio.run(rec.turn(*_turn(run, 3), tenure=old))
    assert asyncio.run(rec.turn(*_turn(run, 3), tenure=new)) is True
    ticks = [r["tick"] for r in core.store.all("SELECT tick FROM run_turns WHERE run_id = ? ORDER BY tick", (run,))]
    assert ticks == [0, 1, 2, 3]  # none twice, none lost
    roster = json.loads(core.store.one("SELECT roster FROM runs WHERE id = ?", (run,))["roster"])
    assert roster[0]["usage"]["agent_turns"] == 4 and roster[0]["turns"]["answered"] == 4
    b.release()  # nobody holds it: a write stamped with any tenure is refused
    assert isinstance(recorder.record_many(core, [("turn", _turn(run, 4), new)])[0], Stale)
