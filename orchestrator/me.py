"""GET /me: the account view (GET /api/v1/me). Any valid token may read it."""
from __future__ import annotations

from orchestrator.auth import Principal
from orchestrator.plans import limits


def me(principal: Principal) -> dict:
    plan = principal.plan
    return {
        "user": {"id": principal.account_id, "email": principal.email, "handle": principal.handle},
        # Self-hosted: the operator sets plans (`studio account set`), there is no billing period.
        "plan": {"id": plan["id"], "name": plan["name"], "status": "frozen" if principal.frozen else "active",
                 "source": "operator", "period_end_ms": None},
        "api_access": principal.api_access,
        "token": {"name": principal.token_name, "prefix": principal.token_prefix, "scopes": list(principal.scopes),
                  "expires_at_ms": principal.expires_at_ms},
        "limits": limits(plan),
    }
