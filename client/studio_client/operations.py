"""The REST operations the client calls, one per MCP tool and under the tool's name (the same names
and arguments as the server's own Python surface), plus the wire's constants the client relies on.
Studio.check() compares all of it with a server's OpenAPI document."""
from __future__ import annotations

from typing import NamedTuple


class Operation(NamedTuple):
    """`{name}` in the path is taken from the call's arguments; the rest go in the query (GET) or the
    JSON body. `answer` says how a non-JSON answer reads: csv (export_batch) or file (export_run)."""
    method: str
    path: str
    answer: str = "json"


V1 = "/api/v1"
OPERATIONS: dict[str, Operation] = {
    "whoami": Operation("GET", f"{V1}/me"),
    "get_scenario_schema": Operation("GET", f"{V1}/scenarios/schema"),
    "validate_scenario": Operation("POST", f"{V1}/scenarios/validate"),
    "create_scenario": Operation("POST", f"{V1}/scenarios"),
    "list_scenarios": Operation("GET", f"{V1}/scenarios"),
    "get_scenario": Operation("GET", f"{V1}/scenarios/{{id}}"),
    "update_scenario": Operation("PUT", f"{V1}/scenarios/{{id}}"),
    "delete_scenario": Operation("DELETE", f"{V1}/scenarios/{{id}}"),
    "list_skills": Operation("GET", f"{V1}/skills"),
    "get_skill": Operation("GET", f"{V1}/skills/{{id}}"),
    "create_skill": Operation("POST", f"{V1}/skills"),
    "update_skill": Operation("PUT", f"{V1}/skills/{{id}}"),
    "delete_skill": Operation("DELETE", f"{V1}/skills/{{id}}"),
    "estimate_run": Operation("POST", f"{V1}/runs/estimate"),
    "launch_run": Operation("POST", f"{V1}/runs"),
    "list_runs": Operation("GET", f"{V1}/runs"),
    "get_run": Operation("GET", f"{V1}/runs/{{id}}"),
    "get_transcript": Operation("GET", f"{V1}/runs/{{id}}/transcript"),
    "get_decisions": Operation("GET", f"{V1}/runs/{{id}}/decisions"),
    "cancel_run": Operation("POST", f"{V1}/runs/{{id}}/cancel"),
    "get_batch": Operation("GET", f"{V1}/batches/{{id}}"),
    "get_usage": Operation("GET", f"{V1}/usage"),
    "list_library": Operation("GET", f"{V1}/library/scenarios"),
    "list_anchors": Operation("GET", f"{V1}/library/anchors"),
    "get_leaderboard": Operation("GET", f"{V1}/leaderboard"),
    "compare_batches": Operation("GET", f"{V1}/compare"),
    "export_batch": Operation("GET", f"{V1}/batches/{{id}}/export", "csv"),
    # a series' batch_id goes to /batches/{id}/export instead (Studio.call picks)
    "export_run": Operation("GET", f"{V1}/runs/{{id}}/export", "file"),
    "get_seat_turn": Operation("GET", f"{V1}/runs/{{run_id}}/seats/{{seat}}/turn"),
    "submit_seat_actions": Operation("POST", f"{V1}/runs/{{run_id}}/seats/{{seat}}/actions"),
    "fork_run": Operation("POST", f"{V1}/runs"),  # the run body with `fork` (fork_body)
}
SERIES_EXPORT = f"{V1}/batches/{{id}}/export"
OPENAPI = f"{V1}/openapi.json"

# A run's statuses on the wire (the document's RunView.status), and a series' id prefix
ACTIVE = ("queued", "launching", "running")
TERMINAL = ("finished", "failed", "cancelled")
BATCH_PREFIX = "bat_"
MAX_WAIT_MS = 30_000  # the longest long-poll GET /batches/{id} takes (its wait_ms maximum)
FORK_FIELDS = ("run_id", "tick", "seats", "control")


def fork_body(args: dict) -> dict:
    """The run body fork_run launches: the fork's own fields under `fork`, the rest as sent."""
    fork = {k: args[k] for k in FORK_FIELDS if args.get(k) is not None}
    return {"fork": fork, **{k: v for k, v in args.items() if k not in FORK_FIELDS}}
