"""The MCP tools (docs/mcp.md): one row per tool, each naming the service function its REST
twin calls. Arguments are the REST body's fields, flat, plus `id` where the REST path has one, plus
optional `api_key`; the body reaches the core raw, so its validation (and every error) is REST's.
The tools' JSON Schemas are api/mcp/schemas.py's; api/mcp/arguments.py splits a call's arguments.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from pydantic import BaseModel

from api.mcp import fork_tool
from engine.rules import POLICIES
from orchestrator import listing, scenarios, skills
from orchestrator.auth import Principal
from orchestrator.runs import agent_turns as turns
from orchestrator.core import Core
from orchestrator.runs.pages import decisions
from orchestrator.me import me
from orchestrator.runs import analysis, exports, service, usage
from orchestrator.runs.series import read as series
from orchestrator.runs.pages import transcript
from orchestrator.runs.admission.body import PROVIDERS, RunBody
from orchestrator.scenarios import ScenarioBody, ScenarioPatch
from orchestrator.skills import SkillBody, SkillPatch

LOCAL_SEATS = ", ".join(f"local/{p}" for p in POLICIES)


@dataclass(frozen=True)
class ToolSpec:
    """`shape` says how arguments split: none (api_key only), id, body, id_body, query (list_runs),
    id_query (get_transcript), seat_query (get_seat_turn) or seat_body (submit_seat_actions)."""
    name: str
    title: str
    description: str
    scope: str | None          # checked before the body, as REST's route dependency does; None: any token
    write: bool                # also needs a plan with full API access (plan_api)
    shape: str
    call: Callable[..., dict]
    model: type[BaseModel] | None = None
    id_text: str | None = None
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False   # launch_run reaches model providers outside the service
    query: dict | None = None  # shape query: the REST query parameters, typed as JSON (default list_runs')
    # shapes seat_query and seat_body (an agent seat's turn): call returns a coroutine, awaited by the
    # transport, so a long-poll holds no thread
    # A tool that may wait (a long-poll): the coroutine twin of `call`, awaited on the server's event loop
    follow: Callable[..., Awaitable[dict]] | None = None


def _create_scenario(core: Core, principal: Principal, body: Any) -> dict:
    return scenarios.create(core, principal, body)[1]  # REST answers 201 or 200; the body says `created`


def _list_runs(core: Core, principal: Principal, **query: Any) -> dict:
    return service.list_runs(core, principal, **query)


_ENV_TEXT = ("env (all optional): seed and spawn_seed (integers; pinning both replays one layout), turn_timeout_ms "
             "(5000-300000), actions_per_turn (1-5), resources ({wood|stone|food|ore|relics: {max, regen}}, "
             "multipliers 0-10 of the base where 1 is the base and 0 removes it), anchors (scripted bots: policy ids "
             f"among {', '.join(POLICIES)}, repeats allowed, or the one population id anchors-v1; at most 8, [] for "
             "none)")
_SCENARIO_ARGS = ("Arguments: name (2-60 characters, required), description (up to 300), season_ticks (10-2000, "
                  "omitted means 300), " + _ENV_TEXT + ".")
_RUN_ARGS = (
    "Arguments (the run body): scenario_id (required: a library id svc:... from list_library, or a saved usc_... "
    "id); roster (required: one object per seat with model (required), provider, name, reasoning off|low|medium|"
    "high, temperature 0-2, max_tokens, format tools|json, skills (up to 4 ids from list_skills), instructions (up "
    f"to 4000 characters)). Seats {LOCAL_SEATS} are scripted, free and need no provider key; a seat with provider "
    "agent is played by your own program (model: its label, 1-80 characters; play it with get_seat_turn and "
    "submit_seat_actions); other models run on "
    f"the account's key for their provider ({', '.join(PROVIDERS)}; router by default). Optional: name (up to 80), "
    "season_ticks (10-2000 within the plan's ticks_per_run), env (per-run overrides, same fields as a scenario's "
    "env), max_spend_usd (a stop, clamped into the plan's range), trials (above 1 launches a series), seed_mode "
    "vary|pinned (series only), paired_with (a series only: the batch_id of an earlier series whose seeds it "
    "replays trial by trial, so the two compare pairwise), grading auto|all|off (which seats' decisions are "
    "graded after a world match: auto grades model and agent seats, all local seats too), until (a series only: "
    "{half_width (> 0, the metric's units), metric (fitness_index by default, or a dimension), seat (a roster "
    "index, or null for every roster seat)}: stop launching trials once the seat's anytime-valid 95% confidence "
    "sequence is that narrow; trials is then the ceiling), budget_usd (a series only: the most the whole series "
    "may spend, clamped into the plan's range; each trial's cap is lowered to what it leaves). Agent turns = "
    "seats x season_ticks x trials, against the month's allowance.")
_RUN_VIEW = ("A run view holds run_id, match_id, name, status, scenario_id, scenario_hash, batch_id, times (_ms), "
             "live ({tick, season_ticks} while running), links ({match, log, replay} public pages once a match "
             "exists), error ({error, message} when failed), effective (as-played season_ticks, env and seeds with "
             "their sources, hash), roster (each seat resolved, with funding and usage), spend, agent_turns, "
             "stop_reason.")

BATCH_QUERY = {  # get_batch: GET /api/v1/batches/:id's query parameter
    "wait_ms": {"type": "integer", "minimum": 0, "maximum": series.MAX_WAIT_MS,
                "description": "wait up to this long for a run of the series to change status (default 0)"},
}


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("whoami", "Who am I", "The account behind this token: user, plan (id, name, status), api_access (read "
             "on Free, full on paid plans), the token's name, prefix and scopes, and the plan's limits "
             "(seats_per_run, ticks_per_run, agent_turns_per_month, queued_runs, series_max_trials, saved_scenarios, "
             "saved_skills, access_tokens, requests_per_minute). Call it first to learn what you may launch. Any "
             "valid token. REST: GET /api/v1/me.", None, False, "none", lambda core, p: me(p)),
    ToolSpec("get_scenario_schema", "Scenario JSON Schema", "JSON Schema (draft 2020-12) of a scenario definition, "
             "the arguments of validate_scenario and create_scenario, with the live resource types, anchor ids and "
             "two examples. Also served as the resource svc://studio/scenario-schema. Needs scenarios:read. REST: "
             "GET /api/v1/scenarios/schema.", scenarios.READ, False, "none",
             lambda core, p: listing.scenario_schema(p)),
    ToolSpec("validate_scenario", "Validate a scenario", "Check a scenario definition and save nothing. Answers "
             "{valid: true, scenario (normalized: description \"\" and season_ticks 300 when omitted), hash (16 hex "
             "over base, season_ticks and env; name and description are excluded), base, receipt {plan, warnings}}. "
             "Warnings (plan_ticks: longer than the plan allows per run; fixed_layout: seed and spawn_seed both "
             "pinned) never block saving. An invalid definition is refused with the field's own code (bad_request, "
             "bad_scenario, bad_season_ticks, bad_env) and a message naming the field. " + _SCENARIO_ARGS +
             " Free plans may call it. Needs scenarios:read. REST: POST /api/v1/scenarios/validate.",
             scenarios.READ, False, "body", scenarios.validate, model=ScenarioBody),
    ToolSpec("create_scenario", "Save a scenario", "Save a scenario definition on the base world svc:custom-base-v1 "
             "(same arguments as validate_scenario). Answers {ok, created, scenario {id (usc_...), name, description, "
             "season_ticks, env, hash, base, created_at_ms, updated_at_ms}, receipt}. Idempotent: the same name and "
             "content hash answers the existing scenario with created false. Counts against the plan's "
             "saved_scenarios (too_many_scenarios when full). Pass scenario.id as scenario_id to estimate_run and "
             "launch_run. " + _SCENARIO_ARGS + " Needs scenarios:write on a paid plan. REST: POST /api/v1/scenarios.",
             scenarios.WRITE, True, "body", _create_scenario, model=ScenarioBody, read_only=False),
    ToolSpec("list_scenarios", "List saved scenarios", "The account's saved scenarios, newest first: {scenarios: "
             "[{id, name, description, season_ticks, env, hash, base, created_at_ms, updated_at_ms}]}. Needs "
             "scenarios:read. REST: GET /api/v1/scenarios.", scenarios.READ, False, "none",
             lambda core, p: scenarios.list_scenarios(core, p)),
    ToolSpec("get_scenario", "Get a saved scenario", "One saved scenario: {scenario {id, name, description, "
             "season_ticks, env, hash, base, created_at_ms, updated_at_ms}}; its id is a launch's scenario_id. "
             "Another account's id reads as unknown_scenario. Needs scenarios:read. REST: GET /api/v1/scenarios/:id.",
             scenarios.READ, False, "id", scenarios.get, id_text="the saved scenario's id (usc_...)"),
    ToolSpec("update_scenario", "Change a saved scenario", "Change a saved scenario: id plus any of name, "
             "description, season_ticks, env. Omitted fields keep their value; a given env replaces the whole env. "
             "Changing season_ticks or env changes the hash; runs already launched keep their snapshot. Answers "
             "{scenario} with updated_at_ms set. Needs scenarios:write on a paid plan. REST: PUT "
             "/api/v1/scenarios/:id.", scenarios.WRITE, True, "id_body", scenarios.update, model=ScenarioPatch,
             id_text="the saved scenario's id (usc_...)", read_only=False),
    ToolSpec("delete_scenario", "Delete a saved scenario", "Delete a saved scenario: {ok, deleted: id}. Frees an "
             "allowance slot; played runs keep their snapshot. Needs scenarios:write on a paid plan. REST: DELETE "
             "/api/v1/scenarios/:id.", scenarios.WRITE, True, "id", scenarios.delete,
             id_text="the saved scenario's id (usc_...)", read_only=False, destructive=True),
    ToolSpec("list_skills", "List skills", "Skills a seat can carry in roster[].skills: {builtin: [the six built-ins "
             "builtin:trader, builtin:survivalist, builtin:aggressor, builtin:diplomat, builtin:builder, "
             "builtin:explorer, with name, text, game, blurb], mine: [own skills usk_...], limits {name_chars, "
             "text_chars, saved_skills}}. A skill's text is appended to the seat's system prompt under \"Your "
             "operator's directions\". Needs scenarios:read. REST: GET /api/v1/skills.", skills.READ, False, "none",
             lambda core, p: skills.list_skills(core, p)),
    ToolSpec("get_skill", "Get a skill", "One skill with its full text: {skill {id, name, text, ...}}; "
             "built-ins also carry game and blurb. Needs scenarios:read. REST: GET "
             "/api/v1/skills/:id.", skills.READ, False, "id", skills.get,
             id_text="a built-in id (builtin:trader, ...) or an own skill id (usk_...)"),
    ToolSpec("create_skill", "Create a skill", "Save a named block of directions a seat can carry. Arguments: name "
             "(2-60 characters) and text (10-2000), both required. Answers {ok, skill {id (usk_...), name, text, "
             "created_at_ms, updated_at_ms}}; put skill.id in a seat's skills (up to 4 per seat). Counts against the "
             "plan's saved_skills. Not idempotent. Needs scenarios:write on a paid plan. REST: POST /api/v1/skills.",
             skills.WRITE, True, "body", skills.create, model=SkillBody, read_only=False, idempotent=False),
    ToolSpec("update_skill", "Change a skill", "Change an own skill: id plus name and/or text; omitted fields keep "
             "their value. Built-ins cannot be changed (bad_skill). Launched runs keep the text they played. Answers "
             "{skill}. Needs scenarios:write on a paid plan. REST: PUT /api/v1/skills/:id.", skills.WRITE, True,
             "id_body", skills.update, model=SkillPatch, id_text="the own skill's id (usk_...)", read_only=False),
    ToolSpec("delete_skill", "Delete a skill", "Delete an own skill: {ok, deleted: id}. Built-ins cannot be deleted "
             "(bad_skill). Needs scenarios:write on a paid plan. REST: DELETE /api/v1/skills/:id.", skills.WRITE,
             True, "id", skills.delete, id_text="the own skill's id (usk_...)", read_only=False, destructive=True),
    ToolSpec("estimate_run", "Estimate a run", "Price a launch and queue nothing. It runs the launch's own checks: "
             "success means launch_run with the same arguments would be admitted, and a body launch_run would refuse "
             "is refused here with the same error. " + _RUN_ARGS + " Answers {ok, batch {trials, agent_turns, usd "
             "{low, high}, wall_clock_ms {low, high}, seats [{seat, name, model, provider, funding}], spend_cap_usd, "
             "quota {agent_turns_remaining, after_launch}, queue {queued, limit, headroom}, precision {reference_sd, "
             "half_width_95, single_run_half_width_95, method, expected_trials (with until: the trials it plays "
             "at the reference spread)}}}. Free plans may call it. Needs runs:read. REST: POST "
             "/api/v1/runs/estimate.", service.READ, False, "body", service.estimate, model=RunBody),
    ToolSpec("launch_run", "Launch a run", "Queue a run, or a series of runs when trials > 1, with the same "
             "arguments as estimate_run (estimate first). Not idempotent: every call queues another launch and "
             "reserves its agent turns. Answers {ok, run (the first run's view, status queued), batch (null, or "
             "{batch_id, trials, seed_mode, run_ids} for a series)}. Then call get_run with run.run_id every few "
             "seconds until run.status is finished, failed or cancelled, and read its results. " + _RUN_ARGS +
             " Needs runs:write on a paid plan. REST: POST /api/v1/runs.", service.WRITE, True, "body",
             service.launch, model=RunBody, read_only=False, idempotent=False, open_world=True),
    ToolSpec("list_runs", "List runs", "The account's runs, newest first: {runs: [run view], next_cursor}. Optional "
             "filters: status, scenario_id, batch_id; limit 1-100 (default 20); cursor: the next_cursor of the "
             "previous page (null when there is no further page). Needs runs:read. REST: GET /api/v1/runs.",
             service.READ, False, "query", _list_runs),
    ToolSpec("get_run", "Get a run and its results", "A run and its results: {run, results}. run.status goes queued "
             "-> launching -> running -> finished, failed (run.error says why) or cancelled; poll until one of those "
             "three (every few seconds for scripted seats, about every 30 s for model seats). results is null until "
             "the match archives, usually seconds after the run finishes; then {rubric, agents [{name, model, rank, "
             "fitness_index 0-100, grade, archetype, status, crafter_score, dimensions {survival, economy, social, "
             "competitiveness, exploration}, epilogue}], match_ticks, top_model {name, model}, field_size}. "
             + _RUN_VIEW + " Needs runs:read. REST: GET /api/v1/runs/:id.", service.READ, False, "id",
             service.get_run, id_text="the run's id (run_...), from launch_run or list_runs"),
    ToolSpec("get_transcript", "A run's model turns", "Every model turn of a run's match, for its owner: {turns: "
             "[{tick, seat, reply (the model's raw text or tool calls), actions (what the engine received), refused "
             "[reasons], latency_ms, input_tokens, output_tokens, error}], next_cursor}, in tick then seat order. "
             "Optional: seat (roster index) for one seat's turns, limit 1-500 (default 100), cursor (next_cursor of "
             "the previous page). Archived when the match ends. Needs runs:read. REST: GET "
             "/api/v1/runs/:id/transcript.", service.READ, False, "id_query", transcript.get_transcript,
             id_text="the run's id (run_...)"),
    ToolSpec("get_decisions", "A run's graded decisions", "Every graded decision of a world run's seats, for its "
             "owner: {grader, horizon_ticks, rollouts, status (the run's grading status: pending, running, done, off, "
             "or null when nothing is graded), turns: [{tick, seat, chosen [actions], value, best [actions], "
             "best_value, regret, accuracy 0-100, label (inaccuracy, mistake, blunder or null)}], next_cursor}, in "
             "tick then seat order. Filled in after the match, when its grading is done. Optional: seat (roster "
             "index), limit 1-500 (default 100), cursor (next_cursor of the previous page). Needs runs:read. REST: "
             "GET /api/v1/runs/:id/decisions.", service.READ, False, "id_query", decisions.get_decisions,
             id_text="the run's id (run_...)"),
    ToolSpec("cancel_run", "Cancel a run", "Cancel a run: queued runs are cancelled at once; a launching run is "
             "refused with run_launching (retry in a few seconds); a running run stops at the next tick boundary and "
             "what played is archived and scored; a run that already ended answers cancelled false, unchanged. "
             "Answers {ok, cancelled, run}. Needs runs:write on a paid plan. REST: POST /api/v1/runs/:id/cancel.",
             service.WRITE, True, "id", service.cancel, id_text="the run's id (run_...)", read_only=False,
             destructive=True),
    ToolSpec("get_batch", "Get a series", "A series launched with trials > 1: {batch {batch_id, status, trials, "
             "seed_mode, run_ids, counts (runs per status), until, budget_usd, stopped (null while trials are left to "
             "play, then precise, ceiling, budget or cancelled), spent_usd, summary}}, where summary gives per seat "
             "the mean fitness_index with its 95% interval and n, and the same for each dimension; with until, each "
             "seat also has cs {low, high, half_width, method}, the confidence sequence valid under the stop. Optional wait_ms "
             f"(0-{series.MAX_WAIT_MS}): answer once a run of the series changes status, or after wait_ms, at once when "
             "no run is left to play; follow a whole series with it instead of polling each run. Unknown ids answer "
             "unknown_run. Needs runs:read. REST: GET /api/v1/batches/:id.", service.READ, False, "id_query",
             series.get_series, id_text="the series' batch_id (bat_...), from launch_run", query=BATCH_QUERY,
             follow=series.follow_series),
    ToolSpec("get_usage", "Usage and allowances", "Spend by month, by model and per run, split by who paid (account "
             "keys or platform), and the allowances: agent_turns {used, held, remaining}, queued_runs, spend_cap_usd, "
             "access_tokens, requests_per_minute. Needs runs:read. REST: GET /api/v1/usage.", service.READ, False,
             "none", lambda core, p: usage.usage(core, p)),
    ToolSpec("list_library", "Library scenarios", "Scenarios shipped by the platform, each launchable directly as "
             "scenario_id: {scenarios: [{id (svc:...), title, kind, description, hash, season_ticks, roster "
             "{min_agents, max_agents}, seed_policy, turn_based, anchors, resource_multipliers}]}. A fixed "
             "seed_policy refuses a run-level env.seed (seed_not_allowed). Needs scenarios:read. REST: GET "
             "/api/v1/library/scenarios.", scenarios.READ, False, "none",
             lambda core, p: listing.library_scenarios(p)),
    ToolSpec("list_anchors", "Anchor bots", "Scripted baseline bots a scenario can field in env.anchors: {policies "
             "[{id, description}], populations [{id, anchors, description}]}. The same policies play seats as model "
             "local/<policy id>. Needs scenarios:read. REST: GET /api/v1/library/anchors.", scenarios.READ, False,
             "none", lambda core, p: listing.anchor_listing(p)),
)
QUERY = {  # list_runs: GET /api/v1/runs's query parameters, typed as JSON
    "status": {"type": "string", "enum": list(service.STATUSES)},
    "scenario_id": {"type": "string"},
    "batch_id": {"type": "string"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "cursor": {"type": "string", "description": "next_cursor of the previous page"},
}
LEADERBOARD_QUERY = {
    "scenario_id": {"type": "string", "description": "the scenario whose ended runs are ranked (required unless "
                    "game is given)"},
    "game": {"type": "string", "enum": list(analysis.GAME_IDS), "description": "rank every scenario of one game: world or "
             "an arena game (default: the scenario's game)"},
    "by": {"type": "string", "enum": ["model", "name"]},
    "resamples": {"type": "integer", "minimum": 100, "maximum": analysis.MAX_RESAMPLES},
}
COMPARE_QUERY = {
    "batch_a": {"type": "string", "description": "a series' batch_id (required)"},
    "batch_b": {"type": "string", "description": "another series' batch_id, best launched with paired_with: batch_a "
                "(required)"},
    "seat": {"type": "integer", "minimum": 0, "maximum": analysis.MAX_SEAT},
    "seat_b": {"type": "integer", "minimum": 0, "maximum": analysis.MAX_SEAT},
    "metric": {"type": "string", "enum": list(analysis.METRICS)},
}
EXPORT_QUERY = {
    "format": {"type": "string", "enum": [*exports.FORMATS, exports.BUNDLE],
               "description": "inspect (default), csv, parquet or bundle (a result bundle for `studio verify`)"},
}
TOOLS = TOOLS + (
    ToolSpec("get_leaderboard", "Leaderboard of a scenario", "Bradley-Terry strengths from the finishing order of "
             "every ended run of yours on one scenario, with 95% bootstrap intervals; overlapping intervals share a "
             "tie group. {leaderboard {scenario_id, game, by, n_matches, n_resamples, method, rows [{label, provider, "
             "model, estimate, low, high, n, rank, group, tied_with_leader}]}}; a model is its provider and model id "
             "(label provider:model; local/* seats and anchors keep their id). A board is one game's: world, "
             "arena:chess or arena:connect-four. Arguments: scenario_id, or game to rank every scenario of one game, "
             "by (model or name), resamples (100-2000, default 1000). Needs runs:read. REST: GET /api/v1/leaderboard.",
             service.READ, False, "query", analysis.leaderboard, query=LEADERBOARD_QUERY),
    ToolSpec("compare_batches", "Compare two series", "One seat of series batch_a against a seat of series batch_b, "
             "paired on the map and spawn seeds both played (launch batch_b with paired_with: batch_a so every trial "
             "pairs): {comparison {batch_a, batch_b, seat, seat_b, metric, difference {estimate, low, high}, "
             "prob_improvement, paired_on}}. Arguments: batch_a, batch_b, seat (default 0), seat_b (default seat), "
             "metric (default fitness_index). Needs runs:read. REST: GET /api/v1/compare.",
             service.READ, False, "query", analysis.compare, query=COMPARE_QUERY),
    ToolSpec("export_batch", "Export a series as CSV", "A series' results as CSV text, one row per agent per ended "
             "match with every results field (seeds, seat, name, provider, model, rank, fitness_index, dimensions, "
             "stats): {batch_id, format, csv}. REST also serves Parquet: GET /api/v1/batches/:id/export?format=parquet. "
             "Needs runs:read.", service.READ, False, "id", analysis.export_csv,
             id_text="the series' batch_id (bat_...), from launch_run"),
    ToolSpec("export_run", "Export a run or a series as a file", "A run or a whole series as one file, for its "
             "owner: {id, format, filename, media_type, size_bytes, base64 (the file's bytes)}. format inspect "
             "(the default here) is an Inspect AI log (.eval): one sample per seat and trial with the seat's "
             "transcript as messages, its turns as events, its scorecard as scores (fitness_index, each dimension, "
             "decision_accuracy where graded) and the seeds, hashes and roster as metadata; open it with `inspect "
             "view` or inspect_ai.log.read_eval_log. csv and parquet are the results rows, one per agent per match. "
             "bundle is a result bundle (a zip: every match's inputs, results and digests, every recorded turn) "
             "that `studio verify FILE` re-plays offline; an ended run or series only (run_not_ended). "
             "Needs runs:read. REST: GET /api/v1/runs/:id/export?format=inspect and "
             "GET /api/v1/batches/:id/export?format=inspect; GET /api/v1/runs/:id/bundle.", service.READ, False, "id_query", exports.export_tool,
             id_text="a run's id (run_...) or a series' batch_id (bat_...)", query=EXPORT_QUERY),
)
_TURN_TEXT = ("{run_id, seat, status (waiting: the run is queued, launching or between ticks; your_turn; ended), "
              "tick, season_ticks, deadline_ms (epoch ms, set only while your_turn), actions_per_turn, observation "
              "{text (what a model seat's prompt shows), state (the same facts as JSON; arena games: chess fen and "
              "legal_uci, Connect Four grid and playable_columns)}, directions (the seat's skills and instructions, "
              "or null)}")
SEAT_TURN_QUERY = {
    "run_id": {"type": "string", "description": "the run's id (run_...)"},
    "seat": {"type": "integer", "minimum": 0, "description": "the agent seat's roster index"},
    "wait_ms": {"type": "integer", "minimum": 0, "maximum": turns.MAX_WAIT_MS,
                "description": "how long to wait for the turn to open or the run to end (default 0)"},
}
TOOLS = TOOLS + (
    ToolSpec("get_seat_turn", "An agent seat's turn", "The open turn of a seat with provider \"agent\" (a seat your own "
             "program plays): " + _TURN_TEXT + ". With wait_ms it answers as soon as the turn opens or the run ends. "
             "Answer a your_turn with submit_seat_actions before deadline_ms; a tick plays as soon as every seat has "
             "acted. An agent seat that has not asked for its turn within 120 s of the run starting fails the run "
             "(agent_absent). Refusals: unknown_run, not_agent_seat, bad_request (wait_ms outside 0-30000). Needs "
             "runs:write. REST: GET /api/v1/runs/:id/seats/:seat/turn?wait_ms=W.", service.WRITE, True,
             "seat_query", turns.get_turn, read_only=False, query=SEAT_TURN_QUERY),
    ToolSpec("submit_seat_actions", "Answer an agent seat's turn", "Answer the open turn of an agent seat: run_id, "
             "seat, tick (the open turn's) and actions, exactly as a json-format model seat writes them (world: "
             "[{\"action\": \"move\", \"direction\": \"north\"}, ...] up to actions_per_turn; chess [{\"move\": "
             "\"e2e4\"}]; Connect Four [{\"column\": 4}]; or [{\"action\": \"resign\"}]). Answers {ok, tick, "
             "received}; the engine judges the actions when the tick plays and refusals show in the next "
             "observation. Refusals: unknown_run, not_agent_seat, bad_request (tick or actions missing), bad_actions "
             "(not a list of objects, or more than actions_per_turn), turn_closed (tick is not the open turn; the "
             "message says which is). Needs runs:write. REST: POST /api/v1/runs/:id/seats/:seat/actions.",
             service.WRITE, True, "seat_body", turns.submit_actions, model=turns.SeatActions, read_only=False,
             idempotent=False),
)
TOOLS = TOOLS + (  # docs/FORKS.md
    ToolSpec("fork_run", "Fork a played run", fork_tool.DESCRIPTION, service.WRITE, True, "body", fork_tool.fork_run,
             model=fork_tool.ForkRunArgs, read_only=False, idempotent=False, open_world=True),
)
BY_NAME = {t.name: t for t in TOOLS}


TRANSCRIPT_QUERY = {  # get_transcript: GET /api/v1/runs/:id/transcript's query parameters
    "seat": {"type": "integer", "minimum": 0, "description": "only this roster seat's turns"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    "cursor": {"type": "string", "description": "next_cursor of the previous page"},
}
