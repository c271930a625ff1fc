"""Response shapes of the run routes (CONTRACT.md section 3) for the OpenAPI document.

As in api/schemas.py, routes return the service core's dicts and these models only describe them:
the JSON on the wire is the core's, field for field. Parts whose shape belongs to another document
(the effective scenario, roster entries, results, the batch summary) stay open objects here.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from api.schemas import ErrorEnvelope


class RunLive(BaseModel):
    tick: int
    season_ticks: int


class RunLinks(BaseModel):
    match: str
    log: str
    replay: str


class RunSpend(BaseModel):
    usd: float
    cap_usd: float | None


class RunTurns(BaseModel):
    reserved: int
    settled: int | None


class Run(BaseModel):
    run_id: str
    match_id: str | None
    name: str
    status: str
    scenario_id: str
    scenario_hash: str
    batch_id: str | None
    created_at_ms: int
    started_at_ms: int | None
    finished_at_ms: int | None
    live: RunLive | None
    links: RunLinks | None
    error: ErrorEnvelope | None
    effective: dict[str, Any]
    roster: list[dict[str, Any]]
    spend: RunSpend
    agent_turns: RunTurns
    stop_reason: str | None


class EstimateQuota(BaseModel):
    agent_turns_remaining: int | None
    after_launch: int | None


class EstimateQueue(BaseModel):
    queued: int
    limit: int
    headroom: int


class EstimateBatch(BaseModel):
    trials: int
    agent_turns: int
    usd: float
    wall_clock_ms: Any
    seats: list[dict[str, Any]]
    spend_cap_usd: float | None
    quota: EstimateQuota
    queue: EstimateQueue
    precision: Any


class Estimate(BaseModel):
    ok: bool
    batch: EstimateBatch


class LaunchedBatch(BaseModel):
    batch_id: str
    trials: int
    seed_mode: str
    run_ids: list[str]


class Launched(BaseModel):
    ok: bool
    run: Run
    batch: LaunchedBatch | None


class RunOne(BaseModel):
    run: Run
    results: dict[str, Any] | None


class RunList(BaseModel):
    runs: list[Run]
    next_cursor: str | None


class Cancelled(BaseModel):
    ok: bool
    cancelled: bool
    run: Run


class BatchView(BaseModel):
    batch_id: str
    status: str
    trials: int
    seed_mode: str
    run_ids: list[str]
    summary: dict[str, Any]


class BatchOne(BaseModel):
    batch: BatchView


class Usage(BaseModel):
    months: list[dict[str, Any]]
    allowances: dict[str, Any]


class Transcript(BaseModel):
    turns: list[dict[str, Any]]
    next_cursor: str | None
