"""Text as a run keeps it and as public pages show it.

- `valid`: text the event log and the archive can hold: a Python str is any sequence of code points,
  but Arrow, Parquet and JSON responses hold UTF-8, which has no lone UTF-16 surrogate (U+D800 to
  U+DFFF, what a JSON escape such as "\\ud800" decodes to). What a seat says must be valid, or its
  action is refused; `invalid_at` finds such text in a request body or in a model's action.
- `writable`: what a model said, kept for its owner (the transcript): lone surrogates become U+FFFD.
- `shown`: what a public page shows of a said text: control characters (a said line break would forge
  a line of the play-by-play) and bidirectional overrides and isolates (which make text read other
  than it is) removed.
"""
from __future__ import annotations

import re

# Control characters and bidirectional overrides and isolates: never shown, never in a name. Literal
# characters in the class, so the same text reads as a Python and a JSON Schema regex class.
HIDDEN = "\x00-\x1f\x7f" + "\u202a-\u202e" + "\u2066-\u2069"
_HIDDEN = re.compile(f"[{HIDDEN}]+")


def valid(text: str) -> bool:
    """Whether text is valid Unicode: encodable as UTF-8, so no lone surrogate."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def invalid_at(value, loc: tuple = ()) -> tuple | None:
    """Where in a JSON value (str, list, dict) a text is not valid, as a path of keys and indexes (a
    key that is not valid names the object holding it); None when all of it is."""
    if isinstance(value, str):
        return None if valid(value) else loc
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and not valid(k):
                return loc
            found = invalid_at(v, loc + (k,))
            if found is not None:
                return found
    elif isinstance(value, list):
        for k, v in enumerate(value):
            found = invalid_at(v, loc + (k,))
            if found is not None:
                return found
    return None


def writable(text: str) -> str:
    """text with each lone surrogate replaced by U+FFFD (a surrogate pair is joined, as UTF-16 reads it)."""
    if valid(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def shown(text: str) -> str:
    """text as a public page shows it: control characters and bidirectional controls removed."""
    return _HIDDEN.sub("", text)
