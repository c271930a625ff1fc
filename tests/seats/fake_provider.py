"""A real HTTP server on 127.0.0.1 that speaks the providers' wire protocols, scripted per test.

- OpenAI chat completions: POST /v1/chat/completions (tools -> tool_calls), GET /v1/key, GET /v1/models;
- Anthropic messages: POST /v1/messages (tools with input_schema -> tool_use blocks).
Requests are checked the way the real APIs check them, the strictest of them where they differ
(roles, tool call ids answered, an assistant content that is a string even beside tool calls, as
llama-cpp-python's server wants it; Anthropic headers and API version 2026-10-21: no temperature, a
thinking budget of at least 1024 below max_tokens, thinking blocks handed back with their signature)
and refused with 400 otherwise, so a
client that builds a bad conversation fails its test. Every request is recorded. Answers are built
with the official SDKs' own response models (openai ChatCompletion, anthropic Message), so their
shape is the providers' own.

A step says how to answer one request: {"calls": [(name, args)], "text": str, "status": int,
"delay_ms": int, "body": raw text, "usage": (input, output), "headers": {...}, "refusal": text,
"finish": finish_reason or stop_reason, "thinking": [(text, signature)], "redacted": [data],
"cached": cache-read input tokens (counted within usage's input), "cache_write": likewise,
"cost": USD (a router's usage.cost)}, or a callable taking the request body and returning such a
dict. Steps queue per model; when a model's queue is empty its default (or the server's) answers.

Run alone (benchmarks): python -m tests.seats.fake_provider --delay-ms 100  -> prints the port.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import threading
import time

import uvicorn
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ANTHROPIC_VERSION = "2026-10-21"
DEFAULT_STEP = {"calls": [("wait", {})]}


class _Server(uvicorn.Server):
    """uvicorn that stops as soon as it is told: its loop waits on an event rather than checking a
    flag every 0.1 s, and its shutdown closes the connections without uvicorn's grace period. A
    provider double is stopped once its test is over, with no request left to finish."""

    stopping: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self.stopping = asyncio.Event()
        await self.on_tick(0)  # the Date header, as uvicorn sets it at its first tick
        await self.stopping.wait()

    async def shutdown(self, sockets=None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()

    def stop(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.call_soon_threadsafe(self.stopping.set)


class FakeProvider:
    def __init__(self, default: dict | None = None):
        self.default = default or DEFAULT_STEP
        self.defaults: dict[str, dict] = {}
        self.queues: dict[str, list] = {}
        self.requests: list[dict] = []
        self.rejected_keys: set[str] = set()
        self.key_info: dict | None = None
        # a slow key-info endpoint: GET /v1/key answers only once this event is set (key_waiting: how
        # many such requests are held now)
        self.key_gate: threading.Event | None = None
        self.key_waiting = 0
        self.models: list[dict] = []
        # a paged model list: takes the request's query string, returns the answer's body (a router's
        # `links.next` included) or a whole Response; None answers {"data": models}
        self.model_page = None
        # a server without tool calls: "refuse" answers a chat completion carrying `tools` with
        # `tools_refused_status` and the server's reason (as Ollama does for a model whose template has
        # none, vLLM without its tool-call flags, llama.cpp without --jinja); "ignore" drops them and
        # the model answers text (llama-cpp-python with a chat format that has no tool calls)
        self.tools: str = "calls"
        self.tools_refused_status = 400
        # a provider's rate limit: requests served at once; one above it is answered 429 (with a
        # retry-after of `capacity_retry_after` seconds when set); peak and throttled say what it saw
        self.capacity: int | None = None
        self.capacity_retry_after: float | None = None
        self.in_flight = self.peak = self.throttled = 0
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self.openai, methods=["POST"]),
            Route("/v1/messages", self.anthropic, methods=["POST"]),
            Route("/v1/key", self.key, methods=["GET"]),
            Route("/v1/models", self.model_list, methods=["GET"]),
        ])
        self._server = self._thread = None
        self.port, self.scheme = None, "http"

    # -- scripting -------------------------------------------------------------------------
    def script(self, model: str, *steps) -> None:
        self.queues.setdefault(model, []).extend(steps)

    def bodies(self, model: str | None = None, path: str | None = None) -> list[dict]:
        return [r["body"] for r in self.requests
                if (model is None or r["body"].get("model") == model) and (path is None or r["path"] == path)]

    def _step(self, body: dict) -> dict:
        model = body.get("model")
        queue = self.queues.get(model)
        step = queue.pop(0) if queue else self.defaults.get(model, self.default)
        return step(body) if callable(step) else step

    async def _common(self, request: Request, key: str | None, check):
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return None, JSONResponse({"error": {"message": "body is not JSON"}}, 400)
        self.requests.append({"path": request.url.path, "headers": dict(request.headers), "body": body,
                              "at": time.monotonic()})
        if key is None or key in self.rejected_keys:
            return None, JSONResponse({"error": {"type": "authentication_error", "message": "invalid key"}}, 401)
        problem = check(body, request)
        if problem:
            return None, JSONResponse({"error": {"type": "invalid_request_error", "message": problem}}, 400)
        if self.capacity is not None and self.in_flight >= self.capacity:
            self.throttled += 1
            self.requests[-1]["throttled"] = True
            wait = {"retry-after": str(self.capacity_retry_after)} if self.capacity_retry_after is not None else None
            return None, JSONResponse({"error": {"type": "rate_limit_error", "message": "too many requests at once"}},
                                      429, headers=wait)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            step = self._step(body)
            if step.get("delay_ms"):
                await asyncio.sleep(step["delay_ms"] / 1000)
        finally:
            self.in_flight -= 1
        status = step.get("status", 200)
        if status != 200 or "body" in step:
            return None, Response(step.get("body", json.dumps({"error": {"message": f"status {status}"}})),
                                  status, headers=step.get("headers"), media_type="application/json")
        return step, None

    # -- OpenAI chat completions -----------------------------------------------------------
    async def openai(self, request: Request):
        auth = request.headers.get("authorization", "")
        key = auth[7:] if auth.startswith("Bearer ") else None
        step, early = await self._common(request, key, check_openai)
        if early:
            return early
        if self.tools != "calls" and self.requests[-1]["body"].get("tools"):
            if self.tools == "refuse":
                return JSONResponse({"error": {"type": "invalid_request_error", "message":
                                               f"{self.requests[-1]['body'].get('model')} does not support tools"}},
                                    self.tools_refused_status)
            step = {**step, "calls": [], "text": step.get("text") or "I will ping now."}
        return JSONResponse(openai_completion(step))

    # -- Anthropic messages ----------------------------------------------------------------
    async def anthropic(self, request: Request):
        auth = request.headers.get("authorization", "")
        key = auth[7:] if auth.startswith("Bearer ") else request.headers.get("x-api-key")
        step, early = await self._common(request, key, check_anthropic)
        if early:
            return early
        return JSONResponse(anthropic_message(step))

    async def key(self, request: Request):
        if self.key_gate is not None:
            self.key_waiting += 1
            try:
                await asyncio.to_thread(self.key_gate.wait, 60)
            finally:
                self.key_waiting -= 1
        if request.headers.get("authorization", "")[7:] in self.rejected_keys or self.key_info is None:
            return JSONResponse({"error": {"message": "no"}}, 401)
        return JSONResponse({"data": self.key_info})

    async def model_list(self, request: Request):
        """The model list both APIs serve, behind the key as theirs is (Bearer, or Anthropic's x-api-key)."""
        auth = request.headers.get("authorization", "")
        key = auth[7:] if auth.startswith("Bearer ") else request.headers.get("x-api-key")
        self.requests.append({"path": request.url.path, "headers": dict(request.headers), "body": {},
                              "at": time.monotonic()})
        if key in self.rejected_keys:
            return JSONResponse({"error": {"type": "authentication_error", "message": "invalid key"}}, 401)
        page = self.model_page(request.url.query) if self.model_page else {"data": self.models}
        return page if isinstance(page, Response) else JSONResponse(page)

    # -- serving ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def start(self, *, certfile: str | None = None, keyfile: str | None = None,
              keep_alive_s: float = 30) -> "FakeProvider":
        # proto must be IPPROTO_TCP: asyncio only sets TCP_NODELAY on sockets that say so, and without
        # it every answer (headers, then body) stalls 40 ms on delayed ACKs
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="error", lifespan="off", access_log=False,
                                backlog=2048, timeout_keep_alive=keep_alive_s,
                                ssl_certfile=certfile, ssl_keyfile=keyfile)
        self.scheme = "https" if certfile else "http"
        self._server = _Server(config)
        self._thread = threading.Thread(target=self._serve, args=(sock,), daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not (self._server.started and self._server.stopping):
            if time.monotonic() > deadline:
                raise RuntimeError("fake provider did not start")
            time.sleep(0.01)
        return self

    def _serve(self, sock: socket.socket) -> None:
        async def serve():
            self._loop = asyncio.get_running_loop()
            await self._server.serve(sockets=[sock])
        asyncio.run(serve())  # cancels what is still in flight (a request held by a hanging step)

    def stop(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._server.stop(self._loop)
            self._thread.join(timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def openai_completion(step: dict) -> dict:
    """A chat completion for the step, validated by the openai SDK's ChatCompletion model."""
    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)}}
             for k, (n, a) in enumerate(step.get("calls", []))]
    message = {"role": "assistant", "content": step.get("text"), "refusal": step.get("refusal")}
    if calls:
        message["tool_calls"] = calls
    inp, out = step.get("usage", (100, 20))
    usage = {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out}
    if "cached" in step:
        usage["prompt_tokens_details"] = {"cached_tokens": step["cached"]}
    if "cost" in step:
        usage["cost"] = step["cost"]  # a router's own price of the call
    finish = step.get("finish") or ("tool_calls" if calls else "stop")
    return ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()), "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage}).model_dump(mode="json", exclude_unset=True)


