"""Provider clients: one chat call per seat turn, over one pooled httpx.AsyncClient per event loop.

Two wire protocols cover every provider a seat may name (CONTRACT.md section 6):
- OpenAI chat completions (POST {base}/chat/completions, Bearer key, tools/tool_calls): `router`
  (default base https://openrouter.ai/api/v1), `openai` (https://api.openai.com/v1), `ollama` (its
  /v1 OpenAI-compatible endpoint; /v1 is appended to the key's base URL when missing) and
  `openai-compatible` (the key's base URL as given);
- Anthropic messages (POST {base}/v1/messages, API version 2026-10-21 with the key as a Bearer token,
  as the official SDK sends it; tools with input_schema, tool_use blocks): `anthropic`
  (https://api.anthropic.com).
`local` seats are scripted policies played inside the engine: no client, no key, free.
Every request carries Accept and Content-Type application/json and this service's User-Agent.

Reasoning and sampling fields follow orchestrator.seats.families (what each model family takes).
max_tokens defaults to DEFAULT_MAX_TOKENS by reasoning off/on.

Failures (orchestrator.seats.faults): 429, 5xx, 529 and dropped connections are retried with jittered
exponential backoff (or the Retry-After the provider sends) while the turn's deadline allows, then
raise Unreachable (with the status the provider answered, if it answered); a 5xx other than 502, 503,
504 and 529 answered with the same body SAME_ANSWERS times in a row, with no Retry-After, is not
retried again that turn; requests in flight per key are capped and adapt to 429s (orchestrator.seats.limits); 401/403 raise KeyRejected and 404 ModelUnknown (the run fails at once); any other
4xx, a 200 whose body is not the protocol's answer, or one carrying an error object raise Rejected
with the provider's own message; no answer by the deadline raises TurnTimeout, unless the provider
answered this turn with a retried fault (then Unreachable, naming it: `Chat.ran_out`).
"""
from __future__ import annotations

import asyncio
import json
import random
import ssl
from functools import lru_cache
from importlib import metadata

import certifi
import httpx

from engine.text import writable
from orchestrator.seats.actions import tool_specs
from orchestrator.seats.faults import ProviderError, Rejected, SeatFailed, TurnTimeout, Unreachable
from orchestrator.seats.families import THINKING_BUDGET, openai_effort, openai_takes_temperature, reasoning_on, \
    thinking_budget
from orchestrator.seats.limits import THROTTLED, KeyLimit, key_limit
from orchestrator.seats.transport import AddressRefused, SeatTransport

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "KeyRejected", "ModelUnknown", "ProviderError", "Rejected",
           "Reply", "SeatFailed", "THINKING_BUDGET", "TurnTimeout", "Unreachable", "make_chat", "new_client",
           "reasoning_on"]

DEFAULT_BASE_URL = {"router": "https://openrouter.ai/api/v1", "openai": "https://api.openai.com/v1",
                    "anthropic": "https://api.anthropic.com"}
OPENAI_STYLE = ("router", "openai", "ollama", "openai-compatible")
ANTHROPIC_VERSION = "2026-10-21"  # the version the current official SDK sends
DEFAULT_MAX_TOKENS = {"off": 1024, "on": 8192}  # output ceiling per call; reasoning needs room to think
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.25, 8.0
TOOL_RESULT = "played; its outcome is in your next observation"
TOOL_IGNORED = "ignored: over your actions per turn"
EXCERPT = 200  # characters of a provider's own error message kept in the cause
# a 5xx answered with the same body this many times in a row is the server's fixed answer to this
# request (a validation error, a missing server flag), not an outage: the turn stops retrying it.
# Statuses that mean "try later" (and any answer with a Retry-After) are retried while the turn lasts.
SAME_ANSWERS = 3
TRY_LATER = (502, 503, 504, 529)


def _user_agent() -> str:
    try:
        return f"ScenarioStudio/{metadata.version('scenario-studio')}"
    except metadata.PackageNotFoundError:
        return "ScenarioStudio"


USER_AGENT = _user_agent()


class KeyRejected(SeatFailed):
    """The provider refused the key (401/403)."""
    code = "provider_key_rejected"

    def __init__(self, seat: str, provider: str, status: int):
        self.seat, self.provider, self.status = seat, provider, status
        super().__init__(f"{seat}: the {provider} provider rejected the key (HTTP {status}); "
                         f"store a working {provider} key with `studio key set` and launch again")


