"""`studio verify FILE`: a result bundle checked offline, with the installed engine and nothing else.

Every match is played again from its inputs. A world match's scripted seats replay as a derived log does; its
model and agent seats play their recorded turns through the seat layer's replay of a resumed run
(`replay_only`: a turn the record lacks is a divergence, never a call), each turn's actions first derived
again from its recorded reply. An arena game plays its recorded answers through the game loop and its oracle.
Then the event log's digest, the results, the chain of turns and the manifest's digest are compared with the
bundle's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from analytics.archive import derive
from analytics.archive.format import event_columns, events_table
from engine import rubric
from engine.digest import engine_digest
from engine.hashing import content_hash
from orchestrator.agents.player import MISSED
from orchestrator.bundles import layout
from orchestrator.play.fork import new_match, reply_of
from orchestrator.play.job import Job
from orchestrator.play.world import field_meta, mark_silent, seat_specs, specs_from_meta
from orchestrator.provider_kinds import AGENT, LOCAL
from orchestrator.seats import played
from orchestrator.seats.actions import (
    NO_REPLY_WAIT,
    TIMEOUT_WAIT,
    Refused,
    from_list,
    from_reply,
)
from orchestrator.seats.base import NotRecorded
from orchestrator.seats.chat import TIMED_OUT
from orchestrator.seats.player import Credential, ModelSeats
from orchestrator.seats.turn import actions_json

NOWHERE = "http://replay-only.invalid"  # the .invalid domain never resolves (RFC 2606)

VERIFIED, DIVERGES, OTHER_ENGINE = 0, 1, 3  # exit statuses


@dataclass
class Divergence:
    what: str
    match_id: str | None = None
    run_id: str | None = None
    tick: int | None = None
    seat: int | None = None

    def line(self) -> str:
        where = [f"match {self.match_id}" if self.match_id else None, f"run {self.run_id}" if self.run_id else None,
                 f"tick {self.tick}" if self.tick is not None else None,
                 f"seat {self.seat}" if self.seat is not None else None]
        return ", ".join(w for w in where if w) + (": " if any(where) else "") + self.what


@dataclass
class Report:
    matches: int = 0
    divergence: Divergence | None = None
    engines: dict | None = None              # {bundle, installed} when they differ
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> int:
        if self.divergence is not None:
            return DIVERGES
        return OTHER_ENGINE if self.engines else VERIFIED

    def as_json(self) -> dict:
        return {"verified": self.status == VERIFIED, "exit": self.status, "matches": self.matches,
                "divergence": None if self.divergence is None else self.divergence.__dict__,
                "engine": self.engines, "notes": self.notes}

    def text(self) -> str:
        if self.status == VERIFIED:
            lines = [f"verified: {self.matches} matches"]
        elif self.status == DIVERGES:
            lines = [f"diverges: {self.divergence.line()}"]
        else:
            lines = [(f"not checked: the bundle was played under engine {self.engines['bundle']} and this "
                      f"installation runs engine {self.engines['installed']}; neither verified nor refuted")]
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


class Diverged(Exception):
    def __init__(self, d: Divergence):
        self.divergence = d


def verify(data: bytes) -> Report:
    """The report on a bundle's bytes: verified, the first divergence, or another engine."""
    report = Report()
    try:
        manifest, turns = layout.read(data)
        matches = manifest.get("matches")
        if not isinstance(matches, list):
            raise layout.Unreadable("manifest.json lists no matches")
    except layout.Unreadable as e:
        report.divergence = Divergence(str(e))
        return report
    try:
        sealed = manifest.get("digest") == layout.manifest_digest(manifest)
        named = {str(m.get("engine")) for m in matches if isinstance(m, dict)} | {str(manifest.get("engine"))}
    except ValueError:  # a number JSON cannot carry (NaN): written by no service
        report.divergence = Divergence("manifest.json holds a value no bundle carries (NaN or infinity)")
        return report
    installed = engine_digest()
    if named != {installed}:
        if sealed:
            other = sorted(str(e) for e in named if e != installed)
            report.engines = {"bundle": ", ".join(other), "installed": installed}
        else:
            report.divergence = Divergence("manifest.json does not match its digest (an edit after it was written)")
        return report
    derived: dict[str, tuple[dict, dict]] = {}  # match id -> its derived (event columns, metadata): a fork's start
    m = None
    try:
        forked = {str(f["match_id"]) for e in matches for f in _fork_of(e)}
        for m in matches:
            _match(m, turns.get(m.get("match_id")), derived, report, forked)
            report.matches += 1
    except Diverged as e:
        report.divergence = e.divergence
        return report
    except Exception as e:  # noqa: BLE001  a field missing or of another kind: an edit no replay survives
        report.divergence = Divergence(f"the bundle's record cannot be played ({type(e).__name__}: {e})",
                                       *_where(m))
        return report
    if not sealed:
        report.divergence = Divergence("manifest.json does not match its digest (an edit after it was written)")
    return report


