"""Provider clients: one chat call per seat turn, over one pooled httpx.AsyncClient per event loop.

Two wire protocols cover every provider a seat may name (CONTRACT.md section 6):
- OpenAI chat completions (POST {base}/chat/completions, Bearer key, tools/tool_calls): `router`
  (default base https://openrouter.ai/api/v1), `openai` (https://api.openai.com/v1), `ollama` (its
  /v1 OpenAI-compatible endpoint; /v1 is appended to the key's base URL when missing) and
  `openai-compatible` (the key's base URL as given);
- Anthropic messages (POST {base}/v1/messages, x-api-key, anthropic-version, tools with
  input_schema, tool_use blocks): `anthropic` (https://api.anthropic.com).
`local` seats are scripted policies played inside the engine: no client, no key, free.

Reasoning effort: router sends reasoning.effort (off -> "none"); openai, ollama and
openai-compatible send reasoning_effort when on and nothing when off (older models refuse
unknown values); anthropic turns thinking on with a budget per effort (temperature is then left out,
as that API requires). max_tokens defaults to DEFAULT_MAX_TOKENS by reasoning off/on.

Failures: 429 and 5xx (and dropped connections) are retried with jittered exponential backoff (or
the Retry-After the provider sends) while the turn's deadline allows; 401/403 raise KeyRejected,
404 ModelUnknown
naming the seat and provider (the run fails); a provider that cannot be reached or answers 5xx on
every attempt raises Unreachable (the seat waits that tick; three such ticks in a row fail the run);
anything else unusable raises ProviderError (the seat waits that tick, cause no_reply).
"""
from __future__ import annotations

import asyncio
import json
import random
import ssl
from functools import lru_cache

import certifi
import httpx

from orchestrator.seats.actions import tool_specs
from orchestrator.seats.transport import AddressRefused, SeatTransport

DEFAULT_BASE_URL = {"router": "https://openrouter.ai/api/v1", "openai": "https://api.openai.com/v1",
                    "anthropic": "https://api.anthropic.com"}
OPENAI_STYLE = ("router", "openai", "ollama", "openai-compatible")
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = {"off": 1024, "on": 8192}  # output ceiling per call; reasoning needs room to think
THINKING_BUDGET = {"low": 1024, "medium": 2048, "high": 4096}  # anthropic budget_tokens per effort
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.25, 8.0
TOOL_RESULT = "played; its outcome is in your next observation"
TOOL_IGNORED = "ignored: over your actions per turn"


class SeatFailed(Exception):
    """A seat that can never play: the run fails at once; run.error names seat and provider."""
    code = "provider_error"

    def envelope(self) -> dict:
        return {"error": self.code, "message": str(self)}


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


class ProviderError(Exception):
    """No usable answer within the turn's budget; the seat waits that tick (no reply)."""


class Unreachable(ProviderError):
    """The provider could not be reached, or answered 5xx, on every attempt the turn allowed."""


class TurnTimeout(ProviderError):
    """The turn's time ran out while waiting for the provider; the seat waits (timeout)."""


class Reply:
    """One answer: tool calls (name, arguments), text, token usage, and the native message for memory."""
    __slots__ = ("calls", "text", "input_tokens", "output_tokens", "message", "malformed")

    def __init__(self, calls=(), text="", input_tokens=0, output_tokens=0, message=None, malformed=None):
        self.calls, self.text, self.message, self.malformed = list(calls), text or "", message, malformed
        self.input_tokens, self.output_tokens = int(input_tokens or 0), int(output_tokens or 0)


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


def reasoning_on(reasoning: str | None) -> bool:
    return reasoning in THINKING_BUDGET


