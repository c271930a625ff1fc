"""An arena game of a bundle played again: its recorded answers through the game loop
with the installed tools, the moves and result compared, and the grades where the
installed oracle is the one the bundle names (otherwise a note says they were not checked)."""
from __future__ import annotations

import json

from engine.arena.play import play as play_game
from orchestrator.agents.player import MISSED, move_of
from orchestrator.play.arena import tools
from orchestrator.provider_kinds import AGENT, LOCAL
from orchestrator.seats.chat import TIMED_OUT

MOVE_KEYS = ("ply", "seat", "uci", "san", "fen_before", "column")  # what a move is, before any grade


class _Recorded:
    """A model or agent seat answering as its transcript says it did, one recorded call at a time."""

    def __init__(self, m: dict, index: int, rows: list[dict], diverge):
        self.m, self.index, self.rows, self.diverge = m, index, rows, diverge
        self.agent = m["roster"][index]["provider"] == AGENT
        self.next = 0

    def answer(self, position, feedback: str | None) -> str | None:
        while True:
            if self.next >= len(self.rows):
                self.diverge(self.m, "the game asks for an answer the bundle does not hold", position.plies, self.index)
            row = self.rows[self.next]
            self.next += 1
            if row["tick"] != position.plies:
                self.diverge(self.m, f"the seat's next recorded answer is for ply {row['tick']}", position.plies,
                             self.index)
            if row["error"] is not None:
                if row["error"] in (TIMED_OUT, MISSED):
                    return None
                continue  # a provider fault: the seat was asked again within the turn
            actions = row["actions"] or []
            if self.agent and move_of(json.loads(row["reply"])["actions"]) != (str(actions[0]) if actions else ""):
                self.diverge(self.m, "the recorded move is not what the recorded reply gives", row["tick"], self.index)
            return str(actions[0]) if actions else ""


def replay_game(m: dict, rows: list[dict], report, diverge, compare) -> None:
    env, roster = m["scenario"]["env"], m["roster"]
    answerers = {i: _Recorded(m, i, [r for r in rows if r["seat"] == i], diverge)
                 for i, s in enumerate(roster) if s["provider"] != LOCAL}
    cancelled = (m["results"] or {}).get("game", {}).get("termination") == "cancelled"
    plies = [0]
    out = play_game(m["scenario"]["id"], [{"name": s["name"], "model": s["model"]} for s in roster],
                    first_seat=env["first_seat"], seed=env["seed"], tools=tools(), answerers=answerers,
                    should_stop=lambda: cancelled and plies[0] >= m["stop"]["tick"],
                    on_ply=lambda p: plies.__setitem__(0, p))
    for i, a in answerers.items():
        if a.next != len(a.rows):
            diverge(m, f"the bundle holds {len(a.rows) - a.next} answers of the seat the game never asked for",
                    None, i)
    recorded, derived = m["results"], out["results"]
    oracle, installed = recorded["game"].get("oracle"), derived["game"].get("oracle")
    if oracle == installed:
        compare(m, "moves", m["played"]["moves"], out["moves"])
        compare(m, "results", recorded, derived)
        return
    compare(m, "moves", [{k: v for k, v in mv.items() if k in MOVE_KEYS} for mv in m["played"]["moves"]],
            [{k: v for k, v in mv.items() if k in MOVE_KEYS} for mv in out["moves"]])
    for k in ("result", "termination", "plies"):
        compare(m, f"results.game.{k}", recorded["game"].get(k), derived["game"].get(k))
    report.notes.append(f"match {m['match_id']}: the bundle's oracle is {json.dumps(oracle)} and this "
                        f"installation's is {json.dumps(installed)}: moves and result checked, grades not checked")