def _fork_of(m) -> list[dict]:
    """The fork records a match entry names (the manifest's and its played metadata's), to keep their
    originals' logs for them."""
    if not isinstance(m, dict):
        return []
    out = [m.get("fork"), ((m.get("played") or {}).get("meta") or {}).get("fork")]
    return [f for f in out if isinstance(f, dict) and "match_id" in f]


def _where(m) -> tuple:
    return (m.get("match_id"), m.get("run_id")) if isinstance(m, dict) else (None, None)


def _diverge(m: dict, what: str, tick: int | None = None, seat: int | None = None):
    raise Diverged(Divergence(what, m["match_id"], m["run_id"], tick, seat))


def _match(m: dict, lines: list[dict] | None, derived: dict, report: Report, forked: set[str]) -> None:
    _inputs(m)
    rows = _chain(m, lines)
    if m["kind"] == "arena":
        # the game loop and its oracles, loaded for games only
        from orchestrator.bundles.arena import replay_game

        replay_game(m, rows, report, _diverge, _compare)
        if layout.sha256(layout.canonical(m["played"]["moves"])) != m["log_sha256"]:
            _diverge(m, "the game's moves do not give the recorded log digest")
        return
    _world(m, rows, derived, report, forked)


def _inputs(m: dict) -> None:
    """The scenario's content hash from its definition, and the seeds as the definition has them."""
    s = m["scenario"]
    if content_hash(s["base"], s["season_ticks"], s["env"]) != s["content_hash"]:
        _diverge(m, "the scenario definition does not give its content hash (scenario.env or season_ticks edited)")
    for name in ("seed", "spawn_seed"):
        if m["seeds"][name]["value"] != s["env"].get(name):
            _diverge(m, f"seeds.{name} is {m['seeds'][name]['value']!r}, the definition's {s['env'].get(name)!r}")


def _chain(m: dict, lines: list[dict] | None) -> list[dict]:
    """The match's turns, each one's `prev` the hash of the one before, the last the manifest's."""
    recorded = m.get("turns")
    if recorded is None:
        if lines:
            _diverge(m, "turns are in the zip that the manifest does not name")
        if any(s.get("provider") != LOCAL for s in m["roster"]):
            _diverge(m, "the roster has model or agent seats and the bundle holds no turns for them")
        return []
    prev, before = layout.genesis(m["match_id"]), None
    for k, line in enumerate(lines or []):
        if line.get("prev") != prev:
            if before is None:
                _diverge(m, "the first turn does not carry the match's genesis hash (the chain of turns is broken)",
                         line.get("tick"), line.get("seat"))
            # the turn before was edited (the likelier), or the hash this one carries
            _diverge(m, f"turn {k - 1} does not hash to what turn {k} carries (the chain of turns is broken)",
                     before.get("tick"), before.get("seat"))
        prev, before = layout.sha256(layout.canonical(line)), line
    if len(lines or []) != recorded["count"] or prev != recorded["last_sha256"]:
        _diverge(m, f"the chain of {len(lines or [])} turns ends in {prev[:16]}..., the manifest names "
                 f"{recorded['count']} turns ending in {str(recorded['last_sha256'])[:16]}...",
                 *((before.get("tick"), before.get("seat")) if before else ()))
    return [{k: v for k, v in line.items() if k != "prev"} for line in lines or []]


def _job(m: dict) -> Job:
    meta = dict(m["played"]["meta"])
    return Job(run_id=m["run_id"], match_id=m["match_id"], data_dir="", season_ticks=m["scenario"]["season_ticks"],
               env=m["scenario"]["env"], seats=m["roster"], meta=meta)


def _world(m: dict, rows: list[dict], derived: dict, report: Report, forked: set[str]) -> None:
    job = _job(m)
    original = None
    if job.meta.get("fork"):
        original = derived.get(job.meta["fork"]["match_id"])
        if original is None:
            _diverge(m, f"the match this fork continues ({job.meta['fork']['match_id']}) is not in the bundle")
    match = new_match(job, seat_specs, original)
    tick, reason = m["stop"]["tick"], m["stop"]["reason"]
    if not rows:
        derive.played(match, tick, reason)
        answered = None
    else:
        answered = _replay_seats(m, job, match, rows)
    cols = match.columns()
    if m["match_id"] in forked:  # a fork of the bundle starts from this log, read as the archive gives it
        derived[m["match_id"]] = (event_columns(events_table(m["match_id"], cols, {}, match.messages)),
                                  m["played"]["meta"])
    if layout.played_log_sha256(cols, match.messages) != m["log_sha256"]:
        _diverge(m, "the event log played again differs from the recorded one (its SHA-256 differs)")
    results = rubric.score(cols, specs_from_meta({"field": field_meta(match)}))
    if m.get("fork"):
        results["fork"] = {"run_id": m["fork"]["run_id"], "tick": m["fork"]["tick"]}
    if answered is not None:
        mark_silent(results, answered)
    recorded = m["results"]
    if any(a.get("decisions") for a in (recorded or {}).get("agents", [])):
        report.notes.append(f"match {m['match_id']}: decision grades were not checked (only the scorecard is "
                            "derived again)")
    _compare(m, "results", _ungraded(recorded), _ungraded(results))