class ModelUnknown(SeatFailed):
    """The provider does not know the model, or the key's base URL points nowhere (404): waiting every
    tick would only burn the season."""
    code = "provider_model_unknown"

    def __init__(self, seat: str, provider: str):
        self.seat, self.provider = seat, provider
        super().__init__(f"{seat}: the {provider} provider answered 404 (no such model, or a wrong base URL "
                         "on the key); check the model id and the key's --base-url and launch again")


class Reply:
    """One answer: tool calls (name, arguments, id), text, the model's refusal text if it refused,
    whether its token ceiling cut it, token usage (input includes cached reads and cache writes), the
    provider's own price of the call when it states one, and the native message for memory."""
    __slots__ = ("calls", "text", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
                 "cost_usd", "message", "refusal", "truncated")

    def __init__(self, calls=(), text="", input_tokens=0, output_tokens=0, message=None, *, refusal=None,
                 truncated=False, cached_tokens=0, cache_write_tokens=0, cost_usd=None):
        self.calls, self.text, self.message = list(calls), text or "", message
        self.input_tokens, self.output_tokens = _int(input_tokens), _int(output_tokens)
        self.cached_tokens, self.cache_write_tokens = _int(cached_tokens), _int(cache_write_tokens)
        self.cost_usd = float(cost_usd) if isinstance(cost_usd, (int, float)) and not isinstance(cost_usd, bool) \
            and cost_usd >= 0 else None
        self.refusal, self.truncated = refusal, bool(truncated)


