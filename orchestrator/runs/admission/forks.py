"""Forks at admission (docs/FORKS.md): the run body's `fork` read and checked against the
original run, the fork's roster (kept seats as played, new seats resolved like any roster seat), its
runs (a fork arm, and with `control` a control arm on the same continuation seeds) and what each run
records for its worker (the run's RunFork, the series' SeriesFork).

`admit` calls `read` first; with a fork, every other check of a launch runs as for any body,
on the body `read` builds: the original's scenario and roster with the new seats in place.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engine.rollouts import RebuildError, rebuild
from engine.scenario import draw_seed, seat_names
from orchestrator.seats import keys
from orchestrator.auth import Principal
from orchestrator.runs import match_log
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.play.fork import played_config, played_policies
from orchestrator.records.fork import RunFork, SeriesFork
from orchestrator.records.roster import Seat
from orchestrator.records.run import Run
from orchestrator.runs import kinds
from orchestrator.runs.admission import seats as seat_layer
from orchestrator.runs.admission.body import HINTS, Seat as SentSeat
from orchestrator.statuses import SCORED
from orchestrator.runs.kinds.world import Scenario
from orchestrator.seats.funding import seat_funding
from orchestrator.store import runs
from orchestrator.validation import parse

FIELDS = ("run_id", "tick", "seats", "control")
NOT_WITH_FORK = ("roster", "env", "season_ticks", "seed_mode")  # the original's, or drawn for the fork
ARMS = ("fork", "control")
_INDEX = re.compile(r"[0-9]{1,4}")
SHAPE = "send fork as {run_id, tick, seats?, control?}"


def _bad(message: str) -> DomainError:
    return DomainError("bad_fork", message)


@dataclass
class Fork:
    original: Run                 # the original run
    tick: int
    changed: dict[int, dict]      # seat index -> the seat as sent
    control: bool
    body: dict                    # the run body the launch's other checks read
    scenario: Scenario
    effective: dict               # the original's as played, less its own fork
    roster: tuple[Seat, ...]      # the original's resolved roster
    record: RunFork | None = None  # the original's own fork record (None for a run that is none)
    control_seats: list[Seat] = field(default_factory=list)
    runs: list[RunFork] = field(default_factory=list)  # per run of the launch: its fork record

    @property
    def remaining(self) -> int:
        """Ticks each run plays: tick .. season_ticks - 1."""
        return self.effective["season_ticks"] - self.tick

    # -- seats -------------------------------------------------------------------------------------
    def resolve(self, core: Core, principal: Principal, resolve_seats) -> list[Seat]:
        """The fork arm's roster: kept seats as the original played them (skills and instructions as
        they were), new seats resolved (by the `resolve_seats` given) and funded here, so their refusals
        name fork.seats.<index>."""
        given = [self.changed[i].get("name") if i in self.changed else s.name for i, s in enumerate(self.roster)]
        names = seat_names([self.changed[i]["model"] if i in self.changed else s.model
                            for i, s in enumerate(self.roster)], given)
        own, sponsors = keys.held(core, principal.account_id), keys.held(core, keys.PLATFORM)
        out = []
        for i, seat in enumerate(self.roster):
            if i not in self.changed:
                out.append(seat.afresh())
                continue
            with relabelled(i):
                entry = resolve_seats(core, principal, [self.changed[i]], self.scenario.kind)[0]
                seat_funding(0, self.changed[i], account_keys=own, sponsors=sponsors, email_verified=principal.verified)
            out.append(entry.model_copy(update={"seat": i, "name": names[i]}))
        self.control_seats = [s.afresh() for s in self.roster]
        return out

    def estimate(self, core: Core, principal: Principal, seats: list[Seat], trials: int, table=None) -> dict:
        """The launch's USD: the fork arm, and the control arm (funded here) when asked."""
        prices = seat_layer.key_prices(core, principal)
        est = seat_layer.estimate(seats, self.remaining, trials, key_prices=prices, table=table)
        if self.control:
            more = seat_layer.estimate(self.control_seats, self.remaining, trials, key_prices=prices, table=table)
            self.control_seats = seat_layer.fund(core, principal, self.control_seats, self.control_seats, more)
            est = dict(est, low=est["low"] + more["low"], high=est["high"] + more["high"])
        return est

    # -- runs --------------------------------------------------------------------------------------
    def trial_envs(self, trials: int, series_seed: int | None, trial_seed) -> tuple[list[dict], int | None]:
        """Per run (the fork arm's trials, then the control arm's): its effective object with `fork`;
        the series' seed, from which trial j's continuation seed derives (by `trial_seed`; None
        for one run)."""
        if trials > 1 and series_seed is None:
            series_seed = draw_seed()
        envs, self.runs = [], []
        before = list(self.record.mixed) if self.record else []
        mixed = sorted(set(before) | set(self.changed))
        played = played_policies(self.roster, self.record)
        for arm in ARMS[:2 if self.control else 1]:
            for j in range(trials):
                record = RunFork(run_id=self.original.id, match_id=self.original.match_id, tick=self.tick,
                                 continuation_seed=None if trials == 1 else trial_seed(series_seed, "fork", j),
                                 arm=arm, key=self.original.batch_id,
                                 changed=sorted(self.changed) if arm == "fork" else [], played=played,
                                 mixed=mixed if arm == "fork" else before)
                envs.append({**self.effective, "fork": record.public()})
                self.runs.append(record)
        return envs, series_seed

    def run_fields(self, adm, k: int) -> dict:
        """What run k of the launch is stored with besides any run's: its fork record, and for a run of
        the control arm the original's seats and its own name and grading."""
        record = self.runs[k]
        if record.arm != "control":
            return {"fork": record}
        from orchestrator.grading.plan import launch_state

        seats = self.control_seats
        mode, status = launch_state(kinds.WORLD, seats, adm.body.get("grading"))
        return {"fork": record, "roster": seats, "scripted": all(s.local for s in seats),
                "name": f"{adm.name} (control, trial {k - adm.trials + 1}/{adm.trials})", "grading": mode,
                "grading_status": status}

    def series(self) -> SeriesFork:
        """What the series of a forked launch records of its fork."""
        return SeriesFork(run_id=self.original.id, tick=self.tick, control=self.control, seats=sorted(self.changed))


