"""What a notebook reads, as pandas frames, over REST: a run's or a series' result rows, a run's
scorecards, a series' summary per seat, a leaderboard, a paired comparison. Each takes a Studio (the
REST client) and answers what the server computed; nothing is recomputed here."""
from __future__ import annotations

import io

import pandas as pd

from studio_client.models import AgentResult, Board, BatchView, Comparison, Interval, Strength
from studio_client.rest import Studio


def results(studio: Studio, id: str) -> pd.DataFrame:
    """One row per agent per ended match of a run (run_...) or a series (bat_...): seeds, seat, name,
    provider, model, rank, fitness_index, each dimension, stats (the CSV export)."""
    return pd.read_csv(io.BytesIO(studio.download(id, "csv")))


def scorecards(studio: Studio, run_id: str) -> pd.DataFrame:
    """One row per seat of an ended run, anchors included (anchor true): its scorecard and each of its
    dimensions as a column. Empty until the run's results are archived."""
    results = studio.get_run(id=run_id)["results"] or {"agents": [], "anchors": []}
    rows = [{**AgentResult.model_validate(agent).model_dump(), "anchor": kind == "anchors", **agent["dimensions"]}
            for kind in ("agents", "anchors") for agent in results[kind]]
    return pd.DataFrame(rows)


def _interval(prefix: str, i: Interval | None) -> dict:
    if i is None:
        return {prefix: None, f"{prefix}_low": None, f"{prefix}_high": None}
    return {prefix: i.estimate, f"{prefix}_low": i.low, f"{prefix}_high": i.high}


def series_summary(studio: Studio, batch_id: str) -> pd.DataFrame:
    """One row per seat of a series: mean fitness_index, win and survival rates and each dimension, each
    with its 95% interval (`<metric>_low`, `<metric>_high`), n and matches. The series' status and
    counts are in the frame's attrs."""
    batch = BatchView.model_validate(studio.get_batch(id=batch_id)["batch"])
    rows = []
    for s in batch.summary.seats:
        row = {"seat": s.seat, "name": s.name, "model": s.model, "anchor": s.anchor, "n": s.n,
               "matches": s.matches, "mean_rank": s.mean_rank, "interval": s.fitness_index.method,
               **_interval("fitness_index", s.fitness_index), **_interval("win_rate", s.win_rate),
               **_interval("survival_rate", s.survival_rate)}
        for name, interval in s.dimensions.items():
            row |= _interval(name, interval)
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs.update(batch_id=batch.batch_id, status=batch.status, trials=batch.trials, counts=batch.counts)
    return frame


def leaderboard(studio: Studio, scenario_id: str | None = None, *, game: str | None = None,
                by: str | None = None, resamples: int | None = None) -> pd.DataFrame:
    """Bradley-Terry strengths with bootstrap intervals, one row per model (or seat name), best first;
    the board's scenario_id, game, by, n_matches, n_resamples and method are in the frame's attrs."""
    board = Board.model_validate(studio.get_leaderboard(scenario_id=scenario_id, game=game, by=by,
                                                        resamples=resamples)["leaderboard"])
    frame = pd.DataFrame([row.model_dump() for row in board.rows], columns=list(Strength.model_fields))
    frame.attrs.update(board.model_dump(exclude={"rows"}))
    return frame


def comparison(studio: Studio, batch_a: str, batch_b: str, seat: int | None = None, seat_b: int | None = None,
               metric: str | None = None) -> pd.Series:
    """One seat of batch_a against a seat of batch_b, paired on the seeds both played: the mean
    paired difference with its interval, P(improvement) with its interval, each side's mean and n."""
    c = Comparison.model_validate(studio.compare_batches(batch_a=batch_a, batch_b=batch_b, seat=seat,
                                                         seat_b=seat_b, metric=metric)["comparison"])
    return pd.Series({"batch_a": c.batch_a, "batch_b": c.batch_b, "seat": c.seat, "seat_b": c.seat_b,
                      "metric": c.metric, **_interval("difference", c.difference),
                      **_interval("prob_improvement", c.prob_improvement), "mean_a": c.mean_a,
                      "mean_b": c.mean_b, "n": c.n})