class Chat:
    """A seat's provider: builds the request for its protocol, sends it with retries, reads the reply.

    The system prompt, tools and options never change during a run, so they are encoded to JSON once;
    each turn only encodes its observation, and kept turns are stored already encoded (`remember`)."""

    def __init__(self, provider: str, *, model: str, key: str, client: PooledClient, system: str,
                 base_url: str | None = None, format: str = "tools", reasoning: str | None = None,
                 temperature: float | None = None, max_tokens: int | None = None, seat: str = "seat",
                 tools: tuple[dict, ...] | None = None):
        self.provider, self.model, self.key, self.system = provider, model, key, system
        self.tools = tools if tools is not None else tool_specs()  # the world's actions unless a game says
        self.pool = client.pool
        self.retries = 0  # extra attempts after 429, 5xx or a dropped connection, over the run
        self.format, self.reasoning, self.temperature, self.seat = format, reasoning, temperature, seat
        self.max_tokens = int(max_tokens or DEFAULT_MAX_TOKENS["on" if reasoning_on(reasoning) else "off"])
        base = (base_url or DEFAULT_BASE_URL.get(provider) or "").rstrip("/")
        if not base:
            raise ValueError(f"{seat}: provider {provider} needs a base URL with its key")
        self.base_url = base

    def _prepare(self, path: str, headers: dict, options: dict) -> None:
        self.url = httpx.URL(self.base_url + path)
        self.headers = list({**headers, "Content-Type": "application/json"}.items())
        # options as the JSON object's tail: '"model": ..., ...}' follows the messages
        self.tail = json.dumps(options)[1:]

    async def send(self, memory, user_text: str, deadline: float) -> Reply:
        return self.read(await self._post(self.payload(memory, user_text), deadline))

    async def _post(self, payload: bytes, deadline: float):
        """POST with retries inside the deadline (loop time). Returns the parsed JSON, or None if not JSON."""
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TurnTimeout(f"no answer within the turn after {attempt} attempts")
            request = httpx.Request("POST", self.url, content=payload, headers=self.headers,
                                    extensions={"timeout": httpx.Timeout(remaining).as_dict()})
            try:
                r = await self.pool.handle_async_request(request)
                try:
                    await r.aread()
                finally:
                    await r.aclose()
            except httpx.ConnectTimeout as e:
                raise Unreachable("could not connect to the provider within the turn") from e
            except AddressRefused as e:  # no retry can change the rule: the seat never plays
                raise SeatFailed(f"{self.seat}: {e}") from e
            except httpx.TimeoutException as e:
                raise TurnTimeout("the provider did not answer within the turn") from e
            except httpx.TransportError as e:
                status, retry_after, why = None, None, f"connection failed ({type(e).__name__})"
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
                        return None
                if status != 429 and status < 500:
                    raise ProviderError(f"HTTP {status}: {r.text[:200]}")
                retry_after, why = _retry_after(r), f"HTTP {status}"
            wait = retry_after if retry_after is not None else \
                random.uniform(0.5, 1.0) * min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** attempt)
            attempt += 1
            if loop.time() + wait >= deadline:
                error = Unreachable if status is None or status >= 500 else ProviderError
                raise error(f"{why} after {attempt} attempts; no time left in the turn to retry")
            self.retries += 1
            await asyncio.sleep(wait)


def _retry_after(r: httpx.Response) -> float | None:
    try:
        return max(0.0, float(r.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


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
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.format == "tools":
            options["tools"] = [{"type": "function", "function": t} for t in self.tools]
            options["tool_choice"] = "auto"
        if provider == "router" and self.reasoning is not None:
            options["reasoning"] = {"effort": self.reasoning if reasoning_on(self.reasoning) else "none"}
        elif reasoning_on(self.reasoning):
            options["reasoning_effort"] = self.reasoning
        self._prepare("/chat/completions", headers, options)
        self.head = '{"messages":[' + json.dumps({"role": "system", "content": self.system})

    def payload(self, memory, user_text: str) -> bytes:
        user = '{"role":"user","content":' + json.dumps(user_text) + "}],"
        return (",".join([self.head, *memory, user]) + self.tail).encode()

    def read(self, data) -> Reply:
        try:
            msg = data["choices"][0]["message"]
            calls = [(c["function"]["name"], c["function"].get("arguments"), c.get("id"))
                     for c in msg.get("tool_calls") or []]
            text = msg.get("content") or ""
        except (TypeError, KeyError, IndexError, AttributeError):
            return Reply(malformed="the provider's answer is not a chat completion")
        usage = data.get("usage") or {}
        return Reply(calls, text if isinstance(text, str) else "", usage.get("prompt_tokens"),
                     usage.get("completion_tokens"), message=msg)

    def remember(self, user_text: str, reply: Reply, played: int) -> str:
        """The turn, encoded, for later requests: observation, the reply, and one result per call."""
        out = [{"role": "user", "content": user_text}]
        calls = []
        for k, (name, args, call_id) in enumerate(reply.calls):
            calls.append({"id": call_id or f"call_{k}", "type": "function",
                          "function": {"name": str(name), "arguments": args if isinstance(args, str) else "{}"}})
        assistant = {"role": "assistant", "content": reply.text or (None if calls else "(no reply)")}
        if calls:
            assistant["tool_calls"] = calls
        out.append(assistant)
        for k, c in enumerate(calls):
            out.append({"role": "tool", "tool_call_id": c["id"], "content": TOOL_RESULT if k < played else TOOL_IGNORED})
        return json.dumps(out)[1:-1]


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
        if reasoning_on(self.reasoning):
            budget = min(THINKING_BUDGET[self.reasoning], max(1024, self.max_tokens - 1024))
            options["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif self.temperature is not None:  # that API refuses a temperature with thinking on
            options["temperature"] = self.temperature
        self._prepare("/v1/messages", {"x-api-key": self.key, "anthropic-version": ANTHROPIC_VERSION}, options)

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
        try:
            content = data["content"]
            calls = [(b["name"], b.get("input"), b.get("id")) for b in content if b.get("type") == "tool_use"]
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        except (TypeError, KeyError, AttributeError):
            return Reply(malformed="the provider's answer is not a messages response")
        u = data.get("usage") or {}
        inp = sum(int(u.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        return Reply(calls, text, inp, u.get("output_tokens"), message=content)

    def remember(self, user_text: str, reply: Reply, played: int) -> tuple[str, str, str]:
        """The turn, encoded: its observation block, the assistant content, the tool results it awaits."""
        content = reply.message if reply.message else [{"type": "text", "text": reply.text or "(no reply)"}]
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
