"""Public match pages (no token; unlisted: the 128-bit match id is the only key): the report, the
play-by-play log and replay frames, all read from the archived event log.

The public record names the built-in skills a seat carried and only counts its own skills: their
names and texts are private to the account.
"""
from __future__ import annotations

import json

import numpy as np

from engine.actions import decode
from engine.kernels.codes import ACTIONS, EVENT_KINDS, INVALID, MOVE, REASONS, SPAWN, STARVE, TERRAINS
from engine.observe import GLYPHS
from engine.scenario import build_match
from orchestrator.archive_store import Archive
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.playing import seat_specs
from orchestrator.seats.prompt import skills_record


def require_match(core: Core, match_id: str):
    return _row(core, match_id)


def _row(core: Core, match_id: str):
    row = core.store.one("SELECT * FROM runs WHERE match_id = ?", (match_id,))
    if row is None:
        raise DomainError("not_found", f"no match '{match_id}'")
    return row


def _public_seat(seat: dict) -> dict:
    record = skills_record(seat["skills"])
    return {"seat": seat["seat"], "name": seat["name"], "model": seat["model"], "provider": seat["provider"],
            "scaffold": seat["scaffold"], "skills": record["builtin"], "own_skills": record["own"],
            "instructions": bool(seat.get("instructions"))}


def report(core: Core, match_id: str) -> dict:
    row = _row(core, match_id)
    eff = json.loads(row["effective"])
    return {"match_id": match_id, "name": row["name"], "status": row["status"], "scenario_id": row["scenario_id"],
            "scenario_hash": row["scenario_hash"], "config_hash": eff["hash"], "season_ticks": eff["season_ticks"],
            "seed": eff["seed"], "spawn_seed": eff["spawn_seed"], "started_at_ms": row["started_at_ms"],
            "finished_at_ms": row["finished_at_ms"], "stop_reason": row["stop_reason"],
            "roster": [_public_seat(s) for s in json.loads(row["roster"])],
            "results": json.loads(row["results"]) if row["results"] else None}


def _events(core: Core, match_id: str):
    row = _row(core, match_id)
    return Archive.of(core.data_dir, core.config).read_events(match_id, row["batch_id"])


def log_text(core: Core, match_id: str) -> str:
    row = _row(core, match_id)
    cols, meta = _events(core, match_id)
    if cols is None:
        if row["status"] == "running":
            return f"{row['name']}: the match is still playing; the play-by-play appears when it is archived.\n"
        return f"{row['name']}: {row['status']}; no play-by-play was archived for this match.\n"
    names = [a["name"] for a in meta["field"]]
    messages = {int(cols["b"][r]): cols["text"][r] for r in np.nonzero(cols["text"] != None)[0]}  # noqa: E711
    table = [messages.get(k, "") for k in range(max(messages, default=-1) + 1)]
    lines = [f"# {row['name']} ({match_id})", f"# field: {', '.join(names)}"]
    tick = -1
    for r in range(len(cols["tick"])):
        k, i = int(cols["kind"][r]), int(cols["agent"][r])
        if k not in range(len(ACTIONS)) and k not in (INVALID, STARVE):
            continue
        if cols["tick"][r] != tick:
            tick = int(cols["tick"][r])
            lines.append(f"tick {tick}")
        who = names[i]
        if k == STARVE:
            lines.append(f"  {who} starved")
            continue
        if k == INVALID:
            lines.append(f"  {who} sent no valid action ({REASONS[cols['reason'][r]]}: {cols['text'][r]})")
            continue
        act = decode(k, *(int(cols[c][r]) for c in "abcde"), table)
        args = " ".join(f"{a}={v}" for a, v in act.items() if a != "action")
        outcome = "" if cols["ok"][r] else f" -> refused: {REASONS[cols['reason'][r]]}"
        lines.append(f"  {who} {act['action']} {args}".rstrip() + outcome)
    return "\n".join(lines) + "\n"


def replay_frames(core: Core, match_id: str) -> dict:
    """The map (regenerated from the recorded seeds: the engine is deterministic) and each agent's
    position per tick."""
    row = _row(core, match_id)
    eff = json.loads(row["effective"])
    cols, meta = _events(core, match_id)
    if cols is None:
        return {"match_id": match_id, "status": row["status"], "terrain": [], "agents": [], "frames": []}
    m = build_match(eff["season_ticks"], eff["env"], seat_specs(json.loads(row["roster"])))
    terrain = ["".join(GLYPHS[TERRAINS[t]] for t in line) for line in m.world.terrain]
    n = len(meta["field"])
    pos = np.zeros((n, 2), dtype=int)
    alive = np.ones(n, dtype=bool)
    frames, tick = [], 0
    kinds, agents = cols["kind"], cols["agent"]
    for r in range(len(kinds)):
        t = int(cols["tick"][r])
        if t != tick:
            frames.append({"tick": tick, "agents": [[int(x), int(y), bool(a)] for (x, y), a in zip(pos, alive)]})
            tick = t
        k = kinds[r]
        if k == SPAWN:
            pos[agents[r]] = (cols["a"][r], cols["b"][r])
        elif k == MOVE and cols["ok"][r]:
            pos[agents[r]] = (cols["f"][r], cols["g"][r])
        elif k == STARVE:
            alive[agents[r]] = False
    frames.append({"tick": tick, "agents": [[int(x), int(y), bool(a)] for (x, y), a in zip(pos, alive)]})
    return {"match_id": match_id, "status": row["status"], "terrain": terrain,
            "legend": {v: k for k, v in GLYPHS.items()},
            "agents": [{"name": a["name"], "model": a["model"], "anchor": a["anchor"]} for a in meta["field"]],
            "frames": frames, "kinds": list(EVENT_KINDS)}
