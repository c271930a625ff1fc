"""Public match pages (no token; unlisted: the 128-bit match id is the only key): the report, the
play-by-play log and replay frames, all read from the archived event log.

The event log keeps what a seat said as it said it; these pages show it without control characters
or bidirectional overrides (the engine's `shown`), read once where the pages read the log (`_events`).

The public record names the built-in skills a seat carried and only counts its own skills: their
names and texts are private to the account.
"""
from __future__ import annotations


import numpy as np

from engine.actions import decode
from engine.kernels.codes import (ACCEPT, ACTIONS, BUILD, CRAFT, DECLINE, EVENT_KINDS, INVALID, OFFER, RAID, REASONS,
                                  RESOURCES, SAY, STARVE, TERRAINS)
from engine.observe import GLYPHS
from engine.scenario import build_match
from engine.text import shown
from orchestrator.runs import match_log
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.grading.read import public as public_decisions
from orchestrator.play.world import field_meta, seat_specs
from orchestrator.runs.pages import world_frames
from orchestrator.statuses import IN_WORLD, RUNNING, TERMINAL
from orchestrator.runs.views import results_of
from orchestrator.seats.prompt import skills_record
from orchestrator.records.run import Run
from orchestrator.store import runs


PAGE_FORMATS = ("json", "html")


def page_format(value) -> str | None:
    """?format= of the report and replay pages: json, html, or absent (then the page's default)."""
    if value is not None and value not in PAGE_FORMATS:
        raise DomainError("bad_request", f"format: should be one of {', '.join(PAGE_FORMATS)}, or omitted")
    return value


def require_match(core: Core, match_id: str):
    return _row(core, match_id)


def require_log(core: Core, match_id: str) -> None:
    """The refusal the replay's frames would meet (a damaged archive file, a log this engine cannot
    derive), answered by the page that loads them instead of a page that shows nothing."""
    _events(core, match_id)


def _row(core: Core, match_id: str) -> Run:
    row = runs.by_match(core.store.conn(), match_id)
    if row is None:
        raise DomainError("not_found", f"no match '{match_id}'")
    return row


def _public_seat(seat: dict) -> dict:
    record = skills_record(seat["skills"])
    return {"seat": seat["seat"], "name": shown(seat["name"]), "model": shown(seat["model"]),
            "provider": seat["provider"], "scaffold": seat["scaffold"], "skills": record["builtin"],
            "own_skills": record["own"], "instructions": bool(seat.get("instructions"))}


def progress(core: Core, match_id: str) -> dict:
    """Where a match stands: status, tick played so far (while running) and season length; while it
    plays on this server, `frame` is where its agents stand (a replay frame), else null."""
    row = _row(core, match_id)
    eff = row.effective
    d = core.dispatcher
    frame = d.live_frames.get(row.id) if d is not None and row.status == RUNNING else None
    return {"status": row.status, "tick": row.live_tick or 0, "season_ticks": eff["season_ticks"],
            "frame": frame}


def report(core: Core, match_id: str) -> dict:
    row = _row(core, match_id)
    eff = row.effective
    return {"match_id": match_id, "name": row.name, "status": row.status, "scenario_id": row.scenario_id,
            "scenario_hash": row.scenario_hash, "config_hash": eff["hash"], "season_ticks": eff["season_ticks"],
            "seed": eff["seed"], "spawn_seed": eff["spawn_seed"], "started_at_ms": row.started_at_ms,
            "finished_at_ms": row.finished_at_ms, "stop_reason": row.stop_reason,
            "roster": [_public_seat(s) for s in row.roster],
            "results": results_of(row),  # the run view's results, decisions included
            "decisions": public_decisions(core, row),
            "fork": _forked_from(eff), "bundle": bundle_link(row)}


def bundle_link(row) -> str | None:
    """Where the run's owner downloads the match's result bundle, once the run has ended."""
    return f"/api/v1/matches/{row.match_id}/bundle" if row.status in TERMINAL else None


def _forked_from(eff: dict) -> dict | None:
    """A fork's public record of what it plays on from: the original match (its own report) and the tick."""
    f = eff.get("fork")
    return {"match_id": f["match_id"], "tick": f["tick"]} if f else None


def _events(core: Core, match_id: str):
    row = _row(core, match_id)
    return public_log(*match_log.read_events(core, match_id, row.batch_id))


def public_log(cols: dict | None, meta: dict | None) -> tuple[dict | None, dict | None]:
    """An archived log's columns and metadata with their texts and names as the public pages show them."""
    if cols is not None:
        text = cols["text"]
        for r in np.nonzero(text != None)[0]:  # noqa: E711  (say and invalid rows only)
            text[r] = shown(text[r])
        meta["field"] = [dict(a, name=shown(a["name"]), model=shown(a["model"])) for a in meta["field"]]
    return cols, meta


