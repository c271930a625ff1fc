"""Damaged archive files (issue 50, F4 and F9): a file that is there and cannot be decoded is named as
damaged by every read that needs it, never read as absent; a file that is not there stays absent; the
start-up scan leaves a damaged file out and says which; `check` lists exactly the damaged files."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from analytics.archive import format as archive
from analytics.archive import materialize
from analytics.archive.damage import Damaged
from analytics.archive.layout import SEATS_DIR
from analytics.archive.store import Archive
from tests.analytics.test_archive_store import played


def _turns(n: int) -> bytes:
    rows = [{"tick": t, "seat": 0, "reply": f"turn {t} " + "x" * (t % 7), "actions": "[]", "refused": [],
             "latency_ms": 1.0, "input_tokens": 10, "output_tokens": 2, "error": None, "refusal": None,
             "truncated": False, "submitted_by": None} for t in range(n)]
    return archive.to_ipc(archive.transcript_table(rows))


def _overwrite(path: Path) -> None:
    """Bytes of no format over the middle half of the file."""
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek(size // 4)
        f.write(random.Random(50).randbytes(size // 2))


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.fixture
def store(tmp_path) -> Archive:
    store = Archive(str(tmp_path / "archive"))
    for k, m in enumerate(("dmg", "ok")):
        o = played(m, seed=k, batch_id=None)
        store.land(m, o.events, o.seats, _turns(40))
    return store


@pytest.mark.parametrize("harm", [_overwrite, _cut])
def test_a_damaged_transcript_is_named_never_read_as_empty(store, harm):
    harm(Path(store.path("transcripts", "dmg.arrow")))
    with pytest.raises(Damaged) as e:
        store.read_transcript("dmg")
    assert e.value.path == "transcripts/dmg.arrow" and str(Path(store.root)) not in str(e.value)
    assert len(store.read_transcript("ok", limit=500)[0]) == 40  # the other match's reads as before
    assert store.read_transcript("never-played") == ([], False)  # absent is no damage


@pytest.mark.parametrize("harm", [_overwrite, _cut])
def test_a_damaged_landed_log_is_named_not_taken_for_a_missing_one(store, harm):
    harm(Path(store.path("events", "dmg.arrow")))
    with pytest.raises(Damaged) as e:
        store.read_events("dmg")
    assert e.value.path == "events/dmg.arrow"
    assert store.read_events("ok")[1]["match_id"] == "ok"


def test_a_damaged_seat_file_fails_its_reads_and_not_the_start_up_scan(store):
    for m in ("dmg", "ok"):
        store.compact(m, [m])
    _overwrite(Path(store.path(SEATS_DIR, "dmg.parquet")))
    with pytest.raises(Damaged):
        store.seats({"dmg": None})
    with pytest.raises(Damaged):
        store.index(SEATS_DIR, settled=True)  # a caller that gives no list hears of it
    damaged: list = []
    assert materialize.engine_note(store, damaged) is None  # what the dispatcher runs at start
    assert [e.path for e in damaged] == ["seats/dmg.parquet"]
    assert store.seats({"ok": None}).num_rows == 6


def test_check_lists_exactly_the_damaged_files(store):
    store.compact("ok", ["ok"])
    assert store.check() == {"checked": 6, "damaged": []}  # each match: events, seat rows, transcript
    _cut(Path(store.path("events", "ok.parquet")))
    _overwrite(Path(store.path("transcripts", "dmg.arrow")))
    got = store.check()
    assert [d["file"] for d in got["damaged"]] == ["events/ok.parquet", "transcripts/dmg.arrow"]
    assert all(d["error"] for d in got["damaged"])


def test_studio_archive_check_names_the_damaged_files_and_exits_1(tmp_path, capsys):
    from api.cli import main

    data = tmp_path / "data"
    store = Archive.of(data)
    o = played("solo", seed=3, batch_id=None)
    store.land("solo", o.events, o.seats, _turns(30))
    store.compact("solo", ["solo"])
    assert main(["archive", "check", "--data-dir", str(data)]) == 0
    assert json.loads(capsys.readouterr().out) == {"checked": 3, "damaged": []}
    _overwrite(data / "archive" / "seats" / "solo.parquet")
    assert main(["archive", "check", "--data-dir", str(data)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [d["file"] for d in out["damaged"]] == ["seats/solo.parquet"] and out["damaged"][0]["error"]
    assert main(["archive", "materialize", "--all", "--data-dir", str(data)]) == 1  # it says so too
    assert list(json.loads(capsys.readouterr().out)["damaged"]) == ["seats/solo.parquet"]