def _int(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def error_message(data) -> str | None:
    """The provider's own words in an error body ({"error": {"message"}} or {"error": "..."}), if any;
    they may end up in run.error, so as text a response can hold."""
    if not isinstance(data, dict):
        return None
    err = data.get("error")
    if isinstance(err, dict):
        msg = err.get("message") or err.get("type") or json.dumps(err)
        return writable(str(msg)[:EXCERPT])
    if isinstance(err, str) and err:
        return writable(err[:EXCERPT])
    return None


@lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    # loading the CA bundle costs ~15 ms; every client shares one context
    return ssl.create_default_context(cafile=certifi.where())


class PooledClient(httpx.AsyncClient):
    """An httpx.AsyncClient whose pooled transport (`pool`, keep-alive across ticks) the seat path
    calls directly: a turn needs none of the client's per-request machinery (auth flows, redirects,
    cookies, URL merging). The transport is orchestrator.seats.transport.SeatTransport: httpcore's
    pool on asyncio streams. Closing the client closes the pool."""

    def __init__(self, max_connections: int = 8, timeout_s: float = 60.0, ssl_context: ssl.SSLContext | None = None,
                 private_ok: bool = False):
        self.pool = SeatTransport(max_connections=max_connections, ssl_context=ssl_context or _tls(),
                                  private_ok=private_ok)
        super().__init__(transport=self.pool, timeout=httpx.Timeout(timeout_s))


def new_client(max_connections: int = 8, ssl_context: ssl.SSLContext | None = None, *,
               private_ok: bool = False) -> PooledClient:
    """A pooled client. Give each seat its own: httpcore's pool does work proportional to its open
    connections on every request, so one pool shared by a hundred concurrent seats costs more than
    the requests themselves. It connects to public addresses only unless private_ok (the credential's
    own permission, CONTRACT.md section 15)."""
    return PooledClient(max_connections, ssl_context=ssl_context, private_ok=private_ok)


class Chat:
    """A seat's provider: builds the request for its protocol, sends it with retries, reads the reply.

    The system prompt, tools and options never change during a run, so they are encoded to JSON once;
    each turn only encodes its observation, and kept turns are stored already encoded (`remember`)."""

    def __init__(self, provider: str, *, model: str, key: str, client: PooledClient, system: str,
                 base_url: str | None = None, format: str = "tools", reasoning: str | None = None,
                 temperature: float | None = None, max_tokens: int | None = None, seat: str = "seat",
                 tools: tuple[dict, ...] | None = None, max_concurrent: int | None = None):
        self.provider, self.model, self.key, self.system = provider, model, key, system
        self.max_concurrent = max_concurrent  # the key's cap on requests in flight (orchestrator.seats.limits)
        self.tools = tools if tools is not None else tool_specs()  # the world's actions unless a game says
        self.pool = client.pool
        self.retries = 0  # extra attempts after 429, 5xx or a dropped connection, over the run
        self.answered_with: tuple[str, int, int | None] | None = None  # this turn's last retried fault, attempts, status
        self.format, self.reasoning, self.temperature, self.seat = format, reasoning, temperature, seat
        self.max_tokens = int(max_tokens or DEFAULT_MAX_TOKENS["on" if reasoning_on(reasoning) else "off"])
        base = (base_url or DEFAULT_BASE_URL.get(provider) or "").rstrip("/")
        if not base:
            raise ValueError(f"{seat}: provider {provider} needs a base URL with its key")
        self.base_url = base

    def _prepare(self, path: str, headers: dict, options: dict) -> None:
        self.url = httpx.URL(self.base_url + path)
        self.headers = list({**headers, "Accept": "application/json", "Content-Type": "application/json",
                             "User-Agent": USER_AGENT}.items())
        # options as the JSON object's tail: '"model": ..., ...}' follows the messages
        self.tail = json.dumps(options)[1:]

    async def send(self, memory, user_text: str, deadline: float) -> Reply:
        return self.read(await self._post(self.payload(memory, user_text), deadline))

    def read(self, data) -> Reply:
        raise NotImplementedError

    async def _post(self, payload: bytes, deadline: float):
        """POST with retries inside the deadline (loop time). Returns the parsed JSON body of a 2xx.
        Each attempt holds one of the key's slots (orchestrator.seats.limits) while it is in flight."""
        loop = asyncio.get_running_loop()
        limit = key_limit(self.provider, self.base_url, self.key, self.max_concurrent)
        attempt, self.answered_with = 0, None
        last, same = None, 0  # the last error answer (status, body) and how many times in a row it came
        while True:
            if deadline - loop.time() <= 0:
                raise self.ran_out()
            sent_at = await limit.acquire(deadline)
            request = httpx.Request("POST", self.url, content=payload, headers=self.headers,
                                    extensions={"timeout": httpx.Timeout(max(0.0, deadline - loop.time())).as_dict()})
            try:
                r = await self._attempt(request, limit, sent_at)
            except httpx.ConnectTimeout as e:
                raise Unreachable("could not connect to the provider within the turn") from e
            except AddressRefused as e:  # no retry can change the rule: the seat never plays
                raise SeatFailed(f"{self.seat}: {e}") from e
            except httpx.TimeoutException as e:
                raise self.ran_out() from e
            except httpx.TransportError as e:
                status, retry_after, why = None, None, f"connection failed ({type(e).__name__})"
                last, same = None, 0
            else:
                status = r.status_code
                if status in (401, 403):
                    raise KeyRejected(self.seat, self.provider, status)
                if status == 404:
                    raise ModelUnknown(self.seat, self.provider)
                if status < 300:
                    try:
                        return json.loads(r.content)
                    except ValueError:
                        raise Rejected(f"HTTP {status} with a body that is not JSON: "
                                       f"{r.content[:80].decode('utf-8', 'replace')!r}") from None
                said = " ".join((error_message(_json_or_none(r.content)) or r.text[:EXCERPT]).split())
                if status != 429 and status < 500:
                    raise Rejected(f"HTTP {status}: {said}")
                retry_after, why = _retry_after(r), f"HTTP {status}: {said}"
                same = same + 1 if (status, r.content) == last else 1
                last = (status, r.content)
                if same >= SAME_ANSWERS and status >= 500 and status not in TRY_LATER and retry_after is None:
                    raise Unreachable(f"{why}; the same answer {same} times in a row, not retried again this turn",
                                      status)
            wait = retry_after if retry_after is not None else \
                random.uniform(0.5, 1.0) * min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** attempt)
            attempt += 1
            self.answered_with = (why, attempt, status)
            if loop.time() + wait >= deadline:
                raise Unreachable(f"{why}, after {attempt} attempts; no time left in the turn to retry", status)
            self.retries += 1
            await asyncio.sleep(wait)

    def ran_out(self) -> ProviderError:
        """The turn's deadline passed: a timeout when the provider never answered this turn, else the
        fault it answered with (a retry cut short by the deadline does not turn 503s into a slow provider)."""
        if self.answered_with is None:
            return TurnTimeout("the provider did not answer within the turn")
        why, attempts, status = self.answered_with
        return Unreachable(f"{why}, after {attempts} attempts; the turn ran out while retrying", status)

    async def _attempt(self, request: httpx.Request, limit: KeyLimit, sent_at: float) -> httpx.Response:
        """One request on a slot of the key's limit, which learns from the answer."""
        try:
            r = await self.pool.handle_async_request(request)
            try:
                await r.aread()
            finally:
                await r.aclose()
        finally:
            limit.release()
        if r.status_code in THROTTLED:
            limit.refused(sent_at, _retry_after(r))
        elif r.status_code < 300:
            limit.answered(sent_at)
        return r


