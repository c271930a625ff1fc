"""MCP `fork_run` (docs/FORKS.md): the run body's fork, flat. Its arguments become a run body
{fork: {run_id, tick, seats, control}, trials, name, ...} for service.launch, REST's POST /runs, so
every check and error is the launch's. Its estimate is estimate_run with `fork`."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field
from studio_client.operations import fork_body  # the REST client's: one mapping to POST /runs for both

from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.runs import service
from orchestrator.runs.admission.body import ForkSeats, RunBody
from orchestrator.validation import StrictModel


class ForkRunArgs(StrictModel):
    """fork_run's arguments: the fork's fields and the run body fields a fork may carry."""
    run_id: Annotated[str, Field(min_length=1, max_length=100)]
    tick: Annotated[int, Field(ge=1)]
    seats: ForkSeats = None
    trials: RunBody.model_fields["trials"].annotation = None
    control: bool = None
    name: RunBody.model_fields["name"].annotation = None
    max_spend_usd: RunBody.model_fields["max_spend_usd"].annotation = None
    grading: RunBody.model_fields["grading"].annotation = None


def fork_run(core: Core, principal: Principal, args: dict) -> dict:
    return service.launch(core, principal, fork_body(args))


DESCRIPTION = (
    "Fork an ended world run of yours: play it on from tick `tick` (1 .. its match_ticks - 1) with some seats "
    "handed to other players, keeping ticks 0 .. tick-1 exactly as played (the state is rebuilt from the run's "
    "event log). Arguments: run_id (required, a finished or cancelled world run with a match), tick (required), "
    "seats ({\"<seat index>\": roster seat}, the seats to change, e.g. {\"0\": {\"model\": \"local/random\"}}; "
    "seats not named keep the original's player, skills and instructions; a kept model seat resumes with its "
    "memory), trials (1: the original's own dice, so an unchanged fork replays it; above 1: a series, trial j on "
    "a continuation seed from the series' batch_seed), control (true, trials above 1 only: N more trials of the "
    "original roster on the same seeds; the series then carries effect: per changed seat and metric, the mean "
    "paired difference fork - control with its 95% interval), name, max_spend_usd, grading. Agent turns = "
    "seats x (season_ticks - tick) x trials (x 2 with control). Answers as launch_run: {ok, run (effective.fork "
    "{run_id, match_id, tick, continuation_seed, arm}), batch}; then get_run or get_batch. Estimate first with "
    "estimate_run and a `fork` object. Refusals: unknown_run, bad_fork (the message says what to change), the "
    "roster codes naming fork.seats.<index>. Needs runs:write on a paid plan. REST: POST /api/v1/runs with fork.")
