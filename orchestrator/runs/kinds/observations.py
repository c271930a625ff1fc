"""What each seat of an ended world match was shown, tick by tick, rebuilt from its event log.

The transcript keeps a seat's replies, not the observations it answered (they are a function of the
match state, and the match is deterministic): feeding the logged actions back through the engine
(engine/replay.py) and rendering each seat's view before every tick gives the text the seat read,
the same render_observation a model seat's prompt and an agent seat's turn use. A log that today's
engine no longer reproduces gives nothing rather than a wrong text.
"""
from __future__ import annotations


from engine import events
from engine.replay import replay
from engine.scenario import build_match
from orchestrator.runs import match_log
from orchestrator.core import Core
from orchestrator.records.roster import plain
from orchestrator.play.world import seat_specs
from orchestrator.seats.observe_text import render_observation


def world_observations(core: Core, row, seats: set[int]) -> dict[tuple[int, int], str]:
    """{(tick, seat): observation text} for the given roster seats, at every tick each was alive."""
    if not seats or row.match_id is None:
        return {}
    cols, _ = match_log.read_events(core, row.match_id, row.batch_id)
    if cols is None:
        return {}
    eff = row.effective
    start = build_match(eff["season_ticks"], eff["env"], seat_specs(plain(row.roster)))
    shown: dict[tuple[int, int], str] = {}

    def keep(m) -> None:
        for i in seats:
            if m.agents.alive[i] and not m.done:
                shown[(m.tick, i)] = render_observation(m.observe(i))
    keep(start)
    played = replay(start.config, cols, on_tick=keep)
    return shown if events.equal(cols, played.columns()) else {}
