"""Strict body models and the one translation from pydantic's errors to the API's codes.

Models refuse wrong JSON types instead of coercing them (strict: an integer field refuses 300.0),
refuse numbers no store can hold and nesting past MAX_DEPTH, refuse unknown fields (extra
forbid), and keep no defaults in their JSON Schema: an omitted field is simply absent, so
`model_dump(exclude_unset=True)` returns the body exactly as given.
"""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from engine.text import HIDDEN, invalid_at
from orchestrator import finite
from orchestrator.errors import DomainError


def _schema_without_defaults(schema: dict, _cls: type) -> None:
    # A `default: null` next to `type: integer` would invite generators (and readers) to send null.
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class StrictModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_schema_without_defaults)


# Names are shown to people: no control characters (NUL included) and no bidirectional overrides or
# isolates, which can make a name read differently from what it is (HIDDEN holds them as literal
# characters, so the pattern means the same to pydantic's regex engine and to JSON Schema readers).
PLAIN_TEXT = "^[^" + HIDDEN + "]*$"
UNICODE_MESSAGE = ("should be valid Unicode text: it holds a lone UTF-16 surrogate (U+D800 to U+DFFF, such as "
                   "the JSON escape \\ud800 without its pair), which cannot be stored")
PLAIN_TEXT_MESSAGE = "should be plain text: no control characters (such as NUL) and no bidirectional overrides"


_DIGITS = re.compile(r"[0-9]{1,9}")  # ASCII only: str.isdigit() also takes '²', which int() refuses


def integer_param(value: Any, name: str, low: int, high: int, *, default: int | None = None,
                  code: str = "bad_request", hint: str | None = None) -> int | None:
    """An integer parameter as a query string or path sends it ('25') or as JSON and a tool argument do
    (25): low..high, else `code` with "name: hint" (by default: send an integer from low to high).
    None (absent) gives `default`."""
    if value is None:
        return default
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DomainError(code, f"{name}: {hint or f'send an integer from {low} to {high}'}")
    return value


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# JSON's words, not pydantic's ("List should have at least 1 item after validation, not 0")
_TYPES = {"int_type": "an integer", "int_from_float": "an integer", "int_parsing": "an integer",
          "float_type": "a number", "float_parsing": "a number", "string_type": "a string",
          "bool_type": "true or false", "bool_parsing": "true or false", "list_type": "an array",
          "dict_type": "a JSON object", "model_type": "a JSON object", "model_attributes_type": "a JSON object"}


def _message(err: dict, union: bool) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if err["type"] in ("model_type", "dict_type", "model_attributes_type"):
        return "should be a JSON object"
    if err["type"] == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == PLAIN_TEXT:
        return PLAIN_TEXT_MESSAGE
    if union and kind in ("int_type", "float_type"):
        return "should be a number"  # a failed int|float union reports its first member; say what it means
    if kind in _TYPES:
        return f"should be {_TYPES[kind]}"
    if kind == "too_short":
        return f"should hold at least {_plural(ctx.get('min_length'), 'item')}"
    if kind == "too_long":
        return f"should hold at most {_plural(ctx.get('max_length'), 'item')}"
    if kind == "string_too_short":
        return "should not be empty" if ctx.get("min_length") == 1 else \
            f"should be at least {_plural(ctx.get('min_length'), 'character')} long"
    if kind == "string_too_long":
        return f"should be at most {_plural(ctx.get('max_length'), 'character')} long"
    bounds = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
              "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}
    if kind in bounds:
        words, key = bounds[kind]
        return f"should be {words} {ctx.get(key)}"
    if kind == "literal_error":
        return f"should be one of {ctx.get('expected', '').replace(chr(39), '')}"
    return err["msg"].replace("Input should", "should").replace(" after validation", "").replace("a valid ", "")


def parse(adapter: TypeAdapter | type[BaseModel], raw: Any, *, codes: dict[str, str], default: str = "bad_request",
          hints: dict[str, str], top_level: bool = True, prefix: tuple = ()) -> Any:
    """Validate raw JSON; raise DomainError with the code of the field that failed.

    codes maps a top-level field to its error code (default for the rest). With top_level, a
    missing required field, an unknown field, or a body that is not an object is bad_request
    (docs/api.md). hints maps a field name (the last path element) to what to send.
    prefix names where raw sits in a larger body (("env",) for a run's env overrides).
    """
    unfit_at = finite.unfit(raw)
    if unfit_at is not None:  # before the model, which would take 1e400 as infinity where floats go
        where, what = unfit_at
        code = codes.get(where[0], default) if where and isinstance(where[0], str) else "bad_request"
        raise DomainError(code, f"{_path(prefix + where) or 'the body'}: {what}")
    bad = invalid_at(raw)
    if bad is not None:  # before the model: text no run, store or response can hold never goes further
        code = codes.get(bad[0], default) if bad else "bad_request"
        raise DomainError(code, f"{_path(prefix + bad) or 'the body'}: {UNICODE_MESSAGE}")
    try:
        if isinstance(adapter, TypeAdapter):
            return adapter.validate_python(raw)
        return adapter.model_validate(raw)
    except ValidationError as e:
        errors = e.errors()
    # Structural problems of the body itself outrank a bad value in one field.
    errors.sort(key=lambda x: 0 if len(x["loc"]) <= 1 and x["type"] in ("missing", "extra_forbidden",
                                                                       "model_type", "dict_type") else 1)
    err = errors[0]
    loc = prefix + tuple(p for p in err["loc"] if not _is_union_tag(p))
    path = _path(loc)
    if top_level and len(err["loc"]) == 0:
        raise DomainError("bad_request", "the body must be a JSON object")
    if top_level and len(err["loc"]) == 1 and err["type"] == "missing":
        raise DomainError("bad_request", f"{path} is required")
    if top_level and len(err["loc"]) == 1 and err["type"] == "extra_forbidden":
        raise DomainError("bad_request", f"unknown field '{path}'; allowed fields: {', '.join(codes)}")
    code = codes.get(err["loc"][0], default) if err["loc"] else default
    if err["type"] == "value_error":  # our own validators write complete messages, path included
        raise DomainError(code, str(err.get("ctx", {}).get("error", err["msg"])))
    names = [p for p in loc if isinstance(p, str)]
    if err["type"] == "extra_forbidden":
        text, hint = f"{path}: unknown field", hints.get(names[-2]) if len(names) > 1 else None
    else:
        union = any(_is_union_tag(p) for p in err["loc"])
        text, hint = f"{path}: {_message(err, union)}", hints.get(names[-1]) if names else None
    raise DomainError(code, f"{text}; {hint}" if hint else text)


def _is_union_tag(part: Any) -> bool:
    # pydantic names the union member that failed ('int', 'float', 'constrained-int'); not a field.
    return isinstance(part, str) and (part in ("int", "float", "str") or part.startswith(("constrained-", "function-")))
