"""A damaged archive file is a fault of its match alone (issue 50, F4 and F9): a server plays a scripted
run and model-seat runs (a provider double), 4 KB in the middle of a seat file, an events file and a
transcript are overwritten, and `studio serve` is started on the data dir. It starts, naming the file
it could not read; every read of a damaged match answers 410 `archive_damaged` naming the file, REST
and MCP alike, never a 500 or an empty success; the other runs read as before; `studio archive check`
lists exactly the damaged files."""
from __future__ import annotations

import asyncio
import json
import random
import secrets
import signal
from pathlib import Path

import httpx
import pytest

from analytics.archive.layout import SEATS_DIR, archive_dir, series_archived
from api.cli import main
from orchestrator import accounts, auth
from orchestrator.seats import keys
from tests.api.util import bearer, free_port, wait_until_up
from tests.faults.test_service import _kill_group, _serve
from tests.mcp.conftest import call, connect
from tests.runs.conftest import start
from tests.seats.fake_provider import FakeProvider
from tests.waiting import until

CONFIG = "[plans.lab]\nrequests_per_minute = 1000000\n[limits]\nrefused_per_address_per_minute = 1000000\n"
MODEL = "openai/gpt-4o-mini"
SCRIPTED = [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]
MODELS = [{"model": MODEL, "name": "one"}, {"model": MODEL, "name": "two"}, {"model": "local/random"}]
DAMAGE = 4096

pytestmark = pytest.mark.usefixtures("ray_pool")  # the runs play in this process


def _say(body: dict) -> dict:
    """Every turn says something new: a transcript that LZ4 cannot shrink to a few hundred bytes."""
    return {"calls": [("say", {"text": secrets.token_hex(60)})], "usage": (100, 20)}


def _damage(path: Path) -> tuple[int, int]:
    """Overwrite 4 KB in the middle of the file with bytes of no format; (where it starts, the size)."""
    size = path.stat().st_size
    assert size >= 2 * DAMAGE, f"{path.name} is {size} bytes: too small for 4 KB in its middle"
    start = size // 2 - DAMAGE // 2
    with path.open("r+b") as f:
        f.seek(start)
        f.write(random.Random(50).randbytes(DAMAGE))
    return start, size


def _footer_start(path: Path) -> int:
    """Where a Parquet file's footer (its schema and key-value metadata) starts."""
    tail = path.read_bytes()[-8:]
    assert tail[4:] == b"PAR1"
    return path.stat().st_size - 8 - int.from_bytes(tail[:4], "little")


def _launch(c: httpx.Client, roster: list[dict], ticks: int) -> str:
    r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "roster": roster})
    assert r.status_code == 201, r.text
    return r.json()["run"]["run_id"]


def _archived(c: httpx.Client, data: Path, rid: str, transcript: bool) -> dict | None:
    """The run once it ended and its match's files are compacted for good (and its transcript there)."""
    run = c.get(f"/api/v1/runs/{rid}").json()["run"]
    if run["status"] in ("failed", "cancelled"):
        raise AssertionError(f"run {rid} ended {run['status']}: {run['error']}")
    if run["status"] != "finished" or not series_archived(data, SEATS_DIR, run["match_id"]):
        return None
    if transcript and not (archive_dir(data) / "transcripts" / f"{run['match_id']}.arrow").exists():
        return None
    return run


def _refused(r: httpx.Response, file: str) -> None:
    assert r.status_code == 410, (r.request.url, r.status_code, r.text[:300])
    body = r.json()
    assert body["error"] == "archive_damaged" and file in body["message"], body


def _reads(c: httpx.Client, anon: httpx.Client, run: dict) -> dict[str, httpx.Response]:
    """Every read of a run and its match: the public pages, the owner's transcript and exports, a fork."""
    rid, links = run["run_id"], run["links"]
    fork = {"fork": {"run_id": rid, "tick": 5}}
    return {"log": anon.get(links["log"]), "replay": anon.get(links["replay"]),
            "frames": anon.get(links["replay"], params={"format": "json"}), "report": anon.get(links["match"]),
            "transcript": c.get(f"/api/v1/runs/{rid}/transcript", params={"limit": 500}),
            **{fmt: c.get(f"/api/v1/runs/{rid}/export", params={"format": fmt}) for fmt in ("csv", "parquet", "inspect")},
            "estimate": c.post("/api/v1/runs/estimate", json=fork), "fork": c.post("/api/v1/runs", json=fork)}


async def _mcp(url: str, token: str, runs: dict) -> dict:
    out = {}
    async with connect(url, token) as client:
        out["transcript"] = await call(client, "get_transcript", {"id": runs["transcript"]["run_id"]})
        out["inspect"] = await call(client, "export_run", {"id": runs["transcript"]["run_id"]})
        out["csv"] = await call(client, "export_run", {"id": runs["seats"]["run_id"], "format": "csv"})
        out["estimate"] = await call(client, "estimate_run", {"fork": {"run_id": runs["events"]["run_id"], "tick": 5}})
        out["clean"] = await call(client, "get_transcript", {"id": runs["clean model"]["run_id"]})
    return out


