"""The bundle's files and digests, the one place both its writer and its verifier take them from.

A bundle is a zip with `manifest.json` and, per match with model or agent seats, `turns/<match_id>.jsonl`:
one turn a line in tick then seat order, each with `prev`, the SHA-256 of the line before it (the
first's: of `studio-bundle-1:<match_id>`); the last line's hash is the match's `turns.last_sha256` in
the manifest. The manifest's own `digest` is the SHA-256 of itself without that field. Entries are
written in name order with a fixed timestamp, so a bundle's bytes depend on its content alone.
"""
from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np

from engine.events import COLUMNS
from engine.kernels.codes import INVALID, SAY

FORMAT = "studio-bundle-1"
MANIFEST = "manifest.json"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: any fixed one will do


def canonical(value) -> bytes:
    """The bytes every digest here is taken over: sorted keys, no spaces, UTF-8 (JSON numbers as
    Python writes them, so a seed past 2**53 keeps its digits)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def turns_path(match_id: str) -> str:
    return f"turns/{match_id}.jsonl"


def genesis(match_id: str) -> str:
    return sha256(f"{FORMAT}:{match_id}".encode())


def chained(match_id: str, turns: list[dict]) -> tuple[list[dict], str]:
    """The turns with their `prev` hashes set, and the last hash (the genesis when there are none)."""
    out, prev = [], genesis(match_id)
    for t in turns:
        line = {**t, "prev": prev}
        out.append(line)
        prev = sha256(canonical(line))
    return out, prev


def manifest_digest(manifest: dict) -> str:
    return sha256(canonical({k: v for k, v in manifest.items() if k != "digest"}))


def log_sha256(cols: dict, texts: list[tuple[int, str]]) -> str:
    """The SHA-256 of a match's event log: each column of the log (the engine's COLUMNS, in order) as
    its name and its values as 64-bit little-endian numbers, then the rows that carry a text (says,
    refusals) as [row, text] pairs."""
    h = hashlib.sha256()
    for name in COLUMNS:
        arr = np.asarray(cols[name])
        wide = arr.astype("<f8" if arr.dtype.kind == "f" else "<i8", copy=False)
        h.update(name.encode() + b"\0" + np.ascontiguousarray(wide).tobytes())
    h.update(b"text\0" + canonical([[int(r), t] for r, t in texts]))
    return h.hexdigest()


def archived_log_sha256(cols: dict) -> str:
    """log_sha256 of an archived log (its event columns, text included)."""
    text = cols["text"]
    rows = np.flatnonzero(np.not_equal(text, None))
    return log_sha256(cols, [(r, str(text[r])) for r in rows])


def played_log_sha256(cols: dict, messages: list[str]) -> str:
    """log_sha256 of a match just played (Match.columns() and its message table), as the archive
    stores it: a say or refusal row's text is its message."""
    rows = np.flatnonzero((cols["kind"] == SAY) | (cols["kind"] == INVALID))
    return log_sha256(cols, [(r, messages[b]) for r, b in zip(rows, cols["b"][rows])])


def write(manifest: dict, turns: dict[str, list[dict]]) -> bytes:
    """The zip: the manifest with its digest, and each match's turns chained (match id -> turns)."""
    files = {}
    for match in manifest["matches"]:
        rows = turns.get(match["match_id"])
        if rows is None:
            continue
        lines, last = chained(match["match_id"], rows)
        match["turns"] = {"path": turns_path(match["match_id"]), "count": len(lines), "last_sha256": last}
        files[turns_path(match["match_id"])] = b"".join(canonical(line) + b"\n" for line in lines)
    manifest["digest"] = manifest_digest(manifest)
    files[MANIFEST] = json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, files[name])
    return buf.getvalue()


class Unreadable(ValueError):
    """The file is no bundle this version reads (not a zip, no manifest, a line that is not JSON)."""


def read(data: bytes) -> tuple[dict, dict[str, list[dict]]]:
    """(manifest, match id -> its turn lines) of a bundle's bytes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            names = set(z.namelist())
            if MANIFEST not in names:
                raise Unreadable(f"no {MANIFEST} in the zip: not a result bundle")
            manifest = json.loads(z.read(MANIFEST))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise Unreadable(f"{MANIFEST} does not say format {FORMAT!r}: not a bundle this version reads")
            turns = {}
            for m in manifest.get("matches") or []:
                path = (m.get("turns") or {}).get("path") if isinstance(m, dict) else None
                if path is not None:
                    if path not in names:
                        raise Unreadable(f"{path}, named by match {m.get('match_id')}, is not in the zip")
                    turns[m["match_id"]] = [json.loads(line) for line in z.read(path).decode().splitlines() if line]
    except (zipfile.BadZipFile, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        if isinstance(e, Unreadable):
            raise
        raise Unreadable(f"not a readable result bundle: {e}") from None
    return manifest, turns
