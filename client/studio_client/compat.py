"""Does a server's OpenAPI document still describe what this client uses? Its info.version is the
one the client was written for, and every operation, path parameter, read field, run status and
long-poll bound the client relies on is there. `drift` lists each difference in words."""
from __future__ import annotations

import re

from studio_client.models import READ
from studio_client.operations import ACTIVE, MAX_WAIT_MS, OPERATIONS, SERIES_EXPORT, TERMINAL
from studio_client.version import API_VERSION

_PARAM = re.compile(r"{\w+}")


class Drift(RuntimeError):
    """The server's API is not the one this client was written for."""


def _shape(path: str) -> str:
    return _PARAM.sub("{}", path)


def drift(doc: dict) -> list[str]:
    found = []
    version = doc.get("info", {}).get("version")
    if version != API_VERSION:
        found.append(f"the server's API is version {version}, this client was written for {API_VERSION}")
    paths = {_shape(p): ops for p, ops in doc.get("paths", {}).items()}
    used = [(tool, op.method, op.path) for tool, op in OPERATIONS.items()] + [("export_run", "GET", SERIES_EXPORT)]
    for tool, method, path in used:
        if method.lower() not in paths.get(_shape(path), {}):
            found.append(f"{tool}: the server has no {method} {path}")
    schemas = doc.get("components", {}).get("schemas", {})
    for model in READ:
        props = schemas.get(model.__name__, {}).get("properties")
        if props is None:
            found.append(f"the server's document has no schema {model.__name__}")
            continue
        found += [f"{model.__name__}.{field}: the server no longer sends it" for field in model.model_fields
                  if field not in props]
    statuses = set(schemas.get("Run", {}).get("properties", {}).get("status", {}).get("enum", ()))
    if statuses != set(ACTIVE + TERMINAL):
        found.append(f"a run's statuses are {sorted(statuses)}, this client knows {sorted(ACTIVE + TERMINAL)}")
    batch = paths.get(_shape(OPERATIONS["get_batch"].path), {}).get("get", {})
    wait = next((p["schema"] for p in batch.get("parameters", ()) if p.get("name") == "wait_ms"), {})
    if wait.get("maximum") != MAX_WAIT_MS:
        found.append(f"get_batch's wait_ms goes up to {wait.get('maximum')}, this client asks up to {MAX_WAIT_MS}")
    return found


def require(doc: dict) -> None:
    problems = drift(doc)
    if problems:
        raise Drift("this client does not match the server: " + "; ".join(problems)
                    + " (install the client of the server's version: pip install ./client from its checkout)")