def anthropic_message(step: dict) -> dict:
    """A messages response for the step, validated by the anthropic SDK's Message model."""
    content = [{"type": "thinking", "thinking": t, "signature": sig} for t, sig in step.get("thinking", [])]
    content += [{"type": "redacted_thinking", "data": d} for d in step.get("redacted", [])]
    content += [{"type": "text", "text": step["text"]}] if step.get("text") else []
    content += [{"type": "tool_use", "id": f"toolu_{k}", "name": n, "input": json.loads(a) if isinstance(a, str) else a}
                for k, (n, a) in enumerate(step.get("calls", []))]
    inp, out = step.get("usage", (100, 20))
    read, written = step.get("cached", 0), step.get("cache_write", 0)
    stop = step.get("finish") or ("refusal" if "refusal" in step else "tool_use" if step.get("calls") else "end_turn")
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": inp - read - written, "output_tokens": out,
                      "cache_read_input_tokens": read, "cache_creation_input_tokens": written}}
    if "refusal" in step:
        body["stop_details"] = {"type": "refusal", "category": None, "explanation": step["refusal"]}
    return Message.model_validate(body).model_dump(mode="json", exclude_unset=True)


def check_openai(body: dict, request: Request) -> str | None:
    msgs = body.get("messages")
    if not isinstance(body.get("model"), str) or not isinstance(msgs, list) or not msgs:
        return "model and messages are required"
    open_ids: list[str] = []
    for k, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            return f"messages[{k}]: bad role {role!r}"
        if role == "tool":
            if m.get("tool_call_id") not in open_ids:
                return f"messages[{k}]: tool message answers no open tool call"
            open_ids.remove(m["tool_call_id"])
            continue
        if open_ids:
            return f"messages[{k}]: tool calls {open_ids} were not answered"
        if role == "assistant":
            open_ids = [c["id"] for c in m.get("tool_calls") or []]
            if len(set(open_ids)) != len(open_ids):
                return f"messages[{k}]: tool call ids must be distinct within a message"  # mistral_common
            if not isinstance(m.get("content"), str):
                # what self-hosted servers take (docs/SEATS.md): llama-cpp-python's request type refuses
                # a null content and its chatml-function-calling template fails on an absent one
                return f"messages[{k}]: assistant content must be a string, even beside tool calls (got " \
                       f"{'no content' if 'content' not in m else repr(m['content'])})"
        elif not isinstance(m.get("content"), str if role in ("system", "tool") else (str, list)):
            return f"messages[{k}]: {role} content must be a string"
    if msgs[-1].get("role") != "user":
        return "the last message must be the user's"
    for t in body.get("tools") or []:
        if t.get("type") != "function" or "parameters" not in t.get("function", {}):
            return "tools must be functions with parameters"
    return None


