"""Property-based, in process (issue 38 F1): thousands of whole runs whose agent and models send
arbitrary text (tests/seats/text_inputs.py). However the text reads, the run finishes, its archived
transcript holds every metered turn, what was said stays in the event log as said (or, from a model,
is refused as bad_arguments when no log can hold it), and its public pages render.

Each run is the real path with only the network taken out: the agent's submission through the
service's check (orchestrator.runs.agent_turns.read_actions) and the exchange of turns, the model seats
(both reply formats) with their provider's answer as the generated response body, the engine, the
worker's packing and landing in an archive, and the public pages' rendering from what it reads back.
The served twin, a few runs through a real server on Ray, is tests/agents/test_text.py's."""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import tempfile
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analytics.archive.store import Archive
from engine.kernels.codes import INVALID, REASONS, SAY
from engine.scenario import build_match, resolve_env
from engine.text import writable
from orchestrator.agents.exchange import Exchange
from orchestrator.errors import DomainError
from orchestrator.play.job import Job, for_head
from orchestrator.play.world import packed, seat_specs
from orchestrator.runs.pages.world import display_names, play_by_play, public_log, timeline
from orchestrator.seats.player import SeatPlayer, play_tick
from tests.seats.text_inputs import APT, SEATS, SHOWN_BAD, bodies, encodes, holds_unicode, no_hidden, turn

TICKS = 2
EXAMPLES = 2000


class Local:
    """The exchange's methods called in this process, spelled as through its Ray handle (`.remote`)."""

    def __init__(self, exchange: Exchange):
        self.exchange = exchange

    def __getattr__(self, name: str):
        return SimpleNamespace(remote=getattr(self.exchange, name))


def model_seat(index: int, answers: list[str]) -> SeatPlayer:
    """A real model seat whose provider answers `answers` in turn: only the network is taken out (the
    request is still built, its memory holding the earlier replies)."""
    seat = SeatPlayer(index, SEATS[index], key="k", client=SimpleNamespace(pool=None), actions_per_turn=APT)
    sent = iter(answers)

    async def post(payload: bytes, deadline: float):
        return json.loads(next(sent))  # as the client reads a 2xx body
    seat.chat._post = post
    return seat


async def agent(exchange: Exchange, run_id: str, tick: int, sent: list) -> None:
    """The agent's program: asks for its turn, sends the generated actions through the service's check,
    and a chosen wait instead when they are refused (as a program does after a 400)."""
    from orchestrator.runs.agent_turns import read_actions  # once orchestrator.play is in: they import each other

    got = await exchange.ask(run_id, 0, 10_000)
    assert got["status"] == "your_turn" and got["tick"] == tick
    encodes(got)  # the turn a GET answers, with whatever the other seats said
    raw = {"tick": tick, "actions": sent}
    try:
        body = read_actions(raw, APT)
        reply = json.dumps(raw, ensure_ascii=False)  # as submit_actions records it
    except DomainError as e:
        assert e.code in ("bad_actions", "bad_request"), e
        encodes({"error": e.code, "message": e.message})
        body = {"tick": tick, "actions": []}
        reply = json.dumps(body)
    else:
        assert holds_unicode(raw), "text no run can hold passed the door"
    assert (await exchange.submit(run_id, 0, tick, body["actions"], reply, "token:prop")).get("ok")


async def season(turns: list, run_id: str):
    from orchestrator.agents.player import AgentSeat  # likewise

    env = resolve_env({"anchors": []})
    env["seed"], env["spawn_seed"] = 7, 8
    match = build_match(len(turns), env, seat_specs(SEATS))
    exchange = Exchange()
    json_answers, tools_answers = bodies(turns)
    players = {0: AgentSeat(0, SEATS[0], run_id=run_id, exchange=Local(exchange), turn_timeout_ms=10_000,
                            actions_per_turn=APT),
               1: model_seat(1, json_answers), 2: model_seat(2, tools_answers)}
    while not match.done:
        await asyncio.gather(play_tick(match, players), agent(exchange, run_id, match.tick, turns[match.tick][0]))
    await players[0].ended(match.tick - 1)
    return match, env, players