def display_names(field: list[dict]) -> list[str]:
    """One unique label per agent: anchors marked, repeated names numbered (two seats may share a name
    with each other or with an anchor)."""
    base = [a["name"] + (" (anchor)" if a.get("anchor") else "") for a in field]
    seen: dict[str, int] = {}
    out = []
    for name in base:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if base.count(name) == 1 else f"{name} #{seen[name]}")
    return out


def _who(names: list[str], i: int) -> str:
    return names[i] if 0 <= i < len(names) else f"agent {i}"


def _units(n: int) -> str:
    return f"{n} unit{'' if n == 1 else 's'}"


def _raid_outcome(f: int, g: int, v: float) -> str:
    """A raid is won when it takes goods (world-rubric-3); one past the odds that takes nothing is not."""
    if f != 1:
        return "fails"
    if g == 0:
        return "gets through but takes nothing: not a win"
    return f"wins: takes {_units(g)} worth {v:.1f}"


def _describe(act: dict, cols: dict, r: int, names: list[str]) -> str:
    """What an applied action did, in words, from the row's outcome columns (docs/EVENTS.md)."""
    f, g, v = int(cols["f"][r]), int(cols["g"][r]), float(cols["v"][r])
    name = act["action"]
    if name == "move":
        return f"moves {act['direction']} to ({f}, {g})"
    if name == "gather":
        return f"gathers {g} {RESOURCES[f] if 0 <= f < len(RESOURCES) else '?'}"
    if name == "eat":
        return f"eats (satiety {f}, {g} food left)"
    if name == "build":
        return "builds a shelter"
    if name == "craft":
        return "crafts a tool"
    if name == "offer":
        return (f"offers {_who(names, act['to'])} {act['give_qty']} {act['give']} for {act['want_qty']} "
                f"{act['want']} (offer {f})")
    if name == "accept":
        return f"accepts offer {act['offer_id']} from {_who(names, f)}: traded"
    if name == "decline":
        return f"declines offer {act['offer_id']} from {_who(names, f)}"
    if name == "raid":
        return f"raids {_who(names, act['target'])} and {_raid_outcome(f, g, v)}"
    if name == "say":
        return f"says to {_who(names, act['to']) if 'to' in act else 'everyone'}: \"{act['text']}\""
    if name == "wait":
        return "waits" + {1: " (turn timed out)", 2: " (no reply)"}.get(int(cols["a"][r]), "")
    return name


def log_text(core: Core, match_id: str) -> str:
    row = _row(core, match_id)
    cols, meta = _events(core, match_id)
    if cols is None:
        if row.status == RUNNING:
            return f"{row.name}: the match is still playing; the play-by-play appears when it is archived.\n"
        return f"{row.name}: {row.status}; no play-by-play was archived for this match.\n"
    return play_by_play(row.name, match_id, cols, meta)


def play_by_play(title: str, match_id: str, cols: dict, meta: dict) -> str:
    """The public log's text from the match's columns and metadata (as `public_log` gives them)."""
    names = display_names(meta["field"])
    messages = {int(cols["b"][r]): cols["text"][r] for r in np.nonzero(cols["text"] != None)[0]}  # noqa: E711
    table = [messages.get(k, "") for k in range(max(messages, default=-1) + 1)]
    lines = [f"# {title} ({match_id})", f"# field: {', '.join(names)}"]
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
        if cols["ok"][r]:
            lines.append(f"  {who} {_describe(act, cols, r, names)}")
            continue
        args = ", ".join(f"{a} {_who(names, v) if a in ('to', 'target') else v}" for a, v in act.items()
                         if a != "action")
        lines.append(f"  {who} tried to {act['action']}{' (' + args + ')' if args else ''}: refused, "
                     f"{REASONS[cols['reason'][r]].replace('_', ' ')}")
    return "\n".join(lines) + "\n"


# one colour per agent, the same on the map, the legend, the timeline and the scorecard (Tableau 10 + 10)
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def links(match_id: str) -> dict:
    base = f"/api/matches/{match_id}"
    return {"report": f"{base}/report?format=html", "log": f"{base}/log", "replay": f"{base}/replay"}


# The timeline's kinds, in the order the page lists its filters.
MOMENTS = ("raid", "trade", "offer", "decline", "build", "craft", "say", "starve")


def _units(g: int) -> str:
    return f"{g} unit" + ("" if g == 1 else "s")


