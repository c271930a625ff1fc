"""A model run's damaged events file and transcript on a serving server (issue 50, F9): the pages that
read them answer 410 `archive_damaged` naming the file, where they answered 500 `internal_error`, and
a transcript that cannot be read is refused, where it read as `{"turns": []}` and the Inspect export
said `success` with no messages. The run's seat rows, report and results stand."""
from __future__ import annotations

import asyncio
import random
import secrets

import httpx
import pytest

from analytics.archive.layout import SEATS_DIR, archive_dir, series_archived
from tests.mcp.conftest import call, connect
from tests.runs.conftest import start, wait_terminal
from tests.runs.test_model_seats import fake, model_account  # noqa: F401  (the provider double's fixture)
from tests.waiting import until

MODEL = "openai/gpt-4o-mini"


def _say(body: dict) -> dict:
    return {"calls": [("say", {"text": secrets.token_hex(40)})], "usage": (100, 20)}


def _overwrite(path) -> None:
    """Bytes of no format over the middle half of the file."""
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek(size // 4)
        f.write(random.Random(9).randbytes(size // 2))


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """A server of this module's own: the files it damages are in no archive another test reads."""
    s = start(tmp_path_factory.mktemp("damaged") / "data")
    yield s
    s.stop()


def test_a_damaged_log_and_transcript_are_refused_never_500_or_empty(own, fake):  # noqa: F811
    srv = own
    fake.defaults[MODEL] = _say
    c, _ = model_account(srv, fake, anthropic=False)
    with c, httpx.Client(base_url=srv.url, timeout=60) as anon:
        rid = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 12, "roster": [
            {"model": MODEL, "name": "one"}, {"model": MODEL, "name": "two"}]}).json()["run"]["run_id"]
        run = wait_terminal(c, rid, timeout=180)["run"]
        m, archive = run["match_id"], archive_dir(srv.data_dir)
        until(lambda: series_archived(srv.data_dir, SEATS_DIR, m) and (archive / "events" / f"{m}.parquet").exists(),
              60, what="the match compacted")
        assert len(c.get(f"/api/v1/runs/{rid}/transcript").json()["turns"]) == 24
        _overwrite(archive / "events" / f"{m}.parquet")
        _overwrite(archive / "transcripts" / f"{m}.arrow")
        events, transcript = f"events/{m}.parquet", f"transcripts/{m}.arrow"
        got = {"log": (anon.get(run["links"]["log"]), events),
               "frames": (anon.get(run["links"]["replay"], params={"format": "json"}), events),
               "replay": (anon.get(run["links"]["replay"]), events),
               "transcript": (c.get(f"/api/v1/runs/{rid}/transcript"), transcript),
               "inspect": (c.get(f"/api/v1/runs/{rid}/export", params={"format": "inspect"}), transcript),
               "fork": (c.post("/api/v1/runs/estimate", json={"fork": {"run_id": rid, "tick": 3}}), events)}
        csv = c.get(f"/api/v1/runs/{rid}/export", params={"format": "csv"})
        report = anon.get(run["links"]["match"])
        token = c.headers["Authorization"].split()[1]
    for page, (r, file) in got.items():
        assert r.status_code == 410, (page, r.status_code, r.text[:300])
        assert r.json()["error"] == "archive_damaged" and file in r.json()["message"], (page, r.json())
    assert csv.status_code == 200 and report.status_code == 200 and report.json()["results"]["agents"]
    is_error, body = asyncio.run(_transcript_tool(srv.url, token, rid))
    assert is_error and body == got["transcript"][0].json()  # MCP answers what REST answers


async def _transcript_tool(url: str, token: str, rid: str):
    async with connect(url, token) as client:
        return await call(client, "get_transcript", {"id": rid})
