"""When a series stops launching trials, and what each of its trials may spend (docs/RUNS.md). Every
function runs inside the caller's write transaction:
- `record`, at launch: the series' target (`until`) and budget.
- `held` and `beyond` before the dispatcher's claim: series whose budget cannot cover another trial
  while some play, and the trials a target's wave does not reach yet.
- `capped` after the claim: each claimed trial's spend cap lowered to what the budget leaves.
- `after_ended`, as runs end: each seat's confidence sequence for the target's metric (and each
  changed seat's paired effect, for a fork with control), and the stop once every one is narrow
  enough. A stop cancels the trials not begun (series_stopped, nothing metered, their reservation
  released); trials already playing finish and count, and so does a queued twin of one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from analytics import sequence
from orchestrator import statuses
from orchestrator.records.series import Series, Until
from orchestrator.runs import lifecycle
from orchestrator.runs.series import fork_effect, waves
from orchestrator.runs.series.until import REFERENCE_SD, SCALES, Stopping
from orchestrator.store import Connection, runs, series as store

SERIES_STOPPED = "series_stopped"  # a trial's stop_reason when its series stopped before it played
PRECISE, CEILING, BUDGET, CANCELLED = "precise", "ceiling", "budget", "cancelled"
MIN_TRIALS = 2  # a target holds from two scored trials on, as a series has at least two


@dataclass(frozen=True)
class Sample:
    """One quantity a target may apply to: a seat's scores of the metric in the order its trials
    ended, on its scale, or a fork's paired effect on a seat (differences, on -100..100).
    key: the seat index, or effect:<seat index>."""
    key: str
    values: np.ndarray
    lo: float
    hi: float
    anchor: bool = False
    target: float | None = None  # the target half-width the sequence's bets are tuned for

    def sequence(self) -> sequence.Sequence:
        return sequence.sequence(self.values, self.lo, self.hi, half_width=self.target)


def record(c: Connection, batch_id: str, stopping: Stopping, trial_spends: bool) -> None:
    """trial_spends: whether a trial can spend at all (some seat is priced); only then are the caps of
    playing trials held against the budget, so a free series never waits on its own caps."""
    if stopping is None or not stopping.any:
        return
    store.record_stopping(c, batch_id, None if stopping.until is None else Until(**stopping.until),
                          stopping.budget_usd, stopping.min_cap_usd, trial_spends)


def samples(c: Connection, batch: Series) -> list[Sample]:
    """Every seat of the field (roster seats, then anchors) with its scores of the target's metric,
    over the series' scored trials in the order they ended."""
    until = batch.until
    by_seat, anchors = store.scores(c, batch.id, until.metric)
    lo, hi = SCALES[until.metric]
    target = until.half_width
    out = [Sample(str(k), np.asarray(v, dtype=float), lo, hi, k in anchors, target)
           for k, v in sorted(by_seat.items())]
    if batch.paired:
        for seat, d in fork_effect.differences(c, batch.id, _effect_seats(batch), until.metric).items():
            if d:  # no complete pair yet: no sequence to show
                out.append(Sample(f"{EFFECT}{seat}", np.asarray(d, dtype=float), lo - hi, hi - lo, target=target))
    return out


EFFECT = "effect:"  # a paired effect's key among the samples, before its seat index


def _effect_seats(batch: Series) -> list[int]:
    """The seats whose paired effect a fork's target applies to: the seat named, else every changed seat."""
    seat = batch.until.seat
    return [seat] if seat is not None else list(batch.fork.seats)


def targets(c: Connection, batch: Series) -> list[str]:
    """The keys of the samples the target applies to: with a control arm the paired effects
    (_effect_seats), else the seat named, else every roster seat."""
    if batch.paired:
        return [f"{EFFECT}{s}" for s in _effect_seats(batch)]
    seat = batch.until.seat
    if seat is not None:
        return [str(seat)]
    return [str(k) for k in range(store.roster_size(c, batch.id))]


