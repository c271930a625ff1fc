"""Domain errors carrying the API's error codes. The transports map them to the envelope in one place."""
from __future__ import annotations

# docs/api.md, "Bodies and errors": code -> HTTP status. The single source for every surface (REST, MCP, notebooks).
STATUS: dict[str, int] = {
    "token_required": 401,
    "scope_required": 403,
    "plan_api": 403,
    "rate_limited": 429,
    "sign_in_failed": 401,  # web console sign-in
    "csrf_failed": 403,
    "bad_request": 400,
    "bad_scenario": 400,
    "bad_season_ticks": 400,
    "bad_env": 400,
    "too_many_scenarios": 400,
    "unknown_scenario": 404,
    "bad_skill": 400,
    "too_many_skills": 400,
    "unknown_skill": 404,
    "bad_roster": 400,
    "bad_provider": 400,
    "provider_key_required": 400,
    "router_key_required": 400,
    "router_balance_low": 400,
    "billing_frozen": 400,
    "email_unverified": 400,
    "bad_trials": 400,
    "bad_spend_cap": 400,
    "plan_seats": 400,
    "plan_ticks": 400,
    "plan_series": 400,
    "plan_quota": 400,
    "too_many_runs": 400,
    "run_history_full": 400,
    "seed_not_allowed": 400,
    "unknown_run": 404,
    "bad_fork": 400,  # docs/FORKS.md
    "run_launching": 409,
    # result bundles: a series unknown to the account, a run not ended yet
    "unknown_batch": 404,
    "run_not_ended": 409,
    # a scripted match's log derived on demand that this engine cannot give (docs/RUNS.md, "Upgrading the engine")
    "log_not_kept": 410,
    # an archive file of the match that is there and cannot be read (docs/api.md, "Damaged archive files")
    "archive_damaged": 410,
    # docs/AGENTS.md: agent seats' turns
    "not_agent_seat": 400,
    "bad_actions": 400,
    "turn_closed": 409,
    # docs/RUNS.md: a series' precision target
    "bad_until": 400,
    "internal_error": 500,
    # docs/api.md: a provider base URL an account may not store (web console)
    "bad_base_url": 400,
    # the store cannot take a write for now (its write lock held elsewhere, or a full disk): retry
    "unavailable": 503,
    # docs/api.md: router-level answers for unknown routes and wrong methods.
    "not_found": 404,
    "method_not_allowed": 405,
}


def envelope(code: str, message: str) -> dict:
    """the API's error envelope, the one shape of every refusal and of a failed run's `error`."""
    return {"error": code, "message": message}


class DomainError(Exception):
    """A refusal with the API's code; status comes from STATUS so no caller can pick a wrong one."""

    def __init__(self, code: str, message: str, *, retry_after_s: int | None = None):
        if code not in STATUS:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.status = STATUS[code]
        self.message = message
        self.retry_after_s = retry_after_s  # set on rate_limited and unavailable; REST sends it as Retry-After

    def envelope(self) -> dict:
        return envelope(self.code, self.message)

    def __repr__(self) -> str:
        return f"DomainError({self.code!r}, {self.message!r})"


class AdminError(ValueError):
    """A refusal of an operator command (CLI only): unknown account, token allowance, bad flags."""
