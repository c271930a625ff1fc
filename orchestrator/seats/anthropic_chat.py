"""The Anthropic messages protocol (POST {base}/v1/messages, API version ANTHROPIC_VERSION with the key as a
Bearer token, as the official SDK sends it; tools with input_schema, tool_use blocks): the anthropic
provider's wire protocol."""
from __future__ import annotations

import json

from orchestrator.seats.chat import TOOL_IGNORED, TOOL_RESULT, Chat, answer
from orchestrator.seats.faults import Rejected
from orchestrator.seats.families import thinking_budget
from orchestrator.seats.reply import Reply, token_count

ANTHROPIC_VERSION = "2026-10-21"  # the version the current official SDK sends

# the fields of each answer block that the API takes back in an assistant turn (its *BlockParam)
_BLOCK_PARAMS = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input"),
                 "thinking": ("type", "thinking", "signature"), "redacted_thinking": ("type", "data")}


class AnthropicChat(Chat):
    """anthropic: the messages API with tool use."""

    @staticmethod
    def check_headers(key: str) -> dict:
        """How a key is sent on the GET that checks it when it is stored."""
        return {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}

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
        data = answer(data, "a messages response")
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
        read, written = token_count(u.get("cache_read_input_tokens")), token_count(u.get("cache_creation_input_tokens"))
        # the answer's blocks in the shape the API takes back, thinking and its signature included
        message = [{k: b[k] for k in _BLOCK_PARAMS[b["type"]] if k in b} for b in content
                   if b.get("type") in _BLOCK_PARAMS]
        return Reply(calls, text, token_count(u.get("input_tokens")) + read + written, u.get("output_tokens"),
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
