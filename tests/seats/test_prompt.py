"""System prompt composition, scaffold identity and the observation text."""
import json

from engine.rules_doc import rules_text
from orchestrator.seats import compose_directions, play_tick, render_observation, scaffold, system_prompt
from orchestrator.seats.prompt import DIRECTIONS_HEADING
from tests.seats.conftest import external_match, players_for, run, with_client

SKILL_A = {"id": "builtin:trader", "name": "Trader", "text": "Trade often.\n  Keep two offers open."}
SKILL_B = {"id": "usk_1", "name": "Mine", "text": "Always eat below 50 satiety, {literally}."}
INSTR = "Never raid.\n\nSay hello to #3 first."


def test_directions_are_skills_in_order_then_instructions_verbatim():
    assert compose_directions([SKILL_A, SKILL_B], INSTR) == SKILL_A["text"] + "\n\n" + SKILL_B["text"] + "\n\n" + INSTR
    assert compose_directions([], None) == ""
    assert compose_directions([SKILL_B], "") == SKILL_B["text"]


def test_system_prompt_opens_with_the_rules_and_ends_with_the_directions():
    d = compose_directions([SKILL_A, SKILL_B], INSTR)
    text = system_prompt("tools", d)
    assert text.startswith(rules_text().rstrip("\n"))
    assert text.endswith(f"## {DIRECTIONS_HEADING}\n\n{d}")
    assert text.index(SKILL_A["text"]) < text.index(SKILL_B["text"]) < text.index(INSTR)
    assert DIRECTIONS_HEADING not in system_prompt("tools", "")
    assert '{"actions": [' in system_prompt("json", "") and '{"actions": [' not in system_prompt("tools", "")


def test_scaffold_tag_equal_for_equal_text_and_only_with_directions():
    a = scaffold("tools", compose_directions([SKILL_A], INSTR))
    b = scaffold("tools", compose_directions([dict(SKILL_A, id="usk_copy")], INSTR))
    assert a == b and a.startswith("studio-seat-v1/tools+custom.") and len(a.split("custom.")[1]) == 12
    assert scaffold("tools", compose_directions([SKILL_B], INSTR)) != a
    assert scaffold("json", compose_directions([SKILL_A], INSTR)).startswith("studio-seat-v1/json+custom.")
    assert scaffold("tools", "") == "studio-seat-v1/tools"
    # order matters: skills first, then instructions
    assert scaffold("tools", compose_directions([SKILL_A, SKILL_B], None)) != \
        scaffold("tools", compose_directions([SKILL_B, SKILL_A], None))


def test_request_carries_rules_skills_and_instructions_verbatim_on_both_protocols(fake):
    seats = {0: {"model": "r/one", "provider": "router", "skills": [SKILL_A, SKILL_B], "instructions": INSTR},
             1: {"model": "claude-x", "provider": "anthropic", "skills": [SKILL_B], "instructions": INSTR}}
    match = external_match(2)

    async def go(client):
        players = players_for(fake, client, seats)
        await play_tick(match, players)
        return players

    players = run(with_client(go))
    openai_system = fake.bodies("r/one")[0]["messages"][0]
    assert openai_system["role"] == "system" and openai_system["content"] == players[0].system
    assert openai_system["content"].endswith(SKILL_A["text"] + "\n\n" + SKILL_B["text"] + "\n\n" + INSTR)
    anthropic_system = fake.bodies("claude-x")[0]["system"][0]["text"]
    assert anthropic_system.startswith(rules_text().rstrip("\n"))
    assert anthropic_system.endswith(f"## {DIRECTIONS_HEADING}\n\n{SKILL_B['text']}\n\n{INSTR}")


def test_observation_text_holds_the_seat_state_and_the_view():
    match = external_match(2, ticks=5)
    obs = match.observe(0)
    text = render_observation(obs)
    you = obs["you"]
    assert text.splitlines()[0] == "tick 0 of 5; up to 2 actions this turn"
    assert f"#0 s0 at ({you['x']},{you['y']})" in text and "food 3" in text
    for row in obs["view"]:
        assert row in text.splitlines()
    match.submit({0: [{"action": "move", "direction": "sideways"}], 1: [{"action": "wait"}]})
    assert "last actions: invalid refused (bad_arguments)" in render_observation(match.observe(0))
    json.dumps(obs)  # the observation stays plain data


def test_public_record_names_builtins_and_only_counts_own_skills():
    from orchestrator.seats.prompt import skills_record

    assert skills_record([SKILL_A, SKILL_B, dict(SKILL_B, id="usk_2")]) == {"builtin": ["builtin:trader"], "own": 2}
    assert skills_record([]) == {"builtin": [], "own": 0}
