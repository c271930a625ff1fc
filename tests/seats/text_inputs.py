"""What an agent or a model may send, as Hypothesis strategies (issue 38): arbitrary Unicode with lone
surrogates, NUL, control and bidirectional characters, and 64 KiB strings, in every field of every
action, in a json-format reply and in tool calls. Shared by the in-process property test
(tests/seats/test_text_properties.py) and the served one (tests/agents/test_text.py)."""
from __future__ import annotations

import json
import re

from hypothesis import strategies as st

from engine.actions import ACTION_SPECS
from engine.kernels.codes import DIRECTIONS, RESOURCES
from engine.text import HIDDEN

APT = 2  # actions per turn in these runs
# an agent seat, and a model seat in each reply format
SEATS = [{"provider": "agent", "model": "prop-agent", "name": "agent"},
         {"provider": "router", "model": "prop/json", "name": "json", "format": "json"},
         {"provider": "router", "model": "prop/tools", "name": "tools", "format": "tools"}]
SHOWN_BAD = re.compile(f"[{HIDDEN}]")  # what a public page never shows

SPECIAL = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00", "\x00", "\x1b", "\n", "\r", "\x7f", "\u202e",
           "\u202a", "\u2066", "\u2069", "é", "\U0001F600", '"', "\\", "{", "}"]
short = st.text(st.one_of(st.characters(exclude_categories=()), st.sampled_from(SPECIAL)), max_size=12)
big = st.builds(lambda a, b: a + "z" * (64 * 1024) + b, short, short)  # 64 KiB and a little more
text = st.one_of(*[short] * 39, big)  # a 64 KiB string is one draw in 40: a few in every run
value = st.one_of(text, st.integers(-3, 12), st.sampled_from(DIRECTIONS + RESOURCES), st.none(), st.booleans())
FIELDS = sorted({arg for _, args in ACTION_SPECS.values() for arg, _, _ in args} | {"move", "column", "action"})
action = st.builds(lambda name, fields, extra: {"action": name, **fields, **extra},
                   st.one_of(st.sampled_from(list(ACTION_SPECS)), text),
                   st.dictionaries(st.sampled_from(FIELDS), value, max_size=4),
                   st.dictionaries(text, value, max_size=1))
actions = st.lists(action, max_size=APT + 1)  # one more than allowed, at times
said = st.builds(lambda words: {"action": "say", "text": words}, text)


def _joined(frame: tuple[str, str], obj, ascii_only: bool) -> str:
    return frame[0] + json.dumps(obj, ensure_ascii=ascii_only) + frame[1]


# a json-format reply: the actions object (its JSON escapes, or the characters themselves), maybe fenced or
# in prose, its first action a say (so what became of it can be checked); or any text at all
json_reply = st.one_of(
    st.builds(lambda first, rest, frame, ascii_only: _joined(frame, {"actions": [first, *rest]}, ascii_only),
              said, actions, st.sampled_from([("", ""), ("```json\n", "\n```"), ("Here: ", " ok")]), st.booleans()),
    text)
tool_call = st.tuples(st.one_of(st.sampled_from(list(ACTION_SPECS)), text),
                      st.one_of(st.dictionaries(st.sampled_from(FIELDS), value, max_size=4).map(json.dumps), text))
tools_reply = st.tuples(st.lists(tool_call, max_size=APT + 1), st.one_of(st.just(""), text))  # (calls, text)
# one tick: the agent's actions, the json seat's reply text, the tools seat's (calls, text)
turn = st.tuples(actions, json_reply, tools_reply)


def completion(content: str | None, calls: list[tuple[str, str]] = ()) -> str:
    """A chat completion's body as a provider sends it: JSON with its strings escaped (a lone surrogate
    travels as the escape \\ud800, which JSON readers take)."""
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"call_{k}", "type": "function", "function": {"name": n, "arguments": a}}
                                 for k, (n, a) in enumerate(calls)]
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def bodies(turns: list) -> tuple[list[str], list[str]]:
    """The json seat's and the tools seat's provider answers, a tick each."""
    return ([completion(reply) for _, reply, _ in turns],
            [completion(content or None, calls) for _, _, (calls, content) in turns])


def holds_unicode(value) -> bool:
    """The oracle: whether a JSON value's text is all valid Unicode (UTF-8 can encode it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def encodes(page) -> None:
    """A page is bytes a response can carry, as Starlette encodes a JSON or text body."""
    (page if isinstance(page, str) else json.dumps(page, ensure_ascii=False)).encode("utf-8")


def no_hidden(log: str) -> bool:
    """A play-by-play shows no control or bidirectional character within its lines."""
    return not any(SHOWN_BAD.search(line) for line in log.split("\n"))