def _moment(k: int, cols: dict, r: int, names: list[str]) -> tuple[str, str] | None:
    """(kind, words) of a row worth marking under the replay: applied actions that touch another
    agent or build something, and starvation; None for the rest (moves, gathers, meals, waits)."""
    who = _who(names, int(cols["agent"][r]))
    if k == STARVE:
        return "starve", f"{who} starved"
    if not cols["ok"][r]:
        return None
    if k == RAID:
        target = _who(names, int(cols["a"][r]))
        return "raid", f"{who} raided {target}: {_raid_outcome(int(cols['f'][r]), int(cols['g'][r]), float(cols['v'][r]))}"
    if k == ACCEPT:
        return "trade", f"{who} accepted {_who(names, int(cols['f'][r]))}'s offer"
    if k == DECLINE:
        return "decline", f"{who} declined {_who(names, int(cols['f'][r]))}'s offer"
    if k == OFFER:
        give, want = RESOURCES[int(cols["b"][r])], RESOURCES[int(cols["d"][r])]
        return "offer", (f"{who} offered {_who(names, int(cols['a'][r]))} {int(cols['c'][r])} {give} for "
                         f"{int(cols['e'][r])} {want}")
    if k == BUILD:
        return "build", f"{who} built a shelter"
    if k == CRAFT:
        return "craft", f"{who} crafted a tool"
    if k == SAY:
        to = int(cols["a"][r])
        return "say", f"{who} to {'everyone' if to < 0 else _who(names, to)}: \"{cols['text'][r] or ''}\""
    return None


def timeline(cols: dict, names: list[str]) -> list[dict]:
    """The moments worth marking under the replay (MOMENTS), in log order; a raid says whether it was won."""
    out = []
    for r in np.nonzero(np.isin(cols["kind"], (RAID, ACCEPT, DECLINE, OFFER, BUILD, CRAFT, SAY, STARVE)))[0]:
        k, i, t = int(cols["kind"][r]), int(cols["agent"][r]), int(cols["tick"][r])
        found = _moment(k, cols, r, names)
        if found is None:
            continue
        kind, text = found
        out.append({"tick": t, "agent": i, "kind": kind, "text": text,
                    **({"won": int(cols["f"][r]) == 1 and int(cols["g"][r]) > 0} if kind == "raid" else {})})
    return out


def _field_view(field: list[dict]) -> list[dict]:
    return [{"name": a["name"], "label": label, "model": a["model"], "anchor": a["anchor"],
             "color": PALETTE[i % len(PALETTE)]} for i, (a, label) in enumerate(zip(field, display_names(field)))]


def replay_frames(core: Core, match_id: str) -> dict:
    """The map (regenerated from the recorded seeds: the engine is deterministic), each agent's state at
    the end of every tick (world_frames.py), the timeline's moments and how much of
    the season was played. A frame's agent is [x, y, alive, health, satiety, net worth, wood, stone,
    food, ore, relics, shelter, tool] (`holdings` names the last seven; empty when the frames come from
    the log alone, which holds no inventories)."""
    row = _row(core, match_id)
    eff = row.effective
    cols, meta = _events(core, match_id)
    playing = cols is None and row.status in IN_WORLD
    season = {"season_ticks": eff["season_ticks"], "ticks_played": None, "stop_reason": row.stop_reason}
    if cols is None and not playing:
        return {"match_id": match_id, "status": row.status, **season, "terrain": [], "agents": [],
                "frames": [], "events": [], "moments": list(MOMENTS), "holdings": [], "links": links(match_id)}
    m = build_match(eff["season_ticks"], eff["env"], seat_specs(row.roster))
    m.config.reseeds = [tuple(r) for r in (meta or {}).get("reseeds") or []]  # a fork's fresh streams, if any
    terrain = ["".join(GLYPHS[TERRAINS[t]] for t in line) for line in m.world.terrain]
    legend = {v: k for k, v in GLYPHS.items()}
    if playing:  # not archived yet: the map (the engine is deterministic) and the field, for live positions
        return {"match_id": match_id, "status": row.status, **season, "terrain": terrain, "legend": legend,
                "agents": _field_view(field_meta(m)), "frames": [], "events": [], "moments": list(MOMENTS),
                "holdings": [], "links": links(match_id)}
    frames = world_frames.from_replay(m, cols)
    holdings = list(world_frames.HOLDINGS) if frames is not None else []
    if frames is None:
        frames = world_frames.from_log(cols, len(meta["field"]))
    names = display_names(meta["field"])
    return {"match_id": match_id, "status": row.status, **season, "ticks_played": world_frames.ticks_played(cols),
            "terrain": terrain, "legend": legend, "agents": _field_view(meta["field"]), "frames": frames,
            "events": timeline(cols, names), "moments": list(MOMENTS), "holdings": holdings,
            "kinds": list(EVENT_KINDS), "links": links(match_id)}
