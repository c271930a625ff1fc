"""Studio over REST: each tool is one request to a running server's /api/v1, through its own checks
(scopes, plan, rate limits); a refusal raises StudioError with the envelope's code and message."""
from __future__ import annotations

import base64
import re
from email.message import Message

import httpx

from studio_client import compat
from studio_client.operations import BATCH_PREFIX, MAX_WAIT_MS, OPENAPI, OPERATIONS, SERIES_EXPORT, fork_body
from studio_client.tools import StudioError, Tools

_PARAM = re.compile(r"{(\w+)}")


class Studio(Tools):
    """`Studio(url, token)`: e.g. Studio("http://127.0.0.1:8000", token="dsk_..."). timeout_s bounds one
    request: above the server's own waits (a long-poll's 30 s; an ended series' summary, which the
    server awaits from its workers for up to a minute before computing it itself)."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 120):
        self.url = url.rstrip("/")
        self.token = token
        self.wait_cap_ms = min(MAX_WAIT_MS, int(timeout_s * 500))  # a long-poll answers well within the timeout
        self._http = httpx.Client(base_url=self.url, timeout=timeout_s,
                                  headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})

    @classmethod
    def connect(cls, url: str, token: str, *, timeout_s: float = 120) -> "Studio":
        return cls(url, token, timeout_s=timeout_s)

    def call(self, tool: str, **args) -> dict:
        if tool not in OPERATIONS:
            raise AttributeError(f"Studio has no method {tool!r}; the tools are: {', '.join(OPERATIONS)}")
        op = OPERATIONS[tool]
        path = op.path
        if tool == "export_run" and str(args.get("id", "")).startswith(BATCH_PREFIX):
            path = SERIES_EXPORT
        if tool == "export_run" and args.get("format") == "bundle":  # served at its own path over REST
            path = path.replace("/export", "/bundle")
            return _file(args["id"], "bundle", self._send("GET", _PARAM.sub(str(args["id"]), path)))
        if tool == "fork_run":
            args = fork_body(args)
        if op.answer == "csv":
            args = {**args, "format": "csv"}
        elif op.answer == "file":
            args = {"format": "inspect", **args}
        missing = [name for name in _PARAM.findall(path) if args.get(name) is None]
        if missing:
            raise TypeError(f"{tool} needs {', '.join(missing)}")
        path = _PARAM.sub(lambda m: str(args.pop(m.group(1))), path)
        if op.method in ("GET", "DELETE"):
            reply = self._send(op.method, path, params={k: _query(v) for k, v in args.items() if v is not None})
        else:
            reply = self._send(op.method, path, json=args or None)
        if op.answer == "csv":
            return {"batch_id": path.split("/")[-2], "format": "csv", "csv": reply.text}
        if op.answer == "file":
            return _file(path.split("/")[-2], args["format"], reply)
        return reply.json()

    def download(self, id: str, format: str = "csv") -> bytes:
        """A run's (run_...) or a series' (bat_...) export file as bytes: csv, parquet or inspect."""
        path = (SERIES_EXPORT if id.startswith(BATCH_PREFIX) else OPERATIONS["export_run"].path).format(id=id)
        return self._send("GET", path, params={"format": format}).content

    def openapi(self) -> dict:
        """The server's OpenAPI document."""
        return self._send("GET", OPENAPI).json()

    def check(self) -> None:
        """Raise compat.Drift when the server's document differs from what this client was written for:
        another info.version, or an operation, parameter, field or status the client uses that it lacks."""
        compat.require(self.openapi())

    def _send(self, method: str, path: str, **kw) -> httpx.Response:
        try:
            reply = self._http.request(method, path, **kw)
        except httpx.TransportError as e:
            raise ConnectionError(f"no Scenario Studio answers at {self.url} ({e}); is `studio serve` running?") from None
        if reply.status_code < 400:
            return reply
        try:
            body = reply.json()
            code, message = body["error"], body["message"]
        except (ValueError, KeyError, TypeError):
            raise ConnectionError(f"{self.url}{path} answered HTTP {reply.status_code} without the service's error "
                                  "envelope; is this a Scenario Studio server?") from None
        retry = reply.headers.get("Retry-After")
        raise StudioError(code, message, reply.status_code, int(retry) if retry and retry.isdigit() else None)

    def close(self) -> None:
        self._http.close()


def _query(value):
    """A query parameter as the server reads it: booleans as true/false."""
    return str(value).lower() if isinstance(value, bool) else value


def _file(id: str, format: str, reply: httpx.Response) -> dict:
    """export_run's answer, as the MCP tool gives it: the file's bytes in base64 with its name and type."""
    header = Message()
    header["content-disposition"] = reply.headers.get("content-disposition", "")
    return {"id": id, "format": format, "filename": header.get_filename(), "media_type": reply.headers["content-type"],
            "size_bytes": len(reply.content), "base64": base64.b64encode(reply.content).decode()}