def check_anthropic(body: dict, request: Request) -> str | None:
    if not request.headers.get("anthropic-version"):
        return "anthropic-version header is required"
    if request.headers["anthropic-version"] == ANTHROPIC_VERSION:
        for gone in ("temperature", "top_p", "top_k"):
            if gone in body:
                return f"{gone}: this parameter is not supported in API version {ANTHROPIC_VERSION}"
    if not isinstance(body.get("max_tokens"), int) or not isinstance(body.get("messages"), list):
        return "max_tokens and messages are required"
    if "thinking" in body and "temperature" in body:
        return "temperature may not be set with thinking"
    if "thinking" in body and body["thinking"].get("type") == "enabled":
        budget = body["thinking"].get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.budget_tokens: must be at least 1024"
        if budget >= body["max_tokens"]:
            return "max_tokens must be greater than thinking.budget_tokens"
    pending: list[str] = []
    for k, m in enumerate(body["messages"]):
        if m.get("role") != ("user" if k % 2 == 0 else "assistant"):
            return f"messages[{k}]: roles must alternate, starting with user"
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        if m["role"] == "user":
            results = [b.get("tool_use_id") for b in content if b.get("type") == "tool_result"]
            lead = [b.get("tool_use_id") for b in content[: len(pending)] if b.get("type") == "tool_result"]
            if sorted(results) != sorted(pending) or len(lead) != len(pending):
                return f"messages[{k}]: tool_result blocks must answer {pending} first, got {results}"
        else:
            if not content:
                return f"messages[{k}]: empty assistant content"
            for b in content:
                if b.get("type") == "thinking" and not b.get("signature"):
                    return f"messages[{k}]: a thinking block must be sent back with its signature"
                if b.get("type") == "redacted_thinking" and not b.get("data"):
                    return f"messages[{k}]: a redacted_thinking block must be sent back with its data"
            pending = [b["id"] for b in content if b.get("type") == "tool_use"]
    for t in body.get("tools") or []:
        if "input_schema" not in t:
            return "tools need input_schema"
    return None