def precise(every: list[Sample], keys: list[str], half_width: float) -> bool:
    """Each keyed sample has MIN_TRIALS values or more and a sequence at most half_width wide on each
    side. A key with no sample (no scored trial yet) is not precise."""
    by_key = {s.key: s for s in every}
    return bool(keys) and all(k in by_key and by_key[k].values.size >= MIN_TRIALS
                              and by_key[k].sequence().half_width <= half_width for k in keys)


def _budget(c: Connection, batch: Series, leaving: Iterable[str] = ()) -> tuple[float, int, int]:
    """(USD the budget leaves, trials playing, trials queued). Spent: every trial's metered spend;
    held: what each playing trial may still spend under its cap (runs in `leaving` not counted)."""
    money = store.spending(c, batch.id, leaving)
    held = money.held if batch.trial_spends else 0.0
    return batch.budget_usd - money.spent - held, money.playing, money.queued


def _min_cap(batch: Series) -> float:
    return batch.min_cap_usd or 0.0


def stop(c: Connection, batch_id: str, reason: str, now_ms: int) -> list[str]:
    """Cancel the series' trials not begun (series_stopped) and record why; returns the runs it ended.
    A target's stop takes pairs whole: a queued twin of a trial that began plays, so every played
    fork trial has its control. A budget's stop cancels every queued run, as nothing pays for them.
    A series with nothing left to cancel is not stopped: it played its ceiling."""
    batch = store.get(c, batch_id)
    queued = [r.id for t in waves.trials(c, batch) for r in t
              if r.status == statuses.QUEUED and (reason == BUDGET or waves.untouched(t))]
    if not queued:
        return []
    store.set_stopped(c, batch_id, reason)
    return [r for r in queued if lifecycle.series_stopped(c, r, now_ms)]


def held(c: Connection, scripted: bool, now_ms: int) -> tuple[tuple[str, ...], list[str]]:
    """(series not to claim from now, runs ended by stopping series whose budget is spent)."""
    out, ended = [], []
    for batch_id, batch in store.budgeted(c, store.waiting(c, scripted)).items():
        left, playing, _ = _budget(c, batch)
        if left >= _min_cap(batch):
            continue
        if playing:
            out.append(batch_id)
        else:
            ended += stop(c, batch_id, BUDGET, now_ms)
    return tuple(out), ended


def capped(c: Connection, rows: list) -> list:
    """Claimed rows, each budgeted trial's cap lowered to what its series' budget leaves; a trial whose
    cap would fall below the plan's smallest is queued again and left out."""
    series = store.budgeted(c, {r.batch_id for r in rows if r.batch_id})
    if not series:
        return rows
    claimed = [r.id for r in rows]
    left = {b: _budget(c, batch, claimed)[0] for b, batch in series.items()}
    kept = []
    for r in rows:
        batch = series.get(r.batch_id)
        if batch is None:
            kept.append(r)
            continue
        cap = min(r.cap_usd, r.spend_usd + max(left[batch.id], 0.0))
        if cap < _min_cap(batch) or cap <= r.spend_usd:
            lifecycle.requeue(c, r.id)
            continue
        runs.set_cap(c, r.id, cap)
        if batch.trial_spends:
            left[batch.id] -= cap - r.spend_usd
        kept.append(r.model_copy(update={"cap_usd": cap}))  # the cap its job must carry
    return kept


def beyond(c: Connection, scripted: bool) -> tuple[str, ...]:
    """Queued runs of this kind (scripted or not) that their series' wave does not reach yet: the
    claim leaves them in the queue. A trial that ended without a score takes no room of a wave."""
    out: list[str] = []
    for batch in store.targeted_waiting(c, scripted):
        every = waves.trials(c, batch)
        until = batch.until
        first = waves.first_wave(until.half_width, batch.trials, REFERENCE_SD, *SCALES[until.metric],
                                 paired=batch.paired)
        scored = sum(waves.complete(t) for t in every)
        room = sum(waves.lost(t) for t in every) + waves.allowance(scored, _ratio(c, batch), first, batch.trials) \
            - sum(not waves.untouched(t) for t in every)
        for t in every:
            if waves.untouched(t):
                if room > 0:
                    room -= 1
                else:
                    out += [r.id for r in t]
    return tuple(out)