def first_say(reply: str) -> str | None:
    """The text of the say a generated json reply opens with, when the reply is that object alone."""
    try:
        obj = json.loads(reply)
    except ValueError:
        return None
    first = obj.get("actions", [None])[0] if isinstance(obj, dict) and obj.get("actions") else None
    if isinstance(first, dict) and set(first) == {"action", "text"} and first["action"] == "say":
        return first["text"]
    return None


def check_run(turns: list, archive_uri: str) -> None:
    run_id, match_id = f"run_{secrets.token_hex(12)}", secrets.token_hex(16)
    match, env, players = asyncio.run(season(turns, run_id))
    job = Job(run_id=run_id, match_id=match_id, data_dir="", season_ticks=len(turns), env=env, seats=SEATS,
              meta={"scenario_id": "svc:custom-base-v1", "node_id": "here"}, archive=archive_uri, archive_node="here")
    transcript = sorted((t for p in players.values() for t in p.transcript), key=lambda t: (t["tick"], t["seat"]))
    played = SimpleNamespace(turns={i: p.turns for i, p in players.items()}, transcript=transcript)
    usage = [dict(p.usage) for p in players.values()]
    row = for_head(packed(job, match, "season_end", played, usage, 0.0, None, 0), job)  # the worker's record
    assert row.status == "finished" and row.error is None and row.archived, row.error
    metered = sum(p.usage["agent_turns"] for p in players.values())
    assert metered == len(SEATS) * len(turns)

    archive = Archive(archive_uri)
    kept, more = archive.read_transcript(match_id, limit=500)
    assert len(kept) == metered and not more  # every metered turn
    encodes(kept)  # the owner's transcript page
    for t, (_, reply, _) in enumerate(turns):
        assert kept[len(SEATS) * t + 1]["reply"] == writable(reply)  # the model's words, where UTF-8 can hold them

    said, _ = archive.read_events(match_id)  # the event log keeps what was said
    for t, (_, reply, _) in enumerate(turns):
        words = first_say(reply)
        if words is None:
            continue
        rows = [r for r in range(len(said["tick"])) if said["tick"][r] == t and said["agent"][r] == 1]
        # the action is refused whole when any of its text is invalid, even past the 280 characters the log keeps
        if holds_unicode(words):
            assert any(said["kind"][r] == SAY and said["text"][r] == words[:280] for r in rows)
        else:  # refused like any malformed argument, never a failed run
            assert any(said["kind"][r] == INVALID and REASONS[said["reason"][r]] == "bad_arguments" for r in rows)

    cols, meta = public_log(*archive.read_events(match_id))
    log = play_by_play("a run", match_id, cols, meta)
    moments = timeline(cols, display_names(meta["field"]))
    for page in (log, moments, json.loads(row.results)):  # the results as a response carries them
        encodes(page)
    assert no_hidden(log) and not any(SHOWN_BAD.search(m["text"]) for m in moments)


@pytest.fixture(scope="module")
def archive_uri():
    """In memory where the machine has one (/dev/shm): thousands of small matches land here, and a
    disk's file creation would take most of the test's time."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="text-props-", dir=shm) as d:
        yield d


# a failing example's text can run past Hypothesis's repr limit: its warning would hide the failure itself
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                 HealthCheck.function_scoped_fixture])
@given(turns=st.lists(turn, min_size=TICKS, max_size=TICKS))
@example(turns=[([], "", ([], "")),  # a say cut to 280 characters in the log, its invalid text past the cut (CI)
                ([], json.dumps({"actions": [{"action": "say", "text": "z" * 300 + "\ud800"}]}), ([], ""))])
def test_any_text_from_agents_and_models_plays_archives_and_renders(archive_uri, turns):
    check_run(turns, archive_uri)
