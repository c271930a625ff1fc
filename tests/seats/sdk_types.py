"""Requests checked against the official SDKs' request types (TypedDicts), all the way down.

pydantic's TypeAdapter validates a TypedDict but lets unknown keys through and leaves the Iterable
fields (messages, tools) as lazy iterators it never walks, so a misspelt or invented field deep in a
message would pass. `problems` walks the value against the type itself: every key must be one the
type names, every required key present, every value of its declared type or literal.
"""
from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union

from typing_extensions import is_typeddict

_SEQUENCES = (list, tuple, collections.abc.Iterable, collections.abc.Sequence)


def problems(value, tp, path: str = "$", extra: frozenset = frozenset()) -> list[str]:
    """What in `value` the type `tp` does not allow (empty: it conforms). extra: top-level keys a
    provider adds beyond the SDK's type (OpenRouter's `reasoning`)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp is object:
        return []
    if origin is typing.Annotated:
        return problems(value, args[0], path)
    if origin in (Union, types.UnionType):
        tries = [problems(value, a, path) for a in args]
        # none fits: report the branch that got deepest into the value, the one it was meant to be
        return [] if any(not t for t in tries) else max(tries, key=lambda t: max(len(p.split(":")[0]) for p in t))
    if origin is Literal:
        return [] if value in args else [f"{path}: {value!r} is not one of {args}"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected an object for {tp.__name__}"]
        hints = typing.get_type_hints(tp)
        out = [f"{path}.{k}: {tp.__name__} has no such field" for k in value if k not in hints and k not in extra]
        out += [f"{path}.{k}: required by {tp.__name__}" for k in tp.__required_keys__ if k not in value]
        for k, v in value.items():
            if k in hints:
                out += problems(v, hints[k], f"{path}.{k}")
        return out
    if origin in _SEQUENCES or getattr(origin, "__name__", "") == "SequenceNotStr":
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            return [f"{path}: expected an array"]
        return [p for k, v in enumerate(value) for p in problems(v, args[0] if args else Any, f"{path}[{k}]")]
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        return [p for k, v in value.items() for p in problems(v, args[1] if args else Any, f"{path}.{k}")]
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(tp, type):
        ok = isinstance(value, tp)
    else:
        return []  # a type this walker does not know: trust it
    return [] if ok else [f"{path}: {value!r} is not {getattr(tp, '__name__', tp)}"]
