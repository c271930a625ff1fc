"""A roster seat is a record: built at admission and refused when it breaks the rules, read back
from the store as seats, metered into by building another, and dumped to the stored and viewed JSON
with the fields only some seats carry left out where they do not apply."""
from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from orchestrator.auth import authenticate
from orchestrator.core import Core
from orchestrator.records.roster import Seat, SeatTurns, SeatUsage, plain
from orchestrator.runs import lifecycle, service
from orchestrator.runs.views import run_view
from orchestrator.statuses import RUNNING
from orchestrator.store import runs
from tests.runs.conftest import CONFIG, account, local_body

SEAT = dict(seat=0, name="gpt", model="openai/gpt-4o-mini", provider="router", funding="account", format="tools",
            scaffold="svc-tools-v1", turns=SeatTurns.zero())


def test_a_seat_refuses_an_unknown_provider_an_infinite_temperature_and_unknown_fields():
    assert Seat(**SEAT).usage == SeatUsage.zero()
    for bad in ({"provider": "acme"}, {"temperature": math.inf}, {"temperature": math.nan}, {"temperature": 2.5},
                {"max_tokens": 0}, {"reasoning": "extreme"}, {"format": "xml"}, {"funding": "friend"},
                {"model": ""}, {"model": "m" * 201}, {"instructions": "x" * 4001}, {"seat": -1}, {"colour": "red"}):
        with pytest.raises(ValidationError):
            Seat(**{**SEAT, **bad})
    with pytest.raises(ValidationError):
        Seat(**SEAT, usage={"agent_turns": 1, "input_tokens": 2, "output_tokens": 3, "usd": math.inf})
    with pytest.raises(ValidationError):  # frozen: a seat is changed by building another
        Seat(**SEAT).funding = "platform"


def test_a_seat_meters_by_building_another_and_dumps_only_the_fields_it_carries():
    seat = Seat(**SEAT)
    usage = {"agent_turns": 3, "input_tokens": 10, "output_tokens": 4, "usd": 0.25}
    metered = seat.metered(usage, None)
    assert metered.usage.usd == 0.25 and metered.turns == seat.turns and seat.usage.usd == 0.0
    with pytest.raises(ValidationError):
        seat.metered({**usage, "usd": -1.0}, None)
    out = metered.plain()
    assert "replied" not in out and "note" not in out and out["usage"] == usage and out["skills"] == []
    assert Seat.model_validate(json.loads(json.dumps(out))) == metered
    ended = metered.model_copy(update={"replied": False})
    assert ended.plain()["replied"] is False
    kept = ended.afresh()
    assert kept.funding is None and kept.usage == SeatUsage.zero() and kept.turns == SeatTurns.zero()
    assert "replied" not in kept.plain()


@pytest.fixture
def core(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.toml").write_text(CONFIG)
    return Core.open(tmp_path / "data")


def test_a_launched_roster_reads_back_as_seats_and_the_view_shows_them_as_sent(core):
    principal = authenticate(core, account(core))
    body = local_body()
    body["roster"][0]["instructions"] = "trade wood first"
    rid = service.launch(core, principal, body)["run"]["run_id"]
    run = runs.get(core.store.conn(), rid)
    assert all(isinstance(s, Seat) for s in run.roster)
    assert [s.seat for s in run.roster] == list(range(len(body["roster"])))
    first = run.roster[0]
    assert first.local and first.funding == "free" and first.instructions == "trade wood first" and first.note
    assert first.turns is None and first.usage == SeatUsage.zero()
    view = run_view(run)
    assert view["roster"] == plain(run.roster) and "note" in view["roster"][0]
    assert all("note" not in s for s in view["roster"][1:])
    stored = json.loads(core.store.conn().execute("SELECT roster FROM runs WHERE id = ?", (rid,)).fetchone()[0])
    assert stored == view["roster"]


def test_what_a_playing_run_meters_lands_in_its_seats_and_its_spend(core):
    principal = authenticate(core, account(core))
    rid = service.launch(core, principal, local_body())["run"]["run_id"]
    with core.store.write() as c:
        lifecycle.claim(c, True, 5)
        lifecycle.began(c, rid, 1)
    assert runs.get(core.store.conn(), rid).status == RUNNING
    usage = {"agent_turns": 2, "input_tokens": 0, "output_tokens": 0, "usd": 0.5}
    with core.store.write() as c:
        assert lifecycle.metered(c, rid, 2, {1: {"usage": usage, "turns": None}})
    run = runs.get(core.store.conn(), rid)
    assert run.roster[1].usage.usd == 0.5 and run.roster[0].usage.usd == 0.0 and run.spend_usd == 0.5
    assert run.live_tick == 2
