"""A seat's provider call: one chat call per seat turn, sent with retries inside the turn's deadline over
the seat's pooled client; the protocol modules (openai_chat, anthropic_chat) build the request and read
the answer, with the reasoning and sampling fields each model family takes (families.py).
max_tokens defaults to DEFAULT_MAX_TOKENS by reasoning off/on.

A fault is retried only while the turn's deadline allows, and a redirect is never followed because
the request carries the key. How each answer ends (docs/SEATS.md):
"""
# 429, 5xx, 529 and dropped connections are retried with jittered exponential backoff (or the
# Retry-After the provider sends), then raise Unreachable (with the status, if it answered); a 5xx
# other than 502, 503, 504 and 529 answered with the same body SAME_ANSWERS times in a row, with no
# Retry-After, is not retried again that turn; requests in flight per key are capped and adapt to
# 429s (limits.py). 401/403 raise KeyRejected and 404 ModelUnknown (the run fails at once); any other
# 4xx, a 200 whose body is not the protocol's answer, or one carrying an error object raise Rejected
# with the provider's own message, and a redirect Rejected naming where it pointed. No answer by the
# deadline raises TurnTimeout, unless the provider answered this turn with a retried fault (then
# Unreachable, naming it: `Chat.ran_out`).
from __future__ import annotations

import asyncio
import json
import random

import httpx

from engine.text import writable
from orchestrator.seats.actions import tool_specs
from orchestrator.seats.client import USER_AGENT, PooledClient
from orchestrator.seats.faults import KeyRejected, ModelUnknown, ProviderError, Rejected, SeatFailed, TurnTimeout, \
    Unreachable
from orchestrator.seats.families import reasoning_on
from orchestrator.seats.keyed import Keyed, moved
from orchestrator.seats.limits import THROTTLED, KeyLimit, key_limit
from orchestrator.seats.reply import Reply
from orchestrator.seats.transport import AddressRefused

DEFAULT_MAX_TOKENS = {"off": 1024, "on": 8192}  # output ceiling per call; reasoning needs room to think
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.25, 8.0
TOOL_RESULT = "played; its outcome is in your next observation"
TOOL_IGNORED = "ignored: over your actions per turn"
TIMED_OUT = "the provider did not answer within the turn"  # a turn's cause when no answer came in time
EXCERPT = 200  # characters of a provider's own error message kept in the cause
# a 5xx answered with the same body this many times in a row is the server's fixed answer to this
# request (a validation error, a missing server flag), not an outage: the turn stops retrying it.
# Statuses that mean "try later" (and any answer with a Retry-After) are retried while the turn lasts.
SAME_ANSWERS = 3
TRY_LATER = (502, 503, 504, 529)


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


class Chat:
    """A seat's provider: builds the request for its protocol, sends it with retries, reads the reply.

    The system prompt, tools and options never change during a run, so they are encoded to JSON once;
    each turn only encodes its observation, and kept turns are stored already encoded (`remember`)."""

    def __init__(self, provider: str, *, model: str, key: str, client: PooledClient, system: str,
                 base_url: str | None = None, format: str = "tools", reasoning: str | None = None,
                 temperature: float | None = None, max_tokens: int | None = None, seat: str = "seat",
                 tools: tuple[dict, ...] | None = None, max_concurrent: int | None = None):
        self.provider, self.model, self.key, self.system = provider, model, key, system
        self.max_concurrent = max_concurrent  # the key's cap on requests in flight (None: the default)
        self.tools = tools if tools is not None else tool_specs()  # the world's actions unless a game says
        self.pool = client.pool
        self.retries = 0  # extra attempts after 429, 5xx or a dropped connection, over the run
        self.answered_with: tuple[str, int, int | None] | None = None  # this turn's last retried fault, attempts, status
        self.format, self.reasoning, self.temperature, self.seat = format, reasoning, temperature, seat
        self.max_tokens = int(max_tokens or DEFAULT_MAX_TOKENS["on" if reasoning_on(reasoning) else "off"])
        base = (base_url or "").rstrip("/")  # make_chat gives the provider's own when the key names none
        if not base:
            raise ValueError(f"{seat}: provider {provider} needs a base URL with its key")
        self.base_url = base

    def _prepare(self, path: str, headers: dict, options: dict) -> None:
        self.keyed = Keyed(self.base_url, {**headers, "Accept": "application/json", "Content-Type": "application/json",
                                           "User-Agent": USER_AGENT})
        self.url = self.keyed.url(path)
        # options as the JSON object's tail: '"model": ..., ...}' follows the messages
        self.tail = json.dumps(options)[1:]

    async def send(self, memory, user_text: str, deadline: float) -> Reply:
        return self.read(await self._post(self.payload(memory, user_text), deadline))

    def read(self, data) -> Reply:
        raise NotImplementedError

    async def _post(self, payload: bytes, deadline: float):
        """POST with retries inside the deadline (loop time). Returns the parsed JSON body of a 2xx.
        Each attempt holds one of the key's slots while it is in flight."""
        loop = asyncio.get_running_loop()
        limit = key_limit(self.provider, self.base_url, self.key, self.max_concurrent)
        attempt, self.answered_with = 0, None
        last, same = None, 0  # the last error answer (status, body) and how many times in a row it came
        while True:
            if deadline - loop.time() <= 0:
                raise self.ran_out()
            sent_at = await limit.acquire(deadline)
            request = self.keyed.request("POST", self.url, content=payload,
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
                if 300 <= status < 400:
                    raise Rejected(f"HTTP {status}, {moved(r, self.url)}")
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
            return TurnTimeout(TIMED_OUT)
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


def answer(data, what: str) -> dict:
    """The body as an answer object, or Rejected: not an object, or an error object instead."""
    said = error_message(data)
    if said is not None:
        raise Rejected(f"the provider answered with an error: {said}")
    if not isinstance(data, dict):
        raise Rejected(f"the provider's answer is not {what}")
    return data
