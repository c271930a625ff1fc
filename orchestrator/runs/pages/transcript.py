"""A run's transcript: every model turn of its match, for the run's owner only (never a public page).

The rows are archived beside the match's events when the match ends; a run
still playing, or one whose seats are all scripted, has none yet. Until then they are the store's
(the recorder's rows), and they stay there for a run whose match was never archived, which keeps its
transcript whatever ended it.
"""
from __future__ import annotations

import re

from analytics.archive.format import transcript_rows, transcript_table
from orchestrator import finite
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs import match_log
from orchestrator.statuses import TERMINAL
from orchestrator.runs.service import READ, run_row
from orchestrator.store import turns as stored_turns
from orchestrator.validation import integer_param

_DIGITS = re.compile(r"[0-9]{1,9}")  # a cursor
DEFAULT_LIMIT, MAX_LIMIT = 100, 500


def paged(core: Core, principal: Principal, run_id: str, seat, cursor, limit) -> tuple:
    """The owner's run row and a page's seat, offset and limit, checked: the one paging rule of the
    run's transcript and of its graded decisions."""
    require(principal, READ)
    row = run_row(core, principal, run_id)
    n_seats = len(row.roster)
    seat = integer_param(seat, "seat", 0, n_seats - 1)
    limit = integer_param(limit, "limit", 1, MAX_LIMIT, default=DEFAULT_LIMIT)
    if cursor is not None and not (isinstance(cursor, str) and _DIGITS.fullmatch(cursor)):
        raise DomainError("bad_request", "cursor: send the next_cursor of a previous page")
    return row, seat, int(cursor or 0), limit


def get_transcript(core: Core, principal: Principal, run_id: str, *, seat=None, cursor=None, limit=None) -> dict:
    """{turns: [{tick, seat, reply, actions, refused, latency_ms, input_tokens, output_tokens, error}],
    next_cursor}: in tick then seat order, optionally one seat's only."""
    row, seat, offset, limit = paged(core, principal, run_id, seat, cursor, limit)
    turns, more = _page(core, row, seat=seat, offset=offset, limit=limit)
    return {"turns": _shown(turns), "next_cursor": str(offset + len(turns)) if more else None}


def _page(core: Core, row, **page) -> tuple[list[dict], bool]:
    # the store's rows go when the match is archived (lifecycle.ended_many), in the same transaction: a
    # run that ended with its turns still there (its record could not be written) reads them
    kept = stored_turns.kept(core.store.conn(), row.id)
    if row.status in TERMINAL and row.match_id is not None and not kept:
        return match_log.read_transcript(core, row.match_id, **page)
    # a row an earlier version kept with Infinity as a token count or latency reads it as null
    return transcript_rows(transcript_table(stored_turns.transcript(core.store.conn(), row.id)), **page)


def every_turn(core: Core, row) -> list[dict]:
    """All of a run's transcript turns at once (an owner's export), in tick then seat order."""
    return _shown(_page(core, row, seat=None, offset=0, limit=2 ** 62)[0])


def _shown(turns: list[dict]) -> list[dict]:
    """Turns as every surface shows them: a number an earlier version kept that JSON cannot carry
    (an agent's `steps: 1e400`) reads as null, and the turn's `note` says where."""
    out = []
    for t in turns:
        t, bad = finite.nulled(t)
        out.append({**t, "note": finite.note(bad)} if bad else t)
    return out


def observations(core: Core, principal: Principal, run_id: str, turns: list[dict]) -> dict[tuple[int, int], str]:
    """{(tick, seat): the observation text the seat answered} for the given turns of an ended match,
    rebuilt from its event log (the world's kind; an arena game gives none, docs/FORMATS.md); {} while
    the run plays or where today's engine does not reproduce the log."""
    from orchestrator.runs import kinds

    require(principal, READ)
    row = run_row(core, principal, run_id)
    if row.status not in TERMINAL or row.match_id is None or not turns:
        return {}
    shown = kinds.of(row.scenario_id).observations(core, row, {t["seat"] for t in turns})
    wanted = {(t["tick"], t["seat"]) for t in turns}
    return {k: v for k, v in shown.items() if k in wanted}
