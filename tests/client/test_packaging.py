"""The client distribution (client/) stands alone: it imports only httpx, pydantic, pandas and the
standard library, its metadata requires nothing else, its version is the API's, and the service's own
Python surface uses it rather than a second copy of the same REST calls."""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import studio_client
from studio_client import operations, tools as client_tools
from studio_client.operations import OPERATIONS, fork_body

from api import app as service_app
from api.mcp import fork_tool
from api.mcp.tools import BY_NAME
from api.python import Studio

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client"
ALLOWED = {"httpx", "pydantic", "pandas", "studio_client"}


def _imports(path: Path) -> set[str]:
    heads = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            heads |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            heads.add(node.module.split(".")[0])
    return heads


def test_the_client_imports_only_its_three_dependencies():
    sources = sorted((CLIENT / "studio_client").rglob("*.py"))
    assert len(sources) >= 5
    outside = {str(p.relative_to(ROOT)): sorted(_imports(p) - ALLOWED - set(sys.stdlib_module_names))
               for p in sources}
    assert {p: heads for p, heads in outside.items() if heads} == {}


def test_its_metadata_requires_httpx_pydantic_and_pandas_only():
    requires = {re.match(r"[A-Za-z0-9_.-]+", r)[0].lower() for r in metadata.requires("scenario-studio-client")}
    assert requires == {"httpx", "pydantic", "pandas"}
    assert metadata.version("scenario-studio-client") == studio_client.API_VERSION == studio_client.__version__


def test_its_version_is_the_api_the_service_serves_and_pins():
    assert studio_client.API_VERSION == service_app.API_VERSION
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"scenario-studio-client=={studio_client.API_VERSION}" in deps


def test_the_clients_wire_constants_are_the_services():
    from orchestrator import statuses
    from orchestrator.runs.series import read as series

    assert (operations.ACTIVE, operations.TERMINAL) == (statuses.ACTIVE, statuses.TERMINAL)
    assert (operations.MAX_WAIT_MS, operations.BATCH_PREFIX) == (series.MAX_WAIT_MS, series.BATCH_PREFIX)


def test_every_tool_is_a_client_operation_on_the_route_its_description_names():
    assert list(OPERATIONS) == list(BY_NAME)
    checked = 0
    for name, spec in BY_NAME.items():
        for method, path in re.findall(r"REST: (GET|POST|PUT|DELETE) (/api/v1/\S*)", spec.description):
            named = re.sub(r":(\w+)", "{}", path.split("?")[0].rstrip("."))
            assert (method, named) == (OPERATIONS[name].method, re.sub(r"{\w+}", "{}", OPERATIONS[name].path)), name
            checked += 1
    assert checked >= 25


def test_the_service_python_surface_is_the_clients():
    remote = Studio.connect("http://127.0.0.1:9", token="dsk_x")  # nothing is sent until a call
    assert type(remote) is studio_client.Studio
    remote.close()
    assert issubclass(Studio, client_tools.Tools)
    for shared in ("wait", "wait_series", "fork", "__getattr__"):
        assert getattr(Studio, shared) is getattr(client_tools.Tools, shared), shared
    assert "httpx" not in _imports(ROOT / "api" / "python.py")  # no REST or MCP calls of its own
    assert fork_tool.fork_body is fork_body
    assert fork_body({"run_id": "run_a", "tick": 5, "seats": {"0": {"model": "local/random"}}, "trials": 2}) == {
        "fork": {"run_id": "run_a", "tick": 5, "seats": {"0": {"model": "local/random"}}}, "trials": 2}
