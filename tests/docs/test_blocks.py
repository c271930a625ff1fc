"""Every fenced block in README.md and docs/*.md tagged python, bash or sh runs as written.

Blocks run against a real server (uvicorn, dispatcher, Ray), from a directory where `./studio-data` is
its data dir, with STUDIO_URL, STUDIO_TOKEN and STUDIO_DATA_DIR set as a reader who followed the README
would have them. The data dir already holds what a reader's soon does: a world run and an arena game
(Connect Four), so a snippet that only works on a data dir of one game fails here. The python blocks of one file share one namespace
in order (a later block may use what an earlier one made), as a reader pasting them into one
notebook would; top-level `await` is allowed, as in a notebook. Blocks tagged anything else (text,
json, toml, or no tag) are shown, not run.
"""
from __future__ import annotations

import ast
import asyncio
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orchestrator import auth
from orchestrator.runs import service
from tests.runs.conftest import account, local_body, start, wait_terminal

ROOT = Path(__file__).resolve().parents[2]
RUN = ("python", "bash", "sh")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<tag>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


def blocks(path: Path) -> list[tuple[int, str, str]]:
    """(line, tag, code) of every fenced block in the file."""
    text = path.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m["tag"].strip().split(" ")[0].lower(), textwrap.dedent(m["body"]))
            for m in FENCE.finditer(text)]


DOCS = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if any(
    tag in RUN for _, tag, _ in blocks(p))]


def test_fences_are_read_as_the_renderer_reads_them(tmp_path):
    path = tmp_path / "sample.md"
    path.write_text("a\n```python\nx = 1\n```\ntext ```json inline``` text\n```\nplain\n```\n"
                    "- item\n  ```bash\n  echo indented\n  ```\n")
    assert blocks(path) == [(2, "python", "x = 1\n"), (6, "", "plain\n"), (10, "bash", "echo indented\n")]


@pytest.fixture(scope="module")
def reader(tmp_path_factory, ray_pool):
    """A running service and the environment of someone who followed the README's first steps."""
    home = tmp_path_factory.mktemp("reader")
    server = start(home / "studio-data")
    token = account(server.core)
    core = server.app.state.core
    game = service.arena_launch(core, auth.authenticate(core, token), {
        "scenario_id": "arena:connect-four", "roster": [{"model": "local/solver"}, {"model": "local/random"}]})
    with server.client(token) as c:
        world = c.post("/api/v1/runs", json=local_body(season_ticks=20)).json()["run"]
        for run_id in (game["run"]["run_id"], world["run_id"]):
            assert wait_terminal(c, run_id, timeout=180)["run"]["status"] == "finished"
    env = dict(os.environ, STUDIO_URL=server.url, STUDIO_TOKEN=token,
               STUDIO_DATA_DIR=str(home / "studio-data"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    yield home, env
    server.stop()


def _run_python(code: str, namespace: dict, where: str) -> None:
    compiled = compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, namespace)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_code_blocks_run_as_written(doc: Path, reader, monkeypatch):
    home, env = reader
    monkeypatch.chdir(home)
    for key in ("STUDIO_URL", "STUDIO_TOKEN", "STUDIO_DATA_DIR"):
        monkeypatch.setenv(key, env[key])
    namespace: dict = {"__name__": "__main__"}
    ran = 0
    for line, tag, code in blocks(doc):
        where = f"{doc.relative_to(ROOT)}:{line}"
        if tag == "python":
            _run_python(code, namespace, where)
        elif tag in ("bash", "sh"):
            shell = ["bash", "-euo", "pipefail", "-c"] if tag == "bash" else ["sh", "-eu", "-c"]
            done = subprocess.run([*shell, code], cwd=home, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{where} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        else:
            continue
        ran += 1
    assert ran > 0
