"""The MCP tools' JSON Schemas: each tool's arguments (its REST body's model, or its REST query
parameters, plus `id` and `api_key`) and its structured result (its REST twin's answer model)."""
from __future__ import annotations

import copy

from pydantic import BaseModel

from api import (analysis_schemas, estimate_schemas, run_schemas, schemas, series_schemas, transcript_schemas,
                 turn_schemas, usage_schemas)
from api.mcp.tools import QUERY, SEAT_TURN_QUERY, TRANSCRIPT_QUERY, ToolSpec

API_KEY = {"type": "string", "description": "Access token (dsk_ followed by 64 hex characters). Only needed when "
           "the connection sends no Authorization: Bearer header; when given it is used instead of the header."}

# Each tool's structured result: its REST twin's answer, so the same model describes both.
OUTPUTS: dict[str, type[BaseModel]] = {
    "whoami": schemas.Me, "get_scenario_schema": schemas.ScenarioSchema, "validate_scenario": schemas.Validated,
    "create_scenario": schemas.ScenarioCreated, "list_scenarios": schemas.ScenarioList,
    "get_scenario": schemas.ScenarioOne, "update_scenario": schemas.ScenarioOne, "delete_scenario": schemas.Deleted,
    "list_skills": schemas.SkillList, "get_skill": schemas.SkillOne, "create_skill": schemas.SkillCreated,
    "update_skill": schemas.SkillOne, "delete_skill": schemas.Deleted, "list_library": schemas.LibraryList,
    "list_anchors": schemas.AnchorListing, "estimate_run": estimate_schemas.Estimate,
    "launch_run": run_schemas.Launched, "list_runs": run_schemas.RunList, "get_run": run_schemas.RunOne,
    "get_transcript": transcript_schemas.Transcript, "get_decisions": transcript_schemas.Decisions,
    "cancel_run": run_schemas.Cancelled, "get_batch": series_schemas.BatchOne, "get_usage": usage_schemas.Usage,
    "get_leaderboard": analysis_schemas.LeaderboardAnswer, "compare_batches": analysis_schemas.ComparisonAnswer,
    "export_batch": analysis_schemas.CsvExport, "export_run": analysis_schemas.FileExport,
    "fork_run": run_schemas.Launched,
    "get_seat_turn": turn_schemas.SeatTurn, "submit_seat_actions": turn_schemas.ActionsReceived,
}


def output_schema(spec: ToolSpec) -> dict:
    """The JSON Schema of the tool's structured content (an object, its $refs within itself)."""
    schema = OUTPUTS[spec.name].model_json_schema(mode="serialization")
    schema.pop("title", None)
    return schema


def input_schema(spec: ToolSpec) -> dict:
    """The model's own JSON Schema (the one REST's OpenAPI document shows) plus `id` and `api_key`.
    It documents the arguments; the server does not enforce it, the core validates them as REST's."""
    if spec.model is not None:
        schema = copy.deepcopy(spec.model.model_json_schema())
        schema.pop("title", None)
    else:
        query = {"query": spec.query or QUERY, "id_query": spec.query or TRANSCRIPT_QUERY,
                 "seat_query": spec.query}.get(spec.shape, {})
        schema = {"type": "object", "properties": copy.deepcopy(query), "additionalProperties": False}
    props = schema.setdefault("properties", {})
    if spec.shape in ("seat_query", "seat_body"):
        seat = {k: dict(SEAT_TURN_QUERY[k]) for k in ("run_id", "seat")}
        schema["properties"] = props = {**seat, **{k: v for k, v in props.items() if k not in seat}}
        schema["required"] = ["run_id", "seat", *schema.get("required", [])]
    if spec.id_text:
        schema["properties"] = props = {"id": {"type": "string", "description": spec.id_text}, **props}
        schema["required"] = ["id", *schema.get("required", [])]
    props["api_key"] = dict(API_KEY)
    return schema

