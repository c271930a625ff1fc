"""`studio export ID`: a run or a series as a file, fetched from a running service over REST
(GET /api/v1/runs/:id/export or /api/v1/batches/:id/export) with the owner's token, so the command
sees exactly what the API serves, checks included. STUDIO_URL and STUDIO_TOKEN give the defaults.
Progress (kilobytes written) goes to stderr; stdout has only the written path."""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

FORMATS = ("inspect", "csv", "parquet")  # the service's export formats, inspect first: the default here


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="download a run or a series as an Inspect AI log (.eval), CSV or Parquet")
    p.add_argument("id", help="a run's id (run_...) or a series' batch_id (bat_...)")
    p.add_argument("--format", choices=FORMATS, default="inspect",
                   help="inspect: an Inspect AI log for `inspect view`; csv or parquet: one row per agent per match")
    p.add_argument("--output", "-o", help="where to write the file (default: the name the service gives, "
                   "<id>.eval/.csv/.parquet, in the current directory)")
    p.add_argument("--url", help="the service's base URL (default: $STUDIO_URL, else http://127.0.0.1:8000)")
    p.add_argument("--token", help="an access token with runs:read (default: $STUDIO_TOKEN)")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    import httpx

    token = args.token or os.environ.get("STUDIO_TOKEN")
    if not token:
        print("studio export: no token; pass --token or set STUDIO_TOKEN", file=sys.stderr)
        return 2
    base = (args.url or os.environ.get("STUDIO_URL") or "http://127.0.0.1:8000").rstrip("/")
    kind = "batches" if args.id.startswith("bat_") else "runs"
    url = f"{base}/api/v1/{kind}/{args.id}/export"
    from api.progress import progress

    try:
        with progress(f"export {args.id}", "KB") as steps, httpx.stream(
                "GET", url, params={"format": args.format}, headers={"Authorization": f"Bearer {token}"},
                timeout=600) as r:
            if r.status_code != 200:
                r.read()
                print(f"studio export: {r.status_code} {r.text}", file=sys.stderr)
                return 1
            named = re.search(r'filename="([^"/\\]+)"', r.headers.get("content-disposition", ""))
            path = Path(args.output or (named.group(1) if named else f"{args.id}.{args.format}"))
            size = int(r.headers["content-length"]) / 1000 if "content-length" in r.headers else None
            part = path.with_name(path.name + ".part")  # a failed download leaves no file under the real name
            try:
                with part.open("wb") as f:
                    for chunk in r.iter_bytes():
                        f.write(chunk)
                        steps.update(r.num_bytes_downloaded / 1000, size, f"writing {path}")
                part.replace(path)
            finally:
                part.unlink(missing_ok=True)
    except httpx.HTTPError as e:
        print(f"studio export: cannot reach {base}: {e}", file=sys.stderr)
        return 1
    print(path)
    return 0
