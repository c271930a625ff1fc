"""Checking a provider key when it is stored: one cheap authenticated GET, never a chat call, on the
path the provider's registry row names (`key_check`), the key sent as its wire protocol sends it
(`check_headers`). A router's path is its key-info endpoint, since its model list answers without a
key; ollama's base gains /v1 as the seats' client does. 2xx is ok; 401 and 403 are rejected; anything
else (no answer, a refused address, another status, a redirect, never followed) is unreachable, with
the reason in `detail`. The call goes through the seats' own client, so the address rule of
docs/api.md applies to it too. Servers whose abilities vary (their row names a `probe`) are also
asked whether they make tool calls (`tools_async`).
"""
from __future__ import annotations

import asyncio
import concurrent.futures

import httpx

from orchestrator.seats.chat import EXCERPT, error_message
from orchestrator.seats.client import new_client
from orchestrator.seats.keyed import Keyed, moved
from orchestrator.provider_kinds import SPECS, spec
from orchestrator.seats.openai_chat import OpenAIChat
from orchestrator.seats.providers import PROTOCOLS, endpoint

PROBE_TIMEOUT_S = 5.0  # an offline setup waits this long at most; the key is stored either way
# a self-hosted model on CPUs may load on its first request: the chat probes wait longer than the GET
CHAT_TIMEOUT_S = 60.0
PROBED = tuple(n for n, s in SPECS.items() if s.probe)  # the registry's, for admission's no_tools check
TOOL_PROBE_TOKENS = 128  # room for one call of a tool without arguments, in any server's call syntax
REFUSED_SHAPE = (400, 422, 500, 501)  # how servers without tool calls answer a request carrying tools
PING = {"type": "function", "function": {
    "name": "ping", "description": "Tells the caller that you can call tools. Takes no arguments.",
    "parameters": {"type": "object", "properties": {}, "required": []}}}


def request_for(provider: str, key: str, base_url: str | None) -> tuple[Keyed, str]:
    """The key on its origin, and the path of the check for this provider."""
    row = spec(provider)
    return Keyed(endpoint(row, base_url), PROTOCOLS[row.protocol].check_headers(key)), row.key_check


async def _key_check(client, provider: str, key: str, base_url: str | None,
                     timeout_s: float) -> tuple[str, str, httpx.Response | None]:
    keyed, path = request_for(provider, key, base_url)
    url = keyed.url(path)
    what = f"GET {url}"
    try:
        r = await keyed.send(client, "GET", url, timeout=timeout_s)
    except httpx.TimeoutException:
        return "unreachable", f"{what}: no answer within {timeout_s:g} s", None
    except httpx.HTTPError as e:
        return "unreachable", f"{what}: {e or type(e).__name__}", None
    if r.status_code in (401, 403):
        return "rejected", f"{what}: the provider refused the key (HTTP {r.status_code})", r
    if r.is_success:
        return "ok", f"{what}: HTTP {r.status_code}", r
    return ("unreachable", f"{what}: HTTP {r.status_code}" + (f", {moved(r)}" if r.is_redirect else ""), r)


async def probe_async(provider: str, key: str, base_url: str | None, *, private_ok: bool,
                      timeout_s: float = PROBE_TIMEOUT_S) -> tuple[str, str]:
    async with new_client(1, private_ok=private_ok) as client:
        status, detail, _ = await _key_check(client, provider, key, base_url, timeout_s)
    return status, detail


def _sync(coro):
    # its own loop in a thread: the CLI and code inside a running event loop can both wait on it
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def probe(provider: str, key: str, base_url: str | None, *, private_ok: bool,
          timeout_s: float = PROBE_TIMEOUT_S) -> tuple[str, str]:
    """(status, detail) with status ok, rejected or unreachable. Synchronous (see _sync)."""
    return _sync(probe_async(provider, key, base_url, private_ok=private_ok, timeout_s=timeout_s))


