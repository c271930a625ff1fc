"""Checking real answers against the served OpenAPI document (3.1: its schemas are JSON Schema 2020-12)."""
from __future__ import annotations

import json

import httpx
from jsonschema import Draft202012Validator


def validator(doc: dict, schema: dict) -> Draft202012Validator:
    """A validator for one schema of the document: its $refs (#/components/...) resolve against the
    document's components, carried beside it in the same root."""
    return Draft202012Validator({**schema, "components": doc["components"]})


def problems(doc: dict, schema: dict, value) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in validator(doc, schema).iter_errors(value)]


class Checker:
    """Drives a server and checks every answer against the document's declaration for its operation,
    status and media type; remembers which operations it saw answer."""

    def __init__(self, doc: dict, client: httpx.Client):
        self.doc, self.client = doc, client
        self.seen: set[tuple[str, str]] = set()
        self.errors: list[str] = []

    def call(self, method: str, template: str, *, expect: int | None = None, **kw) -> httpx.Response:
        path = template.format(**kw.pop("path", {}))
        r = self.client.request(method.upper(), path, **kw)
        where = f"{method.upper()} {path} -> {r.status_code}"
        if expect is not None and r.status_code != expect:
            self.errors.append(f"{where}: expected {expect}: {r.text[:300]}")
            return r
        op = self.doc["paths"][template][method]
        declared = op["responses"].get(str(r.status_code)) or op["responses"].get(f"{str(r.status_code)[0]}XX")
        if declared is None:
            self.errors.append(f"{where}: status not documented")
            return r
        media = r.headers.get("content-type", "").split(";")[0]
        content = declared.get("content", {}).get(media)
        if content is None:
            self.errors.append(f"{where}: {media} not documented (documented: {list(declared.get('content', {}))})")
            return r
        body = r.json() if media == "application/json" else r.text
        self.errors += [f"{where}: {p}" for p in problems(self.doc, content["schema"], body)]
        if media == "text/event-stream":
            self._events(where, content, body)
        self.seen.add((method, template))
        return r

    def _events(self, where: str, content: dict, body: str) -> None:
        """Each server-sent event against the media type's itemSchema, its data against contentSchema."""
        item = content.get("itemSchema")
        if item is None:
            self.errors.append(f"{where}: no itemSchema for the events")
            return
        events = [dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
                  for block in body.strip().split("\n\n") if not block.startswith(":")]
        if not events:
            self.errors.append(f"{where}: no events")
        for event in events:
            self.errors += [f"{where} event: {p}" for p in problems(self.doc, item, event)]
            data = item["properties"]["data"]
            if data.get("contentMediaType") == "application/json":
                self.errors += [f"{where} event data: {p}"
                                for p in problems(self.doc, data["contentSchema"], json.loads(event["data"]))]

    def operations(self) -> set[tuple[str, str]]:
        return {(m, p) for p, ops in self.doc["paths"].items() for m in ops}
