"""What a seat played, kept as JSON and read back: a resumed run replays it through the tick code,
which must receive the very objects the live turn produced (waits by identity, refusals whole)."""
import json

from orchestrator.seats import played
from orchestrator.seats.actions import NO_REPLY_WAIT, REFUSAL, TIMEOUT_WAIT, TRUNCATED, Refused


def test_every_kind_of_turn_survives_the_store():
    turn = [{"action": "say", "text": "hi"}, Refused("bad_arguments", "malformed reply", "arguments: {"),
            REFUSAL, TRUNCATED]
    back = played.decode(json.loads(json.dumps(played.encode(turn))))
    assert back == turn
    assert played.decode(json.loads(json.dumps(played.encode([TIMEOUT_WAIT]))))[0] is TIMEOUT_WAIT
    assert played.decode(json.loads(json.dumps(played.encode([NO_REPLY_WAIT]))))[0] is NO_REPLY_WAIT
