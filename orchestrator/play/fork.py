"""Playing a fork where its job plays (docs/FORKS.md): the original's log read from the
archive, the state at the fork's tick rebuilt (the engine's fork module, on the grader's rebuild) and the match
played on from there; the memory of each model seat kept from the original restored from its
transcript.

A job's `meta["fork"]` is the run's RunFork (built at admission) as JSON data: the original's match
and archive key, the tick, the continuation seed, the seats changed, and per roster seat the scripted
policy that played it through the whole original log (None where a model, an agent or several
players did), so the rebuild plays those seats' policies and their memory and streams come back as
they were. A worker process keeps the last rebuilds: every trial of a forked series starts from one.
"""
from __future__ import annotations

import functools
import json
from dataclasses import replace
from typing import Sequence

from analytics.archive.store import Archive
from engine.fork import at_tick, fork
from engine.match import Match, MatchConfig
from engine.observe import observation
from engine.rollouts import config_of, rebuild
from engine.scenario import build_match, local_policy
from orchestrator.records.fork import RunFork
from orchestrator.records.roster import Seat
from orchestrator.seats.memory import held
from orchestrator.seats.observe_text import render_observation
from orchestrator.records.turn import Said
from orchestrator.seats.reply import Reply
from orchestrator.provider_kinds import UNPAID


def fork_of(job) -> RunFork | None:
    """The job's fork record, None for a job that plays no fork."""
    f = job.meta.get("fork")
    return RunFork.model_validate(f) if f else None


def played_policies(roster: Sequence[Seat], record: RunFork | None) -> list[str | None]:
    """Per roster seat of a run: the scripted policy that played it from tick 0 to its end, else None
    (a model or agent seat, or one a fork handed to another player: `mixed`); record: the run's own
    fork record, None for a run that is no fork."""
    mixed = set(record.mixed) if record is not None else set()
    return [local_policy(s.model) if s.local and i not in mixed else None
            for i, s in enumerate(roster)]


def played_config(meta: dict, cols: dict, env: dict, policies: list[str | None]) -> MatchConfig:
    """The original match's config as it was played: its archived meta (a fork's reseeds included),
    the run's resources, and its scripted seats playing their policies."""
    config = config_of(dict(meta, resources=env["resources"]), cols)
    for i, policy in enumerate(policies):
        if policy is not None:
            config.agents[i] = replace(config.agents[i], policy=policy)
    return config


@functools.lru_cache(maxsize=4)
def _original(uri: str, match_id: str, key: str | None):
    cols, meta = Archive(uri).read_events(match_id, key)
    if cols is None:
        raise LookupError(f"the original match {match_id} is not in the archive")
    return cols, meta


@functools.lru_cache(maxsize=4)
def _rebuilt(uri: str, match_id: str, key: str | None, env_json: str, policies: tuple, ticks: tuple):
    return rebuilt(_original(uri, match_id, key), json.loads(env_json), policies, ticks)


def rebuilt(original: tuple[dict, dict], env: dict, policies, ticks: tuple):
    """(config, cols, snapshots) of the original match (its event columns and metadata) at the ticks."""
    cols, meta = original
    config = played_config(meta, cols, env, list(policies))
    return config, cols, rebuild(config, cols, ticks, [])


def new_match(job, seat_specs, original: tuple[dict, dict] | None = None) -> Match:
    """The job's match, ready to play: a new one, or for a fork the original rebuilt to its tick.
    original: the original's (event columns, metadata) when they come from elsewhere than the archive
    (a bundle's check, bundles/verify.py)."""
    f = fork_of(job)
    specs = seat_specs(job.seats)
    if not f:
        return build_match(job.season_ticks, job.env, specs)
    if original is None:
        config, cols, snap = _rebuild(job, f, _memory_ticks(job, f))
    else:
        config, cols, snap = rebuilt(original, job.env, f.played, (f.tick,))
    # the seats handed over, and kept scripted seats the rebuild fed their logged actions (several
    # players had them before: a fork's fork): each plays its policy from the tick, its memory fresh
    restarted = {i: specs[i] for i, policy in enumerate(f.played)
                 if i in f.changed or (policy is None and specs[i].policy is not None)}
    return fork(config, cols, f.tick, restarted, f.continuation_seed, snap)


def _rebuild(job, f: RunFork, extra: tuple = ()):
    ticks = tuple(sorted({f.tick, *extra}))
    return _rebuilt(f.archive, f.match_id, f.key, json.dumps(job.env, sort_keys=True), tuple(f.played), ticks)


def kept_models(job) -> list[int]:
    f = fork_of(job)
    changed = f.changed if f else ()
    # agent and scripted players keep no conversation of ours
    return [i for i, s in enumerate(job.seats) if i not in changed and s["provider"] not in UNPAID]


@functools.lru_cache(maxsize=4)
def _turns(uri: str, match_id: str, seat: int, tick: int) -> tuple:
    """The seat's answered turns before tick that its memory held then (the memory's `held`: turns are
    dropped in blocks, so how many depends on how many it had answered)."""
    rows, _ = Archive(uri).read_transcript(match_id, seat=seat, limit=1_000_000)
    answered = [r for r in rows if r["tick"] < tick and r["error"] is None and r["reply"] is not None]
    return tuple(json.dumps(r) for r in answered[len(answered) - held(len(answered)):])


def _memory_ticks(job, f: RunFork) -> tuple:
    return tuple(json.loads(r)["tick"] for i in kept_models(job) for r in _turns(f.archive, f.match_id, i, f.tick))


def memories(job) -> dict[int, list[tuple[str, Reply, int]]]:
    """Per model seat kept from the original: its memory as it stood before the fork's tick, as
    (observation text, reply, actions played) for its chat to remember (SeatPlayer.memory). The
    observations are the original's, rebuilt at each remembered tick."""
    f = fork_of(job)
    if not f:
        return {}
    config, cols, snap = _rebuild(job, f, _memory_ticks(job, f))
    out = {}
    for i in kept_models(job):
        entries = []
        for raw in _turns(f.archive, f.match_id, i, f.tick):
            turn = json.loads(raw)
            m = at_tick(config, snap, snap.index(turn["tick"]), cols)
            played = len(turn["actions"] or []) + len(turn["refused"] or [])
            tools = (job.seats[i].get("format") or "tools") == "tools"
            entries.append((render_observation(observation(m, i)), reply_of(turn, calls=tools), played))
        out[i] = entries
    return out


def reply_of(turn: dict, *, calls: bool = True) -> Reply:
    """A transcript row's reply as the provider gave it (the turn record's `Said`, decoded): its text and
    tool calls; call ids are not kept, so they are numbered as a reply without ids is. calls: whether
    the seat made tool calls (the `tools` format)."""
    said = Said.decode(turn["reply"], calls=calls)
    message = ([{"type": "text", "text": said.text}] if said.text else []) + [
        {"type": "tool_use", "id": f"toolu_{k}", "name": c.name,
         "input": c.arguments if isinstance(c.arguments, dict) else _object(c.arguments)}
        for k, c in enumerate(said.calls)]
    return Reply([(c.name, c.arguments, None) for c in said.calls], said.text, message=message,
                 refusal=turn.get("refusal"), truncated=bool(turn.get("truncated")))


def _object(arguments) -> dict:
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