def _ratio(c: Connection, batch: Series) -> float | None:
    """The widest target's sequence half-width over the target's, from the sequences kept at the last
    end (None before every target has one)."""
    widths = [batch.cs[k].half_width if k in batch.cs else None for k in targets(c, batch)]
    if not widths or any(w is None for w in widths):
        return None
    return max(widths) / batch.until.half_width


def controlled(c: Connection, batch_ids: Iterable[str]) -> bool:
    """Whether any of these series has a target or a budget: their trials go to workers one per call,
    so that a stop leaves the rest in the queue."""
    return store.controlled(c, batch_ids)


def after_ended(c: Connection, run_ids: Iterable[str], now_ms: int) -> list[str]:
    """The sequences and stops of the series these ended runs belong to; returns the runs it ended."""
    ended = []
    for batch in store.of_runs(c, run_ids):
        if batch.until is not None:
            every = samples(c, batch)
            store.set_cs(c, batch.id, {s.key: s.sequence().to_dict() for s in every})
            if batch.stopped is None and precise(every, targets(c, batch), batch.until.half_width):
                ended += stop(c, batch.id, PRECISE, now_ms)
                continue
        if batch.budget_usd is not None and batch.stopped is None:
            left, playing, queued = _budget(c, batch)
            if left < _min_cap(batch) and not playing and queued:
                ended += stop(c, batch.id, BUDGET, now_ms)
    return ended


def head(batch: Series, ended: bool, spent_usd: float, cancelled: int) -> dict:
    """The batch view's fields: until (normalised) and budget_usd as launched, why the series stopped
    (null while trials are left to play), and what it spent. cancelled: its trials the caller cancelled."""
    if not ended:
        stopped = None
    elif batch.stopped is not None:
        stopped = batch.stopped
    else:
        stopped = CANCELLED if cancelled else CEILING
    return {"until": None if batch.until is None else batch.until.model_dump(), "budget_usd": batch.budget_usd,
            "stopped": stopped, "spent_usd": round(spent_usd, 6)}


def _cs(batch: Series) -> dict[str, dict]:
    return {k: v.model_dump() for k, v in batch.cs.items()}


def with_cs(summary: dict, batch: Series) -> dict:
    """A series with a target: each seat's summary entry with its confidence sequence beside the
    fixed-n interval (a copy: the kept summary is shared by every read)."""
    if batch.until is None or not batch.cs:
        return summary
    cs = _cs(batch)
    return {**summary, "seats": [{**s, "cs": cs[str(s["seat"])]} if str(s["seat"]) in cs else s
                                 for s in summary.get("seats", ())]}


def with_effect_cs(effect: list | None, batch: Series) -> list | None:
    """A fork with control and a target: the target metric's effect entries with the confidence
    sequence of the paired difference (copies)."""
    if effect is None or batch.until is None or not batch.cs:
        return effect
    metric, cs = batch.until.metric, _cs(batch)
    return [{**e, "cs": cs[f"{EFFECT}{e['seat']}"]} if e["metric"] == metric and f"{EFFECT}{e['seat']}" in cs else e
            for e in effect]


def paths(core, principal, batch_id: str) -> dict[int, tuple[list[float], list[float]]] | None:
    """Each roster seat's confidence sequence after each of its scored trials, for the series page's
    plot; None for a series without a target."""
    c = core.store.conn()
    batch = store.get(c, batch_id, principal.account_id)
    if batch is None or batch.until is None:
        return None
    out = {}
    for s in samples(c, batch):
        if not s.anchor and s.values.size and not s.key.startswith(EFFECT):
            low, high = sequence.bounds(s.values, s.lo, s.hi, half_width=s.target)
            out[int(s.key)] = (low.tolist(), high.tolist())
    return out