def _json_or_none(content: bytes):
    try:
        return json.loads(content)
    except ValueError:
        return None


def _retry_after(r: httpx.Response) -> float | None:
    try:
        return max(0.0, float(r.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def _answer(data, what: str) -> dict:
    """The body as an answer object, or Rejected: not an object, or an error object instead."""
    said = error_message(data)
    if said is not None:
        raise Rejected(f"the provider answered with an error: {said}")
    if not isinstance(data, dict):
        raise Rejected(f"the provider's answer is not {what}")
    return data


class OpenAIChat(Chat):
    """router, openai, ollama, openai-compatible: OpenAI chat completions."""

    def __init__(self, provider: str, **kw):
        super().__init__(provider, **kw)
        if provider == "ollama" and not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}  # keyless ollama
        if provider == "router":
            headers["X-Title"] = "Scenario Studio"
        options = {"model": self.model}
        # openai's own API renamed the ceiling for reasoning models; the others keep max_tokens
        options["max_completion_tokens" if provider == "openai" else "max_tokens"] = self.max_tokens
        if self.temperature is not None and (provider != "openai"
                                             or openai_takes_temperature(self.model, self.reasoning)):
            options["temperature"] = self.temperature
        if self.format == "tools":
            options["tools"] = [{"type": "function", "function": t} for t in self.tools]
            options["tool_choice"] = "auto"
        if provider == "router":  # an unset reasoning sends nothing: the model's own default
            if self.reasoning is not None:
                options["reasoning"] = {"effort": self.reasoning if reasoning_on(self.reasoning) else "none"}
        elif provider == "openai":
            effort = openai_effort(self.model, self.reasoning)
            if effort is not None:
                options["reasoning_effort"] = effort
        elif reasoning_on(self.reasoning):  # self-hosted servers: off and unset send nothing
            options["reasoning_effort"] = self.reasoning
        self._prepare("/chat/completions", headers, options)
        self.head = '{"messages":[' + json.dumps({"role": "system", "content": self.system})

    def payload(self, memory, user_text: str) -> bytes:
        user = '{"role":"user","content":' + json.dumps(user_text) + "}],"
        return (",".join([self.head, *memory, user]) + self.tail).encode()

    def read(self, data) -> Reply:
        data = _answer(data, "a chat completion")
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        msg = choice.get("message") if choice else None
        if not isinstance(msg, dict):
            raise Rejected("the provider's answer is not a chat completion (no choices[0].message)")
        calls = []
        for c in msg.get("tool_calls") or []:
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                calls.append((fn["name"], fn.get("arguments"), c.get("id")))
        content = msg.get("content")
        if isinstance(content, list):  # content parts, as some servers send them
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        finish = choice.get("finish_reason")
        refusal = msg.get("refusal") if isinstance(msg.get("refusal"), str) and msg.get("refusal") else None
        if refusal is None and finish == "content_filter":
            refusal = "content_filter"
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
        return Reply(calls, text, usage.get("prompt_tokens"), usage.get("completion_tokens"), message=msg,
                     refusal=refusal, truncated=finish == "length", cached_tokens=details.get("cached_tokens"),
                     cache_write_tokens=details.get("cache_write_tokens"),
                     cost_usd=usage.get("cost") if self.provider == "router" else None)

    def remember(self, user_text: str, reply: Reply, played: int) -> str:
        """The turn, encoded, for later requests: observation, the reply, and one result per call."""
        out = [{"role": "user", "content": user_text}]
        calls = []
        for k, (name, args, call_id) in enumerate(reply.calls):
            calls.append({"id": call_id or f"call_{k}", "type": "function",
                          "function": {"name": str(name), "arguments": args if isinstance(args, str) else "{}"}})
        said = reply.text or reply.refusal
        # beside tool calls an empty string, never null or absent: OpenAI takes all three, but
        # llama-cpp-python's request type refuses null and its chatml-function-calling template
        # fails on an absent content, and LM Studio, Ollama, older llama.cpp and TGI refuse one or the
        # other (docs/SEATS.md, "OpenAI-compatible servers")
        assistant = {"role": "assistant", "content": said or ("" if calls else "(no reply)")}
        if calls:
            assistant["tool_calls"] = calls
        out.append(assistant)
        for k, c in enumerate(calls):
            out.append({"role": "tool", "tool_call_id": c["id"], "content": TOOL_RESULT if k < played else TOOL_IGNORED})
        return json.dumps(out)[1:-1]


# the fields of each answer block that the API takes back in an assistant turn (its *BlockParam)
_BLOCK_PARAMS = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input"),
                 "thinking": ("type", "thinking", "signature"), "redacted_thinking": ("type", "data")}