def lean_app(step: dict):
    """A bare ASGI app answering every chat completion with one fixed reply after the step's delay:
    reads the whole request, validates nothing. For benchmarks, where the provider's own CPU would
    otherwise add to the latency being simulated."""
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
             for k, (n, a) in enumerate(step["calls"])]
    body = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls},
                                    "finish_reason": "tool_calls"}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}).encode()
    start = {"type": "http.response.start", "status": 200,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]}
    delay = step.get("delay_ms", 0) / 1000

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        if delay:
            await asyncio.sleep(delay)
        await send(start)
        await send({"type": "http.response.body", "body": body})
    return app


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--lean", action="store_true", help="answer with lean_app instead of the checking server")
    p.add_argument("--cpus", default="", help="comma-separated cores to pin the server to")
    args = p.parse_args()
    if args.cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})
    fake = FakeProvider({"calls": [("gather", {}), ("move", {"direction": "north"})], "delay_ms": args.delay_ms})
    fake.requests = _Discard()  # a benchmark sends many thousands; keep none
    if args.lean:
        fake.app = lean_app(fake.default)
    fake.start()
    print(fake.port, flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin
    finally:
        fake.stop()


class _Discard(list):
    def append(self, item) -> None:
        pass


if __name__ == "__main__":
    main()