@contextmanager
def relabelled(index: int):
    """A new seat is resolved alone (as roster[0]); its refusals name it as the body does."""
    try:
        yield
    except DomainError as e:
        e.message = e.message.replace("roster[0]", f"fork.seats.{index}")
        e.args = (e.message,)
        raise


def _sent(seat: Seat) -> dict:
    """A kept seat as the launch's body check reads it: only its shape is checked, it is not resolved again."""
    return {"model": seat.model, "provider": seat.provider}


def read(core: Core, principal: Principal, raw: Any) -> Fork | None:
    """The body's fork checked and its original loaded; None for a body without `fork`."""
    if not isinstance(raw, dict) or "fork" not in raw:
        return None
    spec = raw["fork"]
    if not isinstance(spec, dict):
        raise _bad(f"fork: should be a JSON object; {SHAPE}")
    unknown = [k for k in spec if k not in FIELDS]
    if unknown:
        raise _bad(f"fork: unknown field '{unknown[0]}'; {SHAPE}")
    for name, kind, words in (("run_id", str, "a string (the run_id of an ended world run of yours)"),
                              ("tick", int, "an integer (the tick the fork plays from)")):
        if name not in spec:
            raise _bad(f"fork.{name} is required; {SHAPE}")
        if not isinstance(spec[name], kind) or isinstance(spec[name], bool):
            raise _bad(f"fork.{name}: should be {words}")
    if "seats" in spec and not isinstance(spec["seats"], dict):
        raise _bad('fork.seats: should be a JSON object of seat index -> roster seat, e.g. {"0": {"model": '
                   '"local/random"}}')
    if "control" in spec and not isinstance(spec["control"], bool):
        raise _bad("fork.control: should be true or false")
    sent = [k for k in NOT_WITH_FORK if k in raw]
    if sent:
        raise _bad(f"{sent[0]} cannot be sent with fork: a fork plays the original's {', '.join(NOT_WITH_FORK)}; "
                   "change seats with fork.seats")
    control = spec.get("control", False)
    trials = raw.get("trials", 1)
    if control and isinstance(trials, int) and not isinstance(trials, bool) and trials < 2:
        raise _bad("fork.control: a control arm needs a series; send trials of 2 or more, or drop control")
    row = runs.owned(core.store.conn(), spec["run_id"], principal.account_id)
    if row is None:
        raise DomainError("unknown_run", f"fork.run_id: no run '{spec['run_id']}' on this account; list yours "
                          "with GET /api/v1/runs")
    if kinds.of(row.scenario_id) is not kinds.WORLD:
        raise _bad(f"fork.run_id: {row.id} is an arena game ({row.scenario_id}); only world runs fork")
    if row.status not in SCORED or not row.match_id:
        why = row.status if row.status not in SCORED else f"{row.status} without a match"
        raise _bad(f"fork.run_id: {row.id} is {why}; fork a world run that is finished or cancelled with a match")
    if not row.results:
        raise _bad(f"fork.run_id: {row.id}'s match is not scored yet; fork it once its results are in")
    if raw.get("scenario_id", row.scenario_id) != row.scenario_id:
        raise _bad(f"scenario_id: a fork plays the original's scenario {row.scenario_id}; drop scenario_id or "
                   "send that one")
    ticks = row.results["match_ticks"]
    tick = spec["tick"]
    if not 1 <= tick <= ticks - 1:
        raise _bad(f"fork.tick: {tick} is outside 1..{ticks - 1}; the original played ticks 0..{ticks - 1}, and "
                   "a fork keeps the ticks before its own")
    roster = row.roster
    changed = {}
    for key, seat in (spec.get("seats") or {}).items():
        if not _INDEX.fullmatch(key) or int(key) >= len(roster):
            raise _bad(f"fork.seats: '{key}' is not a seat index of the original; send indexes 0..{len(roster) - 1}")
        changed[int(key)] = _checked(int(key), seat)
    eff = {k: v for k, v in row.effective.items() if k != "fork"}
    record = row.fork
    _rebuilds(core, row, roster, eff, record)
    _memories_readable(core, row, roster, changed)
    body = {"name": f"{row.name[:60]} (fork at {tick})", **{k: v for k, v in raw.items() if k != "fork"}}
    body.update(scenario_id=row.scenario_id, roster=[_sent(changed.get(i, s)) if i not in changed else changed[i]
                                                          for i, s in enumerate(roster)])
    scen = Scenario(id=row.scenario_id, base="", hash=row.scenario_hash, season_ticks=eff["season_ticks"],
                    env=eff["env"], seed_policy="fixed", roster=None, kind=kinds.WORLD)
    return Fork(original=row, tick=tick, changed=changed, control=control, body=body, scenario=scen, effective=eff,
                roster=roster, record=record)