def test_a_damaged_archive_file_fails_its_match_alone_and_the_service_restarts(tmp_path, capsys):
    data = tmp_path / "data"
    log = tmp_path / "serve.log"
    with FakeProvider() as fake:
        fake.defaults[MODEL] = _say
        # the runs play on a server in this process, on the session's Ray: what is tested is the start
        # of `studio serve` over the archive they leave
        first = start(data, CONFIG)
        try:
            core = first.core
            email = "damage@example.com"
            accounts.create_account(core, email, plan="lab", verified=True)
            keys.set_key(core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1")
            token, _ = auth.mint(core, email, scopes=auth.SCOPES)
            with httpx.Client(base_url=first.url, headers=bearer(token), timeout=60) as c:
                ids = {"seats": (_launch(c, SCRIPTED, 60), False), "events": (_launch(c, MODELS, 30), True),
                       "transcript": (_launch(c, MODELS, 30), True), "clean scripted": (_launch(c, SCRIPTED, 60), False),
                       "clean model": (_launch(c, MODELS, 30), True)}
                runs = {k: until(lambda rid=rid, t=t: _archived(c, data, rid, t), 300, every=0.5,
                                 what=f"the {k} run archived") for k, (rid, t) in ids.items()}
        finally:
            first.stop()
        archive = archive_dir(data)
        seat_file = archive / "seats" / runs["seats"]["match_id"] / f"{runs['seats']['match_id']}.parquet"
        files = {"seats": seat_file, "events": archive / "events" / f"{runs['events']['match_id']}.parquet",
                 "transcript": archive / "transcripts" / f"{runs['transcript']['match_id']}.arrow"}
        damaged_at, _ = _damage(seat_file)
        assert _footer_start(seat_file) < damaged_at + DAMAGE  # the footer the start-up scan reads is hit (F4)
        for kind in ("events", "transcript"):
            _damage(files[kind])
        named = {k: str(p.relative_to(archive)) for k, p in files.items()}

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        again = _serve(data, port, log)
        try:
            wait_until_up(url, again, timeout=300, log=log)  # it starts (F4)
            assert f"archive file {named['seats']} cannot be read" in log.read_text()
            with httpx.Client(base_url=url, headers=bearer(token), timeout=60) as c, \
                    httpx.Client(base_url=url, timeout=60) as anon:
                got = {k: _reads(c, anon, run) for k, run in runs.items()}
                tools = asyncio.run(_mcp(url, token, runs))
            capsys.readouterr()
            # the operator's command, in this process (tests/api/test_cli.py runs the CLI as its own)
            checked = main(["archive", "check", "--data-dir", str(data)]), capsys.readouterr().out
        finally:
            _kill_group(again, signal.SIGKILL)  # its stop is not what is tested: its group at once, promptly
            again.wait(timeout=30)

    # the scripted match whose seat file is damaged: its log is derived from that file's footer, and its
    # exports are that file's rows
    for page in ("log", "replay", "frames", "csv", "parquet", "estimate", "fork"):
        _refused(got["seats"][page], named["seats"])
    assert got["seats"]["report"].status_code == 200 and got["seats"]["report"].json()["results"]["agents"]
    # a model match whose events file is damaged: its pages, its Inspect export (the observations come from
    # the log) and a fork (rebuilt from it); its transcript and seat rows read as before
    for page in ("log", "replay", "frames", "inspect", "estimate", "fork"):
        _refused(got["events"][page], named["events"])
    assert len(got["events"]["transcript"].json()["turns"]) == 60 and got["events"]["csv"].status_code == 200
    # a damaged transcript is never an empty one (F9: it read as {"turns": []} and an Inspect log with no
    # messages); a fork keeping its model seats needs their memory from it
    for page in ("transcript", "inspect", "estimate", "fork"):
        _refused(got["transcript"][page], named["transcript"])
    assert got["transcript"]["log"].status_code == 200 and "# field: " in got["transcript"]["log"].text
    # the other runs read as before the restart
    for kind in ("clean scripted", "clean model"):
        for page, r in got[kind].items():
            assert r.status_code == (201 if page == "fork" else 200), (kind, page, r.status_code, r.text[:300])
    assert len(got["clean model"]["transcript"].json()["turns"]) == 60
    assert got["clean scripted"]["log"].text.startswith("# ") and got["clean model"]["frames"].json()["frames"]
    # MCP answers what REST answers
    for name, kind in (("transcript", "transcript"), ("inspect", "transcript"), ("csv", "seats"), ("estimate", "events")):
        is_error, body = tools[name]
        assert is_error and body["error"] == "archive_damaged" and named[kind] in body["message"], (name, body)
    assert tools["clean"][0] is False and len(tools["clean"][1]["turns"]) == 60
    # the operator's list: exactly the damaged files
    assert checked[0] == 1, checked[1]
    listed = json.loads(checked[1])
    assert sorted(d["file"] for d in listed["damaged"]) == sorted(named.values())
    assert listed["checked"] > len(named)
