"""The replays a person reads, in headless Chromium against a playing server: a world match stopped
part-way (standings and holdings as of the shown tick, terrain legend, moment filters, labelled axes,
ticks played out of the season and why it stopped) and arena games stepped ply by ply."""
from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from orchestrator import accounts, console_auth
from orchestrator.runs import service as runs_service
from tests.console.conftest import sign_in_by_link
from tests.console.test_console import _shot
from tests.waiting import until

SEASON = 300


def _principal(page, live):
    s = console_auth.session(live.core, {c["name"]: c["value"] for c in page.context.cookies()}["studio_console"])
    return console_auth.principal(live.core, s)


def _errors(page) -> list[str]:
    """Console errors and uncaught exceptions of the page from now on (the CSP's refusals among them)."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(str(e)))
    return seen


def _ended(live, p, run_id: str) -> dict:
    return until(lambda: (r := runs_service.get_run(live.core, p, run_id))["run"]["status"] in
                 ("finished", "cancelled", "failed") and r, 120, every=0.2, what="the run's end")


@pytest.fixture(scope="module")
def stopped(browser, playing):
    """A world match of a 300-tick season cancelled part-way: its run and its frames as JSON."""
    email = "replayer@example.org"
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    page = browser.new_context().new_page()
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    page.context.close()
    run_id = runs_service.launch(playing.core, p, {
        "scenario_id": "svc:custom-base-v1", "season_ticks": SEASON, "env": {"seed": 5, "spawn_seed": 6},
        "roster": [{"model": "local/aggressive-raider"}, {"model": "local/honest-trader"},
                   {"model": "local/greedy-harvester"}]})["run"]["run_id"]
    until(lambda: ((runs_service.get_run(playing.core, p, run_id)["run"].get("live") or {}).get("tick") or 0) >= 90,
          120, every=0.05, what="tick 90")
    runs_service.cancel(playing.core, p, run_id)
    run = _ended(playing, p, run_id)["run"]
    assert run["status"] == "cancelled"
    frames = httpx.get(playing.url + run["links"]["replay"], params={"format": "json"}).json()
    return run, frames


def _standings(page) -> dict[int, list[str]]:
    rows = page.locator("#standings tr[data-agent]")
    return {int(rows.nth(r).get_attribute("data-agent")): rows.nth(r).locator("td").all_inner_texts()
            for r in range(rows.count())}


def test_standings_and_holdings_are_those_of_the_shown_tick(page, playing, stopped):
    run, d = stopped
    errors = _errors(page)
    played = d["ticks_played"]
    assert d["stop_reason"] == "cancelled" and d["season_ticks"] == SEASON and 90 <= played < SEASON
    assert d["holdings"] == ["wood", "stone", "food", "ore", "relics", "shelter", "tool"]
    page.goto(playing.url + run["links"]["replay"])
    expect(page.locator("#season")).to_have_text(f"{played} of {SEASON} ticks played; stopped: cancelled.")
    last = d["frames"][-1]
    # a tick where some agent's standing differs from the final one: the table must follow the tick
    k = next(i for i in range(len(d["frames"]) // 3, len(d["frames"]))
             if any(a[3:] != b[3:] for a, b in zip(d["frames"][i]["agents"], last["agents"])))
    frame = d["frames"][k]
    page.locator("#t").fill(str(k))
    expect(page.locator("#tick")).to_have_text(f"tick {frame['tick']} of {played} played (season {SEASON})")
    expect(page.locator("#standings-title")).to_have_text(f"Standings at tick {frame['tick']}")
    died = {e["agent"]: e["tick"] for e in d["events"] if e["kind"] == "starve"}
    shown = _standings(page)
    assert sorted(shown) == list(range(len(d["agents"])))
    for j, a in enumerate(frame["agents"]):
        cells = shown[j]
        assert cells[1] == d["agents"][j]["label"]
        assert cells[2] == ("alive" if a[2] else f"starved at tick {died[j]}")
        assert cells[3:] == [str(a[3]), str(a[4]), f"{a[5]:.2f}", *(str(v) for v in a[6:])], (j, cells, a)
    # ranked by net worth among the living
    order = [int(x) for x in page.locator("#standings tr[data-agent]").evaluate_all(
        "rows => rows.map(r => r.dataset.agent)")]
    living = [j for j in order if frame["agents"][j][2]]
    assert [frame["agents"][j][5] for j in living] == sorted((frame["agents"][j][5] for j in living), reverse=True)
    assert order[:len(living)] == living
    # the end of the slider is the final state, as the scorecard has it
    page.locator("#t").fill(str(len(d["frames"]) - 1))
    expect(page.locator("#tick")).to_have_text(f"tick {played} of {played} played (season {SEASON})")
    assert _standings(page) != shown
    assert errors == []
    # the run page says the same: ticks played out of the season, and why it stopped
    sign_in_by_link(page, playing, "replayer@example.org")
    page.goto(f"{playing.url}/console/runs/{run['run_id']}")
    expect(page.get_by_test_id("run-tick")).to_have_text(f"{played} of {SEASON} played")
    expect(page.get_by_test_id("run-stopped")).to_have_text("cancelled")


def test_terrain_legend_moment_filters_and_labelled_axes(page, playing, stopped):
    run, d = stopped
    errors = _errors(page)
    page.set_viewport_size({"width": 1600, "height": 900})  # the standings beside the map, as on a wide screen
    page.goto(playing.url + run["links"]["replay"])
    expect(page.locator("#tick")).to_contain_text("tick 0 of")
    on_map = {d["legend"][g] for row in d["terrain"] for g in row}
    legend = page.locator("#terrain span:has(.swatch)").all_inner_texts()
    assert sorted(legend) == sorted(t.replace("_", " ") for t in on_map)
    # every kind of moment in the match has a ticked filter with its count
    kinds = [m for m in d["moments"] if any(e["kind"] == m for e in d["events"])]
    assert "raid" in kinds and len(kinds) >= 3
    boxes = page.locator("#filters input[type=checkbox]")
    expect(boxes).to_have_count(len(kinds))
    visible = page.locator("#events li:not(.hidden)")
    expect(visible).to_have_count(len(d["events"]))
    raids = sum(e["kind"] == "raid" for e in d["events"])
    lanes = page.locator("#timeline text.lane")
    expect(lanes).to_have_count(len(kinds))
    marks = page.locator("#timeline rect.mark")
    expect(marks).to_have_count(len(d["events"]))
    page.get_by_label(re.compile(r"^raids \(\d+\)$")).uncheck()
    expect(visible).to_have_count(len(d["events"]) - raids)
    expect(page.locator("#events li:not(.hidden)[data-kind=raid]")).to_have_count(0)
    expect(marks).to_have_count(len(d["events"]) - raids)
    expect(lanes).to_have_count(len(kinds) - 1)
    assert "raids" not in lanes.all_inner_texts()
    page.get_by_label(re.compile(r"^raids \(\d+\)$")).check()
    expect(visible).to_have_count(len(d["events"]))
    # axes: the timeline's ticks, the net-worth graph's ticks and worth
    expect(page.locator("#timeline .x-label")).to_have_text("tick")
    expect(page.locator("#worth .x-label")).to_have_text("tick")
    expect(page.locator("#worth .y-label")).to_have_text("net worth")
    expect(page.locator("#worth polyline")).to_have_count(len(d["agents"]))
    # clicking a moment jumps to its tick
    target = next(e for e in d["events"] if e["kind"] == "raid")
    page.locator("#events li[data-kind=raid] a").first.click()
    expect(page.locator("#tick")).to_contain_text(f"tick {target['tick']} of")
    _shot(page, "replay")
    # the report's charts have their axes too
    page.goto(playing.url + run["links"]["match"].split("?")[0] + "?format=html")
    charts = page.locator(".chart svg")
    assert charts.count() == 5
    for i in range(5):
        expect(charts.nth(i).locator(".x-label")).to_contain_text("score (0-100)")
    assert errors == []


def _arena(page, playing, email: str, roster: list[dict], scenario: str) -> dict:
    accounts.create_account(playing.core, email, plan="lab", verified=True)
    sign_in_by_link(page, playing, email)
    p = _principal(page, playing)
    out = runs_service.arena_launch(playing.core, p, {"scenario_id": scenario, "roster": roster})
    body = _ended(playing, p, out["run"]["run_id"])
    assert body["run"]["status"] == "finished"
    return body


def test_a_connect_four_replay_steps_through_the_plies(page, playing):
    body = _arena(page, playing, "c4-replay@example.org", [{"model": "local/solver"}, {"model": "local/random"}],
                  "arena:connect-four")
    run, game = body["run"], body["results"]["game"]
    log = httpx.get(playing.url + run["links"]["log"]).json()  # the API's default stays JSON
    moves, n = log["moves"], game["plies"]
    assert len(moves) == n >= 7
    # the run page counts plies, not ticks, and says how the game ended
    page.goto(f"{playing.url}/console/runs/{run['run_id']}")
    expect(page.get_by_test_id("run-tick")).to_have_text(str(n))
    expect(page.get_by_test_id("run-stopped")).to_have_text(
        "the game ended: " + game["termination"].replace("_", " "))
    errors = _errors(page)
    page.goto(playing.url + run["links"]["replay"])
    expect(page.locator("#ply")).to_have_text(f"ply 0 of {n}")
    expect(page.locator("#move")).to_have_text("The starting position.")
    expect(page.locator("#board .disc.p1, #board .disc.p2")).to_have_count(0)
    page.get_by_role("button", name="next ply").click()
    expect(page.locator("#ply")).to_have_text(f"ply 1 of {n}")
    expect(page.locator("#move")).to_contain_text(f"column {moves[0]['column']}")
    expect(page.locator("#move b")).to_have_text(moves[0]["label"])
    expect(page.locator("#board .disc.p1")).to_have_count(1)
    # the disc sits at the bottom of the column played
    expect(page.locator("#board tr").last.locator("td").nth(moves[0]["column"] - 1).locator(".disc")).to_have_class(
        re.compile(r"\bp1\b"))
    page.get_by_role("button", name="next ply").click()
    expect(page.locator("#board .disc.p2")).to_have_count(1)
    page.get_by_role("button", name="previous ply").click()
    expect(page.locator("#ply")).to_have_text(f"ply 1 of {n}")
    page.locator("#slider").fill(str(n))
    expect(page.locator("#ply")).to_have_text(f"ply {n} of {n}")
    expect(page.locator("#board .disc.p1, #board .disc.p2")).to_have_count(n)
    expect(page.locator("#replay-moves tr.on")).to_have_attribute("data-ply", str(n))
    page.locator("#replay-moves tr[data-ply='3']").click()
    expect(page.locator("#ply")).to_have_text(f"ply 3 of {n}")
    expect(page.locator("#graph .x-label")).to_have_text("ply")
    expect(page.locator("#graph .y-label")).not_to_be_empty()
    # the log reads as a table; its JSON is one link away
    page.goto(playing.url + run["links"]["log"])
    rows = page.locator("#log-moves tr[data-ply]")
    expect(rows).to_have_count(n)
    expect(rows.first.locator("td").nth(3)).to_have_text(moves[0]["label"])
    expect(rows.first).to_contain_text(f"column {moves[0]['column']}")
    assert httpx.get(playing.url + run["links"]["log"], params={"format": "json"}).json()["moves"] == moves
    assert errors == []


def test_a_chess_replay_shows_each_move_in_san_on_the_board(page, playing):
    body = _arena(page, playing, "chess-replay@example.org",
                  [{"model": "local/stockfish-1"}, {"model": "local/random"}], "arena:chess")
    run = body["run"]
    moves = httpx.get(playing.url + run["links"]["log"]).json()["moves"]
    fens = httpx.get(playing.url + run["links"]["replay"], params={"format": "json"}).json()["frames"]
    errors = _errors(page)
    page.goto(playing.url + run["links"]["replay"])
    expect(page.locator("#ply")).to_have_text(f"ply 0 of {len(moves)}")
    expect(page.locator("#board .piece")).to_have_count(32)
    page.keyboard.press("ArrowRight")
    expect(page.locator("#move")).to_contain_text(f"1. {moves[0]['san']}")
    expect(page.locator("#move b")).to_have_text(moves[0]["label"])
    page.locator("#slider").fill(str(len(moves)))
    expect(page.locator("#ply")).to_have_text(f"ply {len(moves)} of {len(moves)}")
    expect(page.locator("#board .piece")).to_have_count(sum(c.isalpha() for c in fens[-1].split()[0]))
    assert errors == []