def _ungraded(results: dict | None) -> dict | None:
    if not results:
        return results
    return {**results, "agents": [{k: v for k, v in a.items() if k != "decisions"} for a in results["agents"]]}


def _compare(m: dict, path: str, recorded, derived) -> None:
    """The first place where the recorded value and the derived one differ."""
    if isinstance(recorded, dict) and isinstance(derived, dict):
        for k in sorted(set(recorded) | set(derived)):
            if k not in recorded or k not in derived:
                _diverge(m, f"{path}.{k} is {'missing from the bundle' if k not in recorded else 'not derived'}")
            _compare(m, f"{path}.{k}", recorded[k], derived[k])
    elif isinstance(recorded, list) and isinstance(derived, list):
        if len(recorded) != len(derived):
            _diverge(m, f"{path} holds {len(recorded)} entries; played again, {len(derived)}")
        for k, (a, b) in enumerate(zip(recorded, derived)):
            _compare(m, f"{path}[{k}]", a, b)
    elif recorded != derived or type(recorded) is not type(derived) and not _numbers(recorded, derived):
        _diverge(m, f"{path}: the bundle says {recorded!r}, played again {derived!r}")


def _numbers(a, b) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


def _actions(m: dict, seat: dict, turn: dict, apt: int) -> list:
    """What the seat played in a recorded turn, derived from its reply as the live seat did; the
    recorded actions and refusals must be what the reply gives."""
    if turn["error"] is not None:
        if seat["provider"] == AGENT:
            return [TIMEOUT_WAIT] if turn["error"] == MISSED else []
        return [TIMEOUT_WAIT if turn["error"] == TIMED_OUT else NO_REPLY_WAIT]
    if seat["provider"] == AGENT:
        acts = from_list(json.loads(turn["reply"])["actions"])[:apt]
    else:
        acts = from_reply(reply_of(turn), seat.get("format") or "tools")[:apt]
    refused = [a.transcript() for a in acts if isinstance(a, Refused)]
    if json.loads(actions_json(acts)) != (turn["actions"] or []) or refused != list(turn["refused"] or []):
        _diverge(m, "the recorded actions are not what the recorded reply gives", turn["tick"], turn["seat"])
    return acts


def _replay_seats(m: dict, job: Job, match, rows: list[dict]) -> dict[int, dict]:
    """The model and agent seats' recorded turns played through the seat layer's replay; returns each
    seat's answered count (what the scorecard's `replied` reads)."""
    roster = m["roster"]
    again, answered = [], {}
    for t in rows:
        seat = roster[t["seat"]]
        acts = _actions(m, seat, t, match.apt)
        again.append({"tick": t["tick"], "seat": t["seat"], "turn": t, "play": played.encode(acts), "memory": None})
        answered.setdefault(t["seat"], {"answered": 0})["answered"] += t["error"] is None
    # no key and no address: a seat built for the replay never sends (a turn the bundle lacks is a
    # divergence), and a provider whose seats need an address with the key gets one that resolves nowhere
    nowhere = {i: Credential(None, base_url=NOWHERE) for i in range(len(roster))}
    seats = ModelSeats(nowhere, to_replay={"turns": again, "seats": {}}, agent_seat=_agent_seat, replay_only=True)
    tick = m["stop"]["tick"]
    try:
        seats.play(match, job, job.usage(), should_stop=lambda: match.tick >= tick, on_tick=lambda t: None)
    except NotRecorded as e:
        _diverge(m, "the match asks for a turn the bundle does not hold", e.tick, e.seat)
    match.finish(m["stop"]["reason"])
    for i, s in enumerate(roster):
        if s.get("provider") != LOCAL:
            answered.setdefault(i, {"answered": 0})
    return answered


class _Ended:
    """An agent seat's exchange where nothing is exchanged: every turn comes from the record."""

    class _End:
        async def remote(self, *args):
            return None
    end = _End()


def _agent_seat(index, job, match, *, usage=None, recorder=None, to_replay=None):
    from orchestrator.agents.player import AgentSeat

    return AgentSeat(index, job.seats[index], run_id=job.run_id, exchange=_Ended(),
                     turn_timeout_ms=job.env.get("turn_timeout_ms", 0), actions_per_turn=match.apt, usage=usage,
                     to_replay=to_replay)


def run(path: str) -> Report:
    with open(path, "rb") as f:
        return verify(f.read())
