"""`studio verify FILE [--json]`: a result bundle's matches played again offline and checked, with
no service, key or network. Exit 0 verified, 1 a divergence (or no bundle), 3 another engine."""
from __future__ import annotations

import argparse
import json


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="play every match of a result bundle again offline and check its digests")
    p.add_argument("file", help="a bundle (<id>.studio-bundle.zip) from GET /api/v1/runs/:id/bundle or "
                   "/api/v1/batches/:id/bundle")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(func=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from orchestrator.bundles.verify import Divergence, Report, run

    try:
        report = run(args.file)
    except OSError as e:
        report = Report(divergence=Divergence(f"cannot read {args.file}: {e.strerror or e}"))
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        print(report.text())
    return report.status
