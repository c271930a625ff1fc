"""One bundle on every surface: REST, MCP export_run (format "bundle"), Studio.bundle, the console's
run and series pages (a link, the same file), and the public match report's link (the owner's path);
`studio verify` prints verified or a divergence and exits 0, 1 or 3."""
from __future__ import annotations

import base64
import io
import json
import zipfile

import anyio
import httpx
import pytest

from api.cli import main
from api.python import Studio
from orchestrator import console_auth
from orchestrator.bundles import layout, verify
from tests.bundles.util import fetched, launched
from tests.runs.conftest import ALL_SCOPES, local_body


@pytest.fixture(scope="module")
def played(srv):
    from orchestrator import accounts, auth

    email = f"bundles-{id(srv)}-surfaces@example.com"
    accounts.create_account(srv.core, email, plan="lab", verified=True)
    token, _ = auth.mint(srv.core, email, scopes=ALL_SCOPES)
    with srv.client(token) as c:
        run = launched(c, local_body(season_ticks=20))["run"]
        series = launched(c, local_body(season_ticks=20, trials=2))["batch"]
        data = fetched(c, run["run_id"])
        view = c.get(f"/api/v1/runs/{run['run_id']}").json()["run"]
    return email, token, run["run_id"], series["batch_id"], view["match_id"], data


def test_mcp_python_console_and_report_serve_the_same_file(srv, played):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    email, token, run_id, batch_id, match_id, data = played

    async def calls():
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
                    Client(streamable_http_client(f"{srv.url}/mcp/studio", http_client=http)) as client):
            return await client.call_tool("export_run", {"id": run_id, "format": "bundle"})
    got = anyio.run(calls).structured_content
    assert (got["format"], got["filename"], got["media_type"]) == ("bundle", f"{run_id}.studio-bundle.zip",
                                                                   "application/zip")
    assert base64.b64decode(got["base64"]) == data

    with Studio(srv.data_dir, token, read_only=True) as studio:
        assert studio.bundle(run_id) == data
        series = studio.bundle(batch_id)
    assert len(layout.read(series)[0]["matches"]) == 2

    with httpx.Client(base_url=srv.url, follow_redirects=True, timeout=60) as browser:
        browser.get(console_auth.login_link(srv.core, email, srv.url))
        page = browser.get(f"/console/runs/{run_id}").text
        assert f'href="/console/runs/{run_id}/bundle"' in page
        assert browser.get(f"/console/runs/{run_id}/bundle").content == data
        page = browser.get(f"/console/batches/{batch_id}").text
        assert f'href="/console/batches/{batch_id}/bundle"' in page
        assert browser.get(f"/console/batches/{batch_id}/bundle").content == series

    report = httpx.get(f"{srv.url}/api/matches/{match_id}/report").json()
    assert report["bundle"] == f"/api/v1/matches/{match_id}/bundle"
    html = httpx.get(f"{srv.url}/api/matches/{match_id}/report", params={"format": "html"}).text
    assert f'href="/api/v1/matches/{match_id}/bundle"' in html
    with srv.client(token) as c:
        r = c.get(report["bundle"])
        assert r.status_code == 200 and r.content == data
    anyone = httpx.get(f"{srv.url}{report['bundle']}")
    assert anyone.status_code == 401


def test_studio_verify_prints_and_exits(played, tmp_path, capsys):
    *_, data = played
    path = tmp_path / "b.zip"
    path.write_bytes(data)
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "verified: 1 matches"

    with zipfile.ZipFile(io.BytesIO(data)) as z:
        manifest = json.loads(z.read("manifest.json"))
    manifest["matches"][0]["results"]["agents"][0]["fitness_index"] += 1
    manifest["digest"] = layout.manifest_digest(manifest)  # a careful forger: the digest made again
    path.write_bytes(layout.write({k: v for k, v in manifest.items() if k != "digest"}, {}))
    assert main(["verify", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] is False and "fitness_index" in out["divergence"]["what"]

    manifest["matches"][0]["engine"] = manifest["engine"] = "0" * 20
    manifest["matches"][0]["results"]["agents"][0]["fitness_index"] -= 1
    path.write_bytes(layout.write({k: v for k, v in manifest.items() if k != "digest"}, {}))
    assert main(["verify", str(path)]) == 3
    out = capsys.readouterr().out
    assert "0" * 20 in out and verify.engine_digest() in out and "neither verified nor refuted" in out

    path.write_bytes(b"not a zip")
    assert main(["verify", str(path), "--json"]) == 1
    assert "not a readable result bundle" in json.loads(capsys.readouterr().out)["divergence"]["what"]
