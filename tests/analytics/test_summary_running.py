"""The summary kept as a series' matches land (analytics.summary_running) against the full
recomputation over the same rows (analytics.summary.summarize of table_rows): the same JSON text,
every interval to the last bit, at every size the interval methods change at, whatever order the
matches land in, with graded seats, seats without a dimension and ranks left out."""
from __future__ import annotations

import json
import random

import pyarrow as pa

from analytics.archive.format import SEAT_SCHEMA
from analytics.data import DIMENSIONS
from analytics.summary import SUMMARY_COLUMNS, summarize, table_rows
from analytics.summary_running import RunningSummary
from engine.rubric import ACHIEVEMENTS


def _match(t: int, rng: random.Random) -> list[dict]:
    rows, match_id = [], f"m{rng.randrange(10**6):06}-{t}"
    for seat in range(5):
        arena = seat == 4  # a seat whose rows carry no world dimensions
        rows.append({
            "match_id": match_id, "run_id": f"r{t}", "batch_id": "bat_x",
            "scenario_id": "svc:base", "seed": 1000 + t % 7, "seat": seat, "anchor": seat >= 3,
            "name": f"seat {seat}", "model": "local/random", "rank": None if seat == 2 and t % 5 == 0 else 1 + (seat + t) % 5,
            "status": "alive" if rng.random() < 0.6 else "dead",
            "fitness_index": round(rng.uniform(0, 100), 2) if seat != 1 else float(40 + t % 2),
            "crafter_score": 1.0,
            **{d: None if arena else round(rng.betavariate(2, 5) * 100, 1) for d in DIMENSIONS},
            "achievements": rng.sample(ACHIEVEMENTS, rng.randrange(4)) + (["not_an_achievement"] if t % 9 == 0 else []),
        })
    return rows


def _text(summary: dict) -> str:
    return json.dumps(summary)  # NaN: a seat with no rank yet, in both


def test_the_kept_summary_is_the_full_recomputation_at_every_size():
    rng = random.Random(7)
    matches = [_match(t, rng) for t in range(55)]
    rng.shuffle(matches)  # the order they land in is not the match ids' order the summary reads in
    running, landed = RunningSummary("bat_x"), []
    graded: list[dict] = []
    for k, rows in enumerate(matches, 1):
        landed += rows
        running.add(pa.Table.from_pylist(rows, schema=SEAT_SCHEMA).select(list(SUMMARY_COLUMNS)))
        if k % 3 == 0:  # some seats graded after they landed
            graded.append({"match_id": rows[0]["match_id"], "seat": 0, "accuracy": round(rng.uniform(0, 100), 1)})
        if k in (1, 2, 3, 4, 5, 9, 10, 19, 20, 29, 30, 31, 49, 50, 55):
            decisions = pa.table({"match_id": pa.array([g["match_id"] for g in graded], pa.string()),
                                  "seat": pa.array([g["seat"] for g in graded], pa.int32()),
                                  "accuracy": pa.array([g["accuracy"] for g in graded], pa.float64())})
            full = summarize(table_rows(pa.Table.from_pylist(landed, schema=SEAT_SCHEMA), decisions, "bat_x"), "bat_x")
            assert _text(running.summary(decisions)) == _text(full), k
    assert running.summary()["matches"] == 55


def test_a_match_read_twice_counts_once_and_other_series_rows_are_left_out():
    rng = random.Random(1)
    a, b = _match(0, rng), _match(1, rng)
    for r in b:
        r["batch_id"] = "bat_other"
    running = RunningSummary("bat_x")
    for rows in (a, a, b):
        running.add(pa.Table.from_pylist(rows, schema=SEAT_SCHEMA))
    full = summarize(table_rows(pa.Table.from_pylist(a + b, schema=SEAT_SCHEMA), None, "bat_x"), "bat_x")
    assert _text(running.summary()) == _text(full) and running.summary()["matches"] == 1


def test_no_rows_is_the_empty_summary():
    assert RunningSummary("bat_x").summary() == summarize(table_rows(SEAT_SCHEMA.empty_table()), "bat_x")


RESAMPLED = {"percentile bootstrap", "BCa bootstrap", "bootstrap-t, cut to the scale"}


def _intervals(seat: dict) -> dict:
    """A seat entry's mean intervals by metric."""
    out = {"fitness_index": seat["fitness_index"], **seat["dimensions"]}
    if seat["decision_accuracy"] is not None:
        out["decision_accuracy"] = seat["decision_accuracy"]
    return out


def test_while_the_series_plays_a_resampled_interval_is_computed_once_then_held(monkeypatch):
    """Summaries of a playing series at every size: each bootstrap interval (per seat, metric and method)
    is the one computed the first time, whole, its n saying which sample it covers; everything else is
    the full recomputation's. The final summary is the full recomputation again, to the last bit."""
    from analytics import intervals

    resamples, counting = [], [False]  # rows each bootstrap method was given for the running summary
    for name in intervals.BOOTSTRAP:
        real = intervals.METHODS[name]
        monkeypatch.setitem(intervals.METHODS, name, lambda x, *a, real=real, **k: (
            resamples.append(len(x)) if counting[0] else None) or real(x, *a, **k))
    rng = random.Random(11)
    matches = [_match(t, rng) for t in range(55)]
    running, landed, first, held = RunningSummary("bat_x"), [], {}, 0
    for k, rows in enumerate(matches, 1):
        landed += rows
        running.add(pa.Table.from_pylist(rows, schema=SEAT_SCHEMA).select(list(SUMMARY_COLUMNS)))
        counting[0] = True
        got = json.loads(_text(running.summary(final=False)))
        counting[0] = False
        full = json.loads(_text(summarize(table_rows(pa.Table.from_pylist(landed, schema=SEAT_SCHEMA)), "bat_x")))
        for seat_got, seat_full in zip(got["seats"], full["seats"]):
            mine, fresh = _intervals(seat_got), _intervals(seat_full)
            assert mine.keys() == fresh.keys()
            for metric, iv in fresh.items():
                if iv["method"] in RESAMPLED:
                    kept = first.setdefault((seat_full["seat"], metric, iv["method"]), iv)
                    assert mine[metric] == kept, (k, metric)
                    held += kept["n"] < k
                else:
                    assert mine[metric] == iv, (k, metric)
            seat_got.pop("dimensions"), seat_full.pop("dimensions")
            seat_got.pop("fitness_index"), seat_full.pop("fitness_index")
        assert got == full, k  # counts, rates, ranks and every interval that does not resample: current
    assert held  # some intervals were served as held while the series grew
    assert sum(resamples) == len(first)  # each seat's, metric's and method's computed once
    final = running.summary()
    assert _text(final) == _text(summarize(table_rows(pa.Table.from_pylist(landed, schema=SEAT_SCHEMA)), "bat_x"))
