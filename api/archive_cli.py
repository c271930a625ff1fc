"""`studio archive materialize`: write the derived logs of scripted matches into the archive
(analytics.archive.materialize), a series' (`--batch`) or every one (`--all`, before an engine
upgrade: docs/RUNS.md, "Upgrading the engine"). Progress goes to stderr, the outcome as one JSON
object to stdout; the exit status is 1 when some log could not be written (each named, with why)."""
from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub, add_data_dir) -> None:
    """Register `archive` on the `studio` subparsers (api/cli.py calls this)."""
    group = sub.add_parser("archive", help="the match archive: write derived event logs").add_subparsers(
        dest="action", required=True)
    p = group.add_parser("materialize", help="regenerate, verify and write the event logs of scripted matches "
                                             "kept as their inputs")
    add_data_dir(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--batch", help="one series' id (bat_...), or a single run's match id")
    which.add_argument("--all", action="store_true", help="every series (before an engine upgrade)")
    p.add_argument("--workers", type=int, default=None, help="processes to play in (default: one per CPU)")
    p.set_defaults(func=cmd_materialize)


def cmd_materialize(args: argparse.Namespace) -> int:
    from analytics.archive.materialize import materialize
    from analytics.archive.store import Archive
    from orchestrator.plans import read_config

    archive = Archive.of(args.data_dir, read_config(args.data_dir))

    def progress(done: int, total: int) -> None:
        print(f"materialize: {done}/{total} matches", file=sys.stderr, flush=True)
    out = materialize(archive, None if args.all else [args.batch], workers=args.workers, progress=progress)
    print(json.dumps(out, indent=2))
    return 1 if out["failed"] else 0