class AnthropicChat(Chat):
    """anthropic: the messages API with tool use."""

    def __init__(self, provider: str, **kw):
        super().__init__(provider, **kw)
        options = {"model": self.model, "max_tokens": self.max_tokens,
                   # the system prompt is the same every turn: let the provider cache it
                   "system": [{"type": "text", "text": self.system, "cache_control": {"type": "ephemeral"}}]}
        if self.format == "tools":
            options["tools"] = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                                for t in self.tools]
            options["tool_choice"] = {"type": "auto"}
        # temperature is not sent: API version 2026-10-21 refuses it (admission refuses such seats)
        budget = thinking_budget(self.reasoning, self.max_tokens)
        if budget is not None:
            options["thinking"] = {"type": "enabled", "budget_tokens": budget}
        self._prepare("/v1/messages", {"Authorization": f"Bearer {self.key}", "anthropic-version": ANTHROPIC_VERSION},
                      options)

    def payload(self, memory, user_text: str) -> bytes:
        parts, pending = ['{"messages":['], ""
        # tool_result blocks must open the user turn right after the tool_use they answer; the oldest
        # kept turn has no predecessor left, so it opens with none
        for text, content, results in memory:
            parts.append('{"role":"user","content":[' + pending + text + ']},{"role":"assistant","content":'
                         + content + "},")
            pending = results + "," if results else ""
        parts.append('{"role":"user","content":[' + pending + json.dumps({"type": "text", "text": user_text})
                     + "]}],")
        parts.append(self.tail)
        return "".join(parts).encode()

    def read(self, data) -> Reply:
        data = _answer(data, "a messages response")
        if data.get("type") == "error":
            raise Rejected("the provider answered with an error object")
        content = data.get("content")
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            raise Rejected("the provider's answer is not a messages response (no content blocks)")
        calls = [(b.get("name"), b.get("input"), b.get("id")) for b in content
                 if b.get("type") == "tool_use" and isinstance(b.get("name"), str)]
        text = "".join(b.get("text") or "" for b in content if b.get("type") == "text")
        stop = data.get("stop_reason")
        refusal = None
        if stop == "refusal":
            details = data.get("stop_details") if isinstance(data.get("stop_details"), dict) else {}
            refusal = details.get("explanation") or text or details.get("category") or "refused"
        u = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        read, written = _int(u.get("cache_read_input_tokens")), _int(u.get("cache_creation_input_tokens"))
        # the answer's blocks in the shape the API takes back, thinking and its signature included
        message = [{k: b[k] for k in _BLOCK_PARAMS[b["type"]] if k in b} for b in content
                   if b.get("type") in _BLOCK_PARAMS]
        return Reply(calls, text, _int(u.get("input_tokens")) + read + written, u.get("output_tokens"),
                     message=message, refusal=refusal,
                     truncated=stop in ("max_tokens", "model_context_window_exceeded"),
                     cached_tokens=read, cache_write_tokens=written)

    def remember(self, user_text: str, reply: Reply, played: int) -> tuple[str, str, str]:
        """The turn, encoded: its observation block, the assistant content, the tool results it awaits."""
        content = list(reply.message or [])
        if not any(b.get("type") in ("text", "tool_use") for b in content):
            content.append({"type": "text", "text": reply.text or reply.refusal or "(no reply)"})
        results = [{"type": "tool_result", "tool_use_id": call_id or f"toolu_{k}",
                    "content": TOOL_RESULT if k < played else TOOL_IGNORED}
                   for k, (_, _, call_id) in enumerate(reply.calls)]
        return json.dumps({"type": "text", "text": user_text}), json.dumps(content), json.dumps(results)[1:-1]


def make_chat(provider: str, **kw) -> Chat:
    if provider in OPENAI_STYLE:
        return OpenAIChat(provider, **kw)
    if provider == "anthropic":
        return AnthropicChat(provider, **kw)
    raise ValueError(f"provider {provider!r} has no chat client (local seats are played by the engine)")
