"""The OpenAI chat completions protocol (POST {base}/chat/completions, Bearer key, tools/tool_calls): every
provider whose registry row names openai_chat. The row's model-family rules decide the reasoning and
sampling fields (families: openrouter, gpt, or open for self-hosted servers)."""
from __future__ import annotations

import json

from orchestrator.provider_kinds import spec
from orchestrator.seats.chat import TOOL_IGNORED, TOOL_RESULT, Chat, answer
from orchestrator.seats.faults import Rejected
from orchestrator.seats.families import openai_effort, openai_takes_temperature, reasoning_on
from orchestrator.seats.reply import Reply


class OpenAIChat(Chat):
    """OpenAI chat completions, on the base URL make_chat resolved from the provider's row."""

    @staticmethod
    def check_headers(key: str) -> dict:
        """How a key is sent on the GET that checks it when it is stored; a keyless local server gets none."""
        return {"Authorization": f"Bearer {key}"} if key else {}

    def __init__(self, provider: str, **kw):
        super().__init__(provider, **kw)
        row = spec(provider)
        families = row.families
        self.states_cost = row.pricing == "stated"
        headers = {**self.check_headers(self.key), **dict(row.headers)}
        options = {"model": self.model}
        # openai's own API renamed the ceiling for reasoning models; the others keep max_tokens
        options["max_completion_tokens" if families == "gpt" else "max_tokens"] = self.max_tokens
        if self.temperature is not None and (families != "gpt"
                                             or openai_takes_temperature(self.model, self.reasoning)):
            options["temperature"] = self.temperature
        if self.format == "tools":
            options["tools"] = [{"type": "function", "function": t} for t in self.tools]
            options["tool_choice"] = "auto"
        if families == "openrouter":  # an unset reasoning sends nothing: the model's own default
            if self.reasoning is not None:
                options["reasoning"] = {"effort": self.reasoning if reasoning_on(self.reasoning) else "none"}
        elif families == "gpt":
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
        data = answer(data, "a chat completion")
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
                     cost_usd=usage.get("cost") if self.states_cost else None)

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
