"""`studio store copy --to URL`: move a stopped single-box install's control plane to PostgreSQL.
The data dir is locked for the copy (a running `studio serve` holds it: the copy refuses); progress
per table goes to stderr, the counts and sums copied as one JSON object to stdout. Exit 2 on a URL
that names no PostgreSQL database, a database that is not empty or cannot be reached."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub, add_data_dir) -> None:
    """Register `store` on the `studio` subparsers (api/cli.py calls this)."""
    group = sub.add_parser("store", help="the control plane's store: copy a single-box install to PostgreSQL"
                           ).add_subparsers(dest="action", required=True)
    p = group.add_parser("copy", help="copy every account, token, key, run and series of a stopped install "
                                      "into an empty PostgreSQL database")
    add_data_dir(p)
    p.add_argument("--to", required=True, metavar="URL", help="postgresql://user:password@host:port/database")
    p.set_defaults(func=cmd_copy)


def cmd_copy(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from orchestrator import datadir
    from orchestrator.store import DB_NAME, Store
    from orchestrator.store import copy as store_copy
    from orchestrator.store import postgres as pg

    def fail(why: str) -> int:
        print(f"studio store copy: {why}", file=sys.stderr)
        return 2

    try:
        pg.conninfo(args.to)
    except pg.UrlError as e:
        return fail(f"--to: {e}")
    target = pg.redacted(args.to)
    if not (Path(args.data_dir) / DB_NAME).is_file():
        return fail(f"no control plane in {args.data_dir} ({DB_NAME} is missing)")
    try:
        held = datadir.lock(args.data_dir, what="a running `studio serve`")
    except datadir.StartError as e:
        return fail(str(e))
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      console=_stderr(), transient=False) as bar:
            tasks: dict[str, int] = {}

            def progress(table: str, done: int, total: int) -> None:
                if table not in tasks:
                    tasks[table] = bar.add_task(table, total=total or 1)
                bar.update(tasks[table], completed=done if total else 1)

            copied = store_copy.copy(Store(args.data_dir), args.to, progress)
    except store_copy.NotEmpty as e:
        return fail(f"{target}: {e}; copy into an empty database")
    except store_copy.Mismatch as e:
        return fail(f"the copy differed from the data dir and was rolled back, {target} holds no rows: {e}")
    except store_copy.Refused as e:
        return fail(f"{target}: {e}")
    finally:
        held.close()
    print(json.dumps({"to": target, "tables": copied.tables, "sums": copied.sums}, indent=2))
    return 0


def _stderr():
    from rich.console import Console

    return Console(stderr=True)
