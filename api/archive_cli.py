"""`studio archive materialize`: write the derived logs of scripted matches into the archive, a
series' (`--batch`) or every one (`--all`, before an engine upgrade: docs/RUNS.md, "Upgrading the
engine"). Progress goes to stderr, the outcome as one JSON object to stdout; the exit status is 1 when
some log could not be written (each named, with why).
`studio archive check`: decode every file of the archive and list those that cannot be read, as one
JSON object; the exit status is 1 when any is damaged."""
from __future__ import annotations

import argparse
import json


def add_parser(sub, add_data_dir) -> None:
    """Register `archive` on the `studio` subparsers (api/cli.py calls this)."""
    group = sub.add_parser("archive", help="the match archive: write derived event logs, find damaged files"
                           ).add_subparsers(dest="action", required=True)
    p = group.add_parser("materialize", help="regenerate, verify and write the event logs of scripted matches "
                                             "kept as their inputs")
    add_data_dir(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--batch", help="one series' id (bat_...), or a single run's match id")
    which.add_argument("--all", action="store_true", help="every series (before an engine upgrade)")
    p.add_argument("--workers", type=int, default=None, help="processes to play in (default: one per CPU)")
    p.set_defaults(func=cmd_materialize)
    p = group.add_parser("check", help="read every archive file whole and list those that cannot be read "
                                       "(exit 1 when any)")
    add_data_dir(p)
    p.set_defaults(func=cmd_check)


def cmd_materialize(args: argparse.Namespace) -> int:
    from analytics.archive.materialize import materialize
    from analytics.archive.store import Archive
    from orchestrator.plans import read_config

    from api.progress import progress

    archive = Archive.of(args.data_dir, read_config(args.data_dir))
    with progress("materialize", "matches") as steps:
        out = materialize(archive, None if args.all else [args.batch], workers=args.workers,
                          progress=lambda done, total: steps.update(done, total))
    print(json.dumps(out, indent=2))
    return 1 if out["failed"] or out["damaged"] else 0


def cmd_check(args: argparse.Namespace) -> int:
    from analytics.archive.store import Archive
    from orchestrator.plans import read_config

    out = Archive.of(args.data_dir, read_config(args.data_dir)).check()
    print(json.dumps(out, indent=2))
    return 1 if out["damaged"] else 0
