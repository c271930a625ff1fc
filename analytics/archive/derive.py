"""A scripted match kept as its inputs: what decides it, and the one function that plays it again.

A match whose every roster seat is scripted (`local/<policy>`, anchors as ever) is decided by its
as-played configuration (seeds, resources, actions per turn, the field with each agent's policy),
where it stopped, and the engine. The archive keeps that `record` beside the match's seat rows, with
the engine's digest, a digest of the final state and one of the scores; its event log is a cache,
written only on demand (`regenerate`, kept by the derived-log cache and by materializing).

A regenerated log is served as the match's only when the engine is the recorded one and the replay
ends in the recorded final state with the recorded scores; otherwise `DerivedLogError` names the cause.
"""
from __future__ import annotations

import hashlib
import json

import pyarrow as pa

from analytics.archive.format import events_table
from engine import rubric
from engine.digest import engine_digest, state_digest
from engine.match import AgentSpec, Match, MatchConfig

KEY = "derived"  # where a seat table's (or seats file's per-match) metadata holds the record

ENGINE_CHANGED, STATE_DIFFERS, SCORES_DIFFERS = "engine_changed", "state_differs", "scores_differ"
UPGRADE_COMMAND = "studio archive materialize --all"


DERIVED, STORED = "derived", "stored"


def events_mode(config: dict | None) -> str:
    """config.toml's `[archive] events`: "derived" (the default) keeps a scripted match as its inputs,
    "stored" writes every match's log."""
    mode = ((config or {}).get("archive") or {}).get("events", DERIVED)
    if mode not in (DERIVED, STORED):
        raise ValueError(f"config.toml [archive] events: {mode!r} should be {DERIVED!r} or {STORED!r}")
    return mode


class DerivedLogError(LookupError):
    """A scripted match's log cannot be served: `cause` is one of ENGINE_CHANGED, STATE_DIFFERS,
    SCORES_DIFFERS; the message names it and says the match's results stand."""

    def __init__(self, cause: str, message: str):
        super().__init__(message)
        self.cause = cause
        self.message = message


def scores_digest(results: dict) -> str:
    return hashlib.blake2b(json.dumps(results, sort_keys=True).encode(), digest_size=16).hexdigest()


def record(match: Match, meta: dict, results: dict) -> dict:
    """What the archive keeps of a finished scripted match instead of its log. meta: the log's own
    metadata (as events_table stores it), kept whole so the regenerated table is the stored one."""
    c = match.config
    # the season, seeds and field (names, models, anchors) are the log's metadata's; the rest of the
    # config beside them, each agent's policy included
    assert (meta["season_ticks"], meta["seed"], meta["spawn_seed"]) == (c.season_ticks, c.seed, c.spawn_seed)
    return {"engine": engine_digest(), "state": state_digest(match), "scores": scores_digest(results),
            "stop": [int(match.tick), match.stop_reason], "meta": meta,
            "config": {"actions_per_turn": c.actions_per_turn, "resources": c.resources,
                       "policies": [a.policy for a in c.agents]}}


def _config(rec: dict) -> MatchConfig:
    meta, c = rec["meta"], rec["config"]
    return MatchConfig(season_ticks=meta["season_ticks"], seed=meta["seed"], spawn_seed=meta["spawn_seed"],
                       actions_per_turn=c["actions_per_turn"], resources=c["resources"],
                       agents=[AgentSpec(name=a["name"], model=a["model"], policy=p, anchor=a["anchor"])
                               for a, p in zip(meta["field"], c["policies"])])


def engine_changed(rec: dict) -> bool:
    return rec["engine"] != engine_digest()


def _not_kept(match_id: str, cause: str, why: str) -> DerivedLogError:
    return DerivedLogError(cause, f"match {match_id}'s event log was not kept: {why}. Its results stand (they "
                                  "were recorded when it was played); only its play-by-play cannot be shown")


def played(match: Match, tick: int, reason: str) -> Match:
    """A scripted match played from its start to where it stopped, and finished as it was: the one replay
    of a scripted match, here and in a result bundle's check."""
    match.run(until=tick)
    match.finish(reason)
    return match


def regenerate(match_id: str, rec: dict) -> pa.Table:
    """The match's event log, played again from its record and verified: the table the archive would
    have stored (events_table, the same metadata), or DerivedLogError."""
    if engine_changed(rec):
        raise _not_kept(match_id, ENGINE_CHANGED,
                        f"it was played under engine {rec['engine']} and this server runs engine {engine_digest()}, "
                        f"which may not replay it (its log was not kept under this engine version; "
                        f"`{UPGRADE_COMMAND}` writes such logs before an upgrade)")
    m = played(Match(_config(rec)), *rec["stop"])
    if state_digest(m) != rec["state"]:
        raise _not_kept(match_id, STATE_DIFFERS, "played again from its recorded inputs it ended in another "
                                                 "final state than the recorded one (final-state digest differs)")
    cols = m.columns()
    specs = [AgentSpec(name=a.name, model=a.model, anchor=a.anchor) for a in m.specs]
    if scores_digest(rubric.score(cols, specs)) != rec["scores"]:
        raise _not_kept(match_id, SCORES_DIFFERS, "played again from its recorded inputs it scored differently "
                                                  "from the recorded results (scores digest differs)")
    return events_table(match_id, cols, rec["meta"], m.messages)
