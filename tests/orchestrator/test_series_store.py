"""The series repository (orchestrator/store/series.py) and its records: a series' target parsed once
into a typed record, values an earlier version stored as infinite read as none, the kept summary; on
SQLite and on PostgreSQL."""
from __future__ import annotations

import pydantic
import pytest

from orchestrator.records.series import Series, Until
from orchestrator.store import Store, series



def _series_row(store: Store, batch_id: str = "bat_1", **columns) -> None:
    with store.write() as c:
        c.execute("INSERT INTO accounts (id, email, handle, plan, created_at_ms) "
                  "VALUES ('acc', 'e@x', 'h', 'lab', 0) ON CONFLICT DO NOTHING")
        c.execute("INSERT INTO batches (id, account_id, trials, seed_mode, batch_seed, created_at_ms) "
                  "VALUES (?, 'acc', 8, 'fixed', 7, 1)", (batch_id,))
        for k, v in columns.items():
            c.execute(f"UPDATE batches SET {k} = ? WHERE id = ?", (v, batch_id))


def test_a_series_round_trips_with_its_target_typed(store):
    _series_row(store)
    with store.write() as c:
        series.record_stopping(c, "bat_1", Until(half_width=2, metric="fitness_index", seat=None), 1.5, 0.25, True)
        series.set_cs(c, "bat_1", {"0": {"low": 40.0, "high": 60.0, "half_width": 10.0, "method": "betting"}})
        series.set_stopped(c, "bat_1", "precise")
        series.set_stopped(c, "bat_1", "budget")  # the first reason stays
    got = series.get(store.conn(), "bat_1")
    assert isinstance(got, Series) and got.until == Until(half_width=2, metric="fitness_index")
    assert got.until.model_dump() == {"half_width": 2, "metric": "fitness_index", "seat": None}
    assert (got.budget_usd, got.min_cap_usd, got.stopped, got.cs["0"].half_width) == (1.5, 0.25, "precise", 10.0)
    assert series.get(store.conn(), "bat_1", "someone_else") is None
    assert series.controlled(store.conn(), ["bat_1"]) and not series.controlled(store.conn(), [])


def test_values_stored_as_infinite_read_as_none(store):
    _series_row(store, budget_usd=float("inf"), until='{"half_width": 1, "metric": "fitness_index", "seat": 0}',
                cs='{"0": {"low": 1.0, "high": Infinity, "half_width": NaN, "method": "betting"}}')
    got = series.get(store.conn(), "bat_1")
    assert got.budget_usd is None and got.cs["0"].high is None and got.cs["0"].low == 1.0
    assert series.budgeted(store.conn(), ["bat_1"]) == {}  # an infinite budget never runs out


def test_records_refuse_what_the_store_cannot_hold():
    base = dict(id="bat_1", account_id="acc", trials=2, seed_mode="fixed", batch_seed=1, created_at_ms=0)
    with pytest.raises(pydantic.ValidationError):
        Series(**base, budget_usd=float("inf"))
    with pytest.raises(pydantic.ValidationError):
        Series(**base, stopped="bored")
    with pytest.raises(pydantic.ValidationError):
        Until(half_width=0, metric="fitness_index")
    with pytest.raises(pydantic.ValidationError):
        Until(half_width=float("nan"), metric="fitness_index")


def test_a_kept_summary_is_never_replaced_by_one_over_fewer_matches(store):
    _series_row(store)
    assert series.kept_summary(store.conn(), "bat_1") is None
    with store.write() as c:
        series.keep_summary(c, "bat_1", "v2", 2, '{"matches": 2}', 10)
        series.keep_summary(c, "bat_1", "v1", 1, '{"matches": 1}', 11)
    got = series.kept_summary(store.conn(), "bat_1")
    assert (got.version, got.summary, got.text) == ("v2", {"matches": 2}, '{"matches": 2}')
    assert series.summary_version(store.conn(), "bat_1") == "v2"