def _first_listed(r: httpx.Response | None) -> str | None:
    """The first model id of an OpenAI-style model list ({"data": [{"id"}]}), if the answer is one."""
    try:
        data = r.json()["data"]
        return next(m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"])
    except (AttributeError, ValueError, KeyError, TypeError, StopIteration):
        return None


def _said(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        body = None
    return error_message(body) or r.text[:EXCERPT]


async def _chat(client, keyed: Keyed, body: dict, timeout_s: float) -> tuple[httpx.Response | None, str]:
    """(response, '') or (None, why there is none)."""
    try:
        return await keyed.send(client, "POST", keyed.url("/chat/completions"), json=body, timeout=timeout_s), ""
    except httpx.TimeoutException:
        return None, f"no answer within {timeout_s:g} s"
    except httpx.HTTPError as e:
        return None, str(e) or type(e).__name__


def _message(r: httpx.Response) -> tuple[dict | None, str | None]:
    """(choices[0].message, finish_reason) of a chat completion, or (None, None)."""
    try:
        choice = r.json()["choices"][0]
        return (choice["message"], choice.get("finish_reason")) if isinstance(choice["message"], dict) else (None, None)
    except (ValueError, KeyError, IndexError, TypeError):
        return None, None


async def tools_async(client, provider: str, key: str, base_url: str | None, model: str,
                      timeout_s: float = CHAT_TIMEOUT_S) -> tuple[str | None, str]:
    """("yes" | "no" | None, what the probe saw) for `model` on this server, from two chat completions
    (`model` is the one named, else the first the server lists; a router, probe `named`, serves models
    of differing abilities, so it is probed only on a named model):
    - a one-token completion, which must answer (else nothing is concluded: the model or the chat path
      does not work, which a tool probe could not tell apart);
    - one offering a tool with `tool_choice: auto`, as a tools seat sends it, asking the model to call
      it. A tool call is `yes`; a refusal of the request (HTTP 400, 422, 500 or 501 with the server's
      reason, an error object) or a plain text answer is `no` (servers that ignore `tools` answer
      text); a reply cut at its ceiling, another status or no answer leaves it unknown (None)."""
    # the capability probe speaks chat completions: the providers whose row names a probe
    keyed = Keyed(endpoint(provider, base_url), OpenAIChat.check_headers(key))
    r, why = await _chat(client, keyed, {"model": model, "max_tokens": 1,
                                                "messages": [{"role": "user", "content": "Say OK."}]}, timeout_s)
    if r is None:
        seen = why
    elif not r.is_success:
        seen = f"HTTP {r.status_code}: {_said(r)}"
    elif _message(r)[0] is None:
        seen = "an answer that is not a chat completion"
    else:
        seen = None
    if seen is not None:
        return None, f"model {model}: a one-token chat completion got {seen}; tool calls not probed"
    r, why = await _chat(client, keyed, {
        "model": model, "max_tokens": TOOL_PROBE_TOKENS, "tools": [PING], "tool_choice": "auto",
        "messages": [{"role": "user", "content": "Call the ping tool now. Answer with the tool call only."}]},
        timeout_s)
    what = f"model {model}: a chat completion offering a tool"
    if r is None:
        return None, f"{what} got {why}"
    if r.status_code in REFUSED_SHAPE:
        return "no", f"{what} was refused (HTTP {r.status_code}: {_said(r)})"
    if not r.is_success:
        return None, f"{what} got HTTP {r.status_code}: {_said(r)}"
    try:
        refused = error_message(r.json())
    except ValueError:
        refused = None
    if refused:
        return "no", f"{what} was answered with an error: {refused}"
    msg, finish = _message(r)
    if msg is None:
        return None, f"{what} got an answer that is not a chat completion"
    calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict) and isinstance(c.get("function"), dict)]
    if calls:
        return "yes", f"{what} was answered with a tool call ({calls[0]['function'].get('name')})"
    if finish == "length":
        return None, f"{what} was cut at {TOOL_PROBE_TOKENS} tokens before any tool call; could not tell"
    return "no", (f"{what} was answered with text, not a tool call (the server ignores `tools`, or serves "
                  "the model without a chat template that has tool calls)")


async def check_async(provider: str, key: str, base_url: str | None, *, private_ok: bool, model: str | None = None,
                      timeout_s: float = PROBE_TIMEOUT_S, chat_timeout_s: float = CHAT_TIMEOUT_S) -> dict:
    """The key's check and, for providers whose row names a probe and whose key is ok, what the server can do:
    {status, detail, tools: "yes" | "no" | None, tools_detail, model (the model probed, or None)}."""
    async with new_client(1, private_ok=private_ok) as client:
        status, detail, r = await _key_check(client, provider, key, base_url, timeout_s)
        out = {"status": status, "detail": detail, "tools": None, "tools_detail": None, "model": None}
        probe = spec(provider).probe
        if probe is None or status != "ok":
            return out
        if model is None and probe != "named":
            model = _first_listed(r)
        if model is None:
            out["tools_detail"] = ("not probed: a router serves many models; name the model to probe "
                                   "(`studio key set ... --check-model M`)" if probe == "named" else
                                   "not probed: the server listed no model; name one with --check-model")
            return out
        out["tools"], out["tools_detail"] = await tools_async(client, provider, key, base_url, model, chat_timeout_s)
        out["model"] = model
        return out


def check(provider: str, key: str, base_url: str | None, *, private_ok: bool, model: str | None = None,
          timeout_s: float = PROBE_TIMEOUT_S, chat_timeout_s: float = CHAT_TIMEOUT_S) -> dict:
    """check_async, synchronously (see _sync)."""
    return _sync(check_async(provider, key, base_url, private_ok=private_ok, model=model, timeout_s=timeout_s,
                             chat_timeout_s=chat_timeout_s))
