"""Checking a provider key when it is stored: one cheap authenticated GET, never a chat call.

- router: GET {base}/key (the key-info endpoint; the router's model list answers without a key);
- openai, ollama, openai-compatible: GET {base}/models with the Bearer key (ollama's base gains /v1 as
  the seats' client does);
- anthropic: GET {base}/v1/models with x-api-key and anthropic-version.
2xx is ok; 401 and 403 are rejected; anything else (no answer, a refused address, another status,
a redirect, which is never followed) is unreachable, with the reason in `detail`. The call goes
through the seats' own client, so the address rule of CONTRACT.md section 15 applies to it too.
"""
from __future__ import annotations

import asyncio
import concurrent.futures

import httpx

from orchestrator.seats.providers import ANTHROPIC_VERSION, DEFAULT_BASE_URL, new_client

PROBE_TIMEOUT_S = 5.0  # an offline setup waits this long at most; the key is stored either way


def request_for(provider: str, key: str, base_url: str | None) -> tuple[str, dict]:
    """(url, headers) of the check for this provider."""
    base = (base_url or DEFAULT_BASE_URL.get(provider) or "").rstrip("/")
    if provider == "anthropic":
        return base + "/v1/models", {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
    if provider == "router":
        return base + "/key", {"Authorization": f"Bearer {key}"}
    if provider == "ollama" and not base.endswith("/v1"):
        base += "/v1"
    return base + "/models", ({"Authorization": f"Bearer {key}"} if key else {})


async def probe_async(provider: str, key: str, base_url: str | None, *, private_ok: bool,
                      timeout_s: float = PROBE_TIMEOUT_S) -> tuple[str, str]:
    url, headers = request_for(provider, key, base_url)
    what = f"GET {url}"
    try:
        async with new_client(1, private_ok=private_ok) as client:
            r = await client.get(url, headers=headers, timeout=timeout_s)
    except httpx.TimeoutException:
        return "unreachable", f"{what}: no answer within {timeout_s:g} s"
    except httpx.HTTPError as e:
        return "unreachable", f"{what}: {e or type(e).__name__}"
    if r.status_code in (401, 403):
        return "rejected", f"{what}: the provider refused the key (HTTP {r.status_code})"
    if r.is_success:
        return "ok", f"{what}: HTTP {r.status_code}"
    return "unreachable", f"{what}: HTTP {r.status_code}" + (" (redirects are not followed)" if r.is_redirect else "")


def probe(provider: str, key: str, base_url: str | None, *, private_ok: bool,
          timeout_s: float = PROBE_TIMEOUT_S) -> tuple[str, str]:
    """(status, detail) with status ok, rejected or unreachable. Synchronous: runs its own loop in a
    thread, so the CLI and a running event loop can both call it."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, probe_async(provider, key, base_url, private_ok=private_ok,
                                                    timeout_s=timeout_s)).result()
