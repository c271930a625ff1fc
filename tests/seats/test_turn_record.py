"""One record of a turn and one ledger of spend (issue 39): model, agent and arena seats write their
transcript rows through TurnRecord, model and agent seats hand the recorder TurnRecords, and the run's
spend read from the ledger is what the recorded turns cost. The fake provider on 127.0.0.1."""
import asyncio
import json

import pytest

from engine.arena.games import GAMES
from engine.scenario import build_match, seat_specs
from orchestrator.agents.exchange import Exchange
from orchestrator.agents.player import AgentSeat
from orchestrator.play.arena_seats import ArenaSeat
from orchestrator.seats.ledger import Ledger
from orchestrator.seats.player import Credential, ModelSeats, play_tick
from orchestrator.seats.recording import OffRecord
from orchestrator.seats.turn import TurnRecord
from tests.seats.conftest import base_url, players_for, with_client
from tests.seats.test_match import job_for
from tests.seats.test_text_properties import Local

ROW = set(TurnRecord(0, 0).row())
ROUTER = {"model": "openai/gpt-4o", "provider": "router"}


class Kept(OffRecord):
    """A recorder that keeps what it is handed, as the head's store would."""

    def __init__(self):
        self.turns: list[tuple[TurnRecord, list, dict]] = []
        self.reports: list[dict] = []

    async def turn(self, turn, play, memory, totals):
        self.turns.append((turn, play, totals))

    async def report(self, tick, seats):
        self.reports.append(seats)


def test_model_and_agent_seats_record_turn_records_and_their_rows_are_the_records(fake):
    fake.default = {"calls": [("gather", {})], "usage": (100, 5)}
    roster = [ROUTER, {"model": "agent/mine", "provider": "agent"}]
    job = job_for(fake, roster, 2)
    match = build_match(2, job.env, seat_specs([s["model"] for s in roster]))
    kept, exchange = Kept(), Exchange()

    async def agent_plays(tick: int):
        got = await exchange.ask("run_x", 1, 10_000)
        assert got["tick"] == tick
        body = {"tick": tick, "actions": [{"action": "wait"}]}
        assert (await exchange.submit("run_x", 1, tick, body["actions"], json.dumps(body), "token:t")).get("ok")

    async def go(client):
        players = players_for(fake, client, {0: ROUTER})
        players[0].recorder = kept
        players[1] = AgentSeat(1, roster[1], run_id="run_x", exchange=Local(exchange), turn_timeout_ms=10_000,
                               actions_per_turn=2, recorder=kept)
        while not match.done:
            await asyncio.gather(play_tick(match, players), agent_plays(match.tick))
        await players[1].ended(match.tick - 1)
        return players

    players = asyncio.run(with_client(go))
    assert len(kept.turns) == 4 and all(isinstance(t, TurnRecord) for t, _, _ in kept.turns)
    for i in (0, 1):
        rows = players[i].transcript
        assert [set(r) for r in rows] == [ROW, ROW]
        assert rows == [t.row() for t, _, _ in kept.turns if t.seat == i]  # the row is the record's, unchanged
        assert all(t.asked for t, _, _ in kept.turns if t.seat == i)  # what the seat was shown is in its record
    assert [r["submitted_by"] for r in players[1].transcript] == ["token:t", "token:t"]
    model = [t for t, _, _ in kept.turns if t.seat == 0]
    assert [(t.input_tokens, t.output_tokens) for t in model] == [(100, 5), (100, 5)] and all(t.usd > 0 for t in model)


def test_an_arena_seats_rows_are_turn_records(fake):
    fake.script(ROUTER["model"], {"text": '{"move": "4"}', "usage": (10, 1)})
    loop = asyncio.new_event_loop()
    seat = ArenaSeat(0, dict(ROUTER, format="json"), credential=Credential("k-good", fake.url + "/v1", private_ok=True),
                     turn_timeout_ms=5000, loop=loop)
    try:
        assert seat.answer(GAMES["arena:connect-four"].new(), None) == "4"
    finally:
        seat.close()
        loop.close()
    assert [set(r) for r in seat.transcript] == [ROW]
    assert seat.transcript[0]["actions"] == '["4"]' and seat.transcript[0]["input_tokens"] == 10


def test_the_runs_spend_is_read_from_the_ledger_and_equals_what_its_turns_cost(fake):
    fake.script(ROUTER["model"], *[{"calls": [("gather", {})], "usage": (1000 + 100 * t, 10)} for t in range(6)])
    roster = [ROUTER, {"model": "local/random", "provider": "local"}]
    job = job_for(fake, roster, 6)
    match = build_match(6, job.env, seat_specs([s["model"] for s in roster]))
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0} for _ in roster]
    kept = Kept()
    creds = {0: Credential("k-good", base_url(fake, "router"), private_ok=True)}
    stop, spend = ModelSeats(creds, recorder=kept).play(match, job, usage, lambda: False, lambda t: None)
    assert stop == "season_end" and len(kept.turns) == 6
    assert spend == Ledger(usage).usd == pytest.approx(sum(t.usd for t, _, _ in kept.turns))
    assert usage[0]["input_tokens"] == sum(t.input_tokens for t, _, _ in kept.turns) == 6 * 1000 + 100 * 15
    # every total the recorder was handed is read from the same entries: the last equals the ledger's
    assert kept.turns[-1][2]["usage"] == usage[0] and kept.reports[-1][0]["usage"] == usage[0]


def test_the_spend_cap_stops_on_the_ledgers_figure(fake):
    fake.default = {"calls": [("gather", {})], "usage": (100_000, 10)}  # 0.25 USD a turn at gpt-4o's price
    roster = [ROUTER]
    job = job_for(fake, roster, 10, cap=0.6)
    match = build_match(10, job.env, seat_specs([s["model"] for s in roster]))
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}]
    creds = {0: Credential("k-good", base_url(fake, "router"), private_ok=True)}
    stop, spend = ModelSeats(creds).play(match, job, usage, lambda: False, lambda t: None)
    assert stop == "spend_cap" and match.tick == 3  # the tick that crosses the cap is the last one played
    assert spend == usage[0]["usd"] >= 0.6