def _checked(index: int, seat: Any) -> dict:
    """A new seat checked like any roster seat, its errors naming fork.seats.<index>."""
    if isinstance(seat, dict) and "model" not in seat:
        raise DomainError("bad_roster", f"fork.seats.{index}: model is required; {HINTS['model']}")
    return parse(SentSeat, seat, codes={}, default="bad_roster", hints=HINTS, top_level=False,
                 prefix=("fork", "seats", str(index))).model_dump(exclude_unset=True)


def _rebuilds(core: Core, row: Run, roster: tuple[Seat, ...], eff: dict, record: RunFork | None) -> None:
    """bad_fork when today's engine does not replay the original's log (its rules changed since)."""
    if _replays(core.data_dir, row.match_id):
        return
    try:
        cols, meta = match_log.read_events(core, row.match_id, row.batch_id)
    except DomainError as e:  # a scripted original whose log this engine cannot derive
        if e.code != "log_not_kept":  # a damaged archive file is refused as on every read of the match
            raise
        raise _bad(f"fork.run_id: {e.message}") from None
    if cols is None:
        raise _bad(f"fork.run_id: {row.id}'s match is not in the archive; it cannot be rebuilt")
    try:
        rebuild(played_config(meta, cols, eff["env"], played_policies(roster, record)), cols, [], [])
    except RebuildError as e:
        raise _bad(f"fork.run_id: today's engine cannot rebuild {row.id}'s log ({e}); fork a run played "
                   "under the current rules") from None
    _replays(core.data_dir, row.match_id, True)


def _memories_readable(core: Core, row: Run, roster: tuple[Seat, ...], changed: dict) -> None:
    """archive_damaged when a model seat the fork keeps would remember turns of a transcript that
    cannot be read (its worker reads them to rebuild the seat's memory)."""
    if any(i not in changed and not s.unpaid for i, s in enumerate(roster)):
        match_log.read_transcript(core, row.match_id, limit=1)


_REPLAYED: dict = {}


def _replays(data_dir, match_id: str, yes: bool = False) -> bool:
    """Matches whose log this process rebuilt once: a log never changes, nor does the engine in a process."""
    key = (str(data_dir), match_id)
    if yes:
        if len(_REPLAYED) > 1000:
            _REPLAYED.clear()
        _REPLAYED[key] = True
    return key in _REPLAYED
