"""A client generated from the served document (openapi-python-client, offline) parses every
operation's success answer into a generated model class: never Any, None or a bare dict. Answers that
are not JSON (the play-by-play text, the live event stream, the CSV export) come back as text."""
from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import attrs
import httpx

PACKAGE = "studio_generated_client"


def _generate(doc: dict, out: Path) -> str:
    spec = out / "openapi.json"
    spec.write_text(json.dumps(doc))
    config = out / "generate.yml"  # as docs/api.md says: a result bundle's zip read as a binary file
    config.write_text("content_type_overrides:\n  application/zip: application/octet-stream\n")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff, from the venv
    r = subprocess.run([str(bin_dir / "openapi-python-client"), "generate", "--path", str(spec), "--config", str(config), "--output-path",
                        str(out / PACKAGE), "--meta", "none"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def _operation(source: str) -> tuple[str, str]:
    """(method, path template) of a generated endpoint module, from its _get_kwargs."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            if "method" in keys and "url" in keys:
                method = node.values[keys.index("method")].value
                url = node.values[keys.index("url")]
                url = url.func.value.value if isinstance(url, ast.Call) else url.value  # "...".format(...)
                return method, url
    raise AssertionError("no method and url in a generated module")


def _success_media(doc: dict, method: str, path: str) -> str:
    """The media type a generated client reads for the operation's success: its first."""
    answers = doc["paths"][path][method]["responses"]
    ok = next(v for k, v in answers.items() if k.startswith("2"))
    return next(iter(ok["content"]))


def test_a_generated_client_types_every_operations_success(live, tmp_path):
    doc = httpx.get(live.url + "/api/v1/openapi.json").json()
    output = _generate(doc, tmp_path)
    assert "warning" not in output.lower(), output  # nothing of the document was skipped
    sys.path.insert(0, str(tmp_path))
    try:
        models = importlib.import_module(f"{PACKAGE}.models")
        error = models.ErrorEnvelope
        found, untyped = set(), []
        for module_path in sorted((tmp_path / PACKAGE / "api").glob("*/*.py")):
            if module_path.name == "__init__.py":
                continue
            method, path = _operation(module_path.read_text())
            found.add((method, path))
            module = importlib.import_module(f"{PACKAGE}.api.{module_path.parent.name}.{module_path.stem}")
            parsed = typing.get_args(typing.get_type_hints(module._parse_response)["return"])
            success = [t for t in parsed if t not in (error, type(None))]
            media = _success_media(doc, method, path)
            binary, text = media == "application/zip", not media.endswith("json")
            file = importlib.import_module(f"{PACKAGE}.types").File
            typed = success and all((t is file) if binary else (t is str) if text else (
                isinstance(t, type) and attrs.has(t) and t.__module__.startswith(f"{PACKAGE}.models")) for t in success)
            if not typed:
                untyped.append(f"{method.upper()} {path}: {success}")
        assert not untyped, "\n".join(untyped)
        assert found == {(m, p) for p, ops in doc["paths"].items() for m in ops}
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


# Open on purpose: the scenario JSON Schema's own keywords, and a world action's fields (per action).
OPEN = {"#/components/schemas/ScenarioSchema/properties/properties",
        "#/components/schemas/ScenarioSchema/properties/examples/items",
        "#/components/schemas/Turn/properties/actions/items/anyOf/0",
        # an agent seat's observation state (world or game facts) and the actions it submits (docs/AGENTS.md)
        "#/components/schemas/Observation/properties/state",
        "#/components/schemas/SeatActions/properties/actions/items",
        # a graded decision's chosen and best actions (docs/RUBRIC.md), world actions like a turn's
        "#/components/schemas/DecisionTurn/properties/chosen/items",
        "#/components/schemas/DecisionTurn/properties/best/items"}


def _open_objects(node, where: str):
    """JSON pointers of object schemas that name no properties and allow any: a shape left undescribed."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" not in node and node.get("additionalProperties", True) \
                in (True, {}):
            yield where
        for key, value in node.items():
            yield from _open_objects(value, f"{where}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _open_objects(value, f"{where}/{i}")


def test_the_document_describes_every_answer_it_declares(live):
    doc = httpx.get(live.url + "/api/v1/openapi.json").json()
    assert set(_open_objects(doc["components"], "#/components")) | set(_open_objects(doc["paths"], "#/paths")) \
        == OPEN
