"""The `studio` console script (docs/api.md). Each command is a small function.

A transport like REST and MCP, in the top layer: it may import every layer below, and nothing else in
api imports it (create_app never loads argparse).
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def _data_dir_default() -> str:
    return os.environ.get("STUDIO_DATA_DIR", "./studio-data")


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's help ends with its default, unless there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        # "(default: None)" says nothing, and a flag's stored default is not what the command does without it
        if action.default is None or action.nargs == 0:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Every parser of the command, subcommands included (they are made from the parent's class)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def _add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", default=_data_dir_default(),
                   help="the service's data directory (database, archive, keys); env STUDIO_DATA_DIR")


def _saved_definition(data_dir: str, scenario_id: str) -> dict | None:
    """A saved scenario's definition, read by the operator (any account's id) from the data dir's store."""
    import os

    from orchestrator.core import Core
    from orchestrator.plans import read_config
    from orchestrator.store import DB_NAME, scenarios, setting

    if setting(read_config(data_dir)) is None and not os.path.exists(os.path.join(data_dir, DB_NAME)):
        return None
    saved = scenarios.get(Core.open(data_dir).store.conn(), scenario_id)
    return None if saved is None else {"season_ticks": saved.season_ticks, "env": saved.env}


def cmd_simulate(args: argparse.Namespace) -> int:
    from engine.simulate import SimulateError, simulate

    from engine.arena.games import GAMES

    scenario = args.scenario
    if scenario in GAMES:
        return _simulate_arena(args)
    if scenario.startswith("usc_"):
        scenario = _saved_definition(args.data_dir, scenario)
        if scenario is None:
            print(f"studio simulate: no saved scenario '{args.scenario}' in {args.data_dir}", file=sys.stderr)
            return 2
    try:
        results = simulate(
            scenario, seed=args.seed, spawn_seed=args.spawn_seed, ticks=args.ticks,
            anchors=args.anchors.split(",") if args.anchors is not None else None,
            seats=[s for s in args.seats.split(",") if s] if args.seats else [],
        )
    except SimulateError as e:
        print(f"studio simulate: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(results))
    else:
        from engine.report import results_table

        print(results_table(results))
    return 0


def _simulate_arena(args: argparse.Namespace) -> int:
    from engine.arena.simulate import ArenaSimulateError, simulate, table

    try:
        out = simulate(args.scenario, [s for s in (args.seats or "").split(",") if s], seed=args.seed)
    except ArenaSimulateError as e:
        print(f"studio simulate: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out) if args.json else table(out))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from api.serve import serve  # the HTTP stack loads only for this command
    return serve(host=args.host, port=args.port, data_dir=args.data_dir, ray_address=args.ray_address,
                 bootstrap=not args.no_bootstrap, log_level=args.log_level,
                 forwarded_allow_ips=args.forwarded_allow_ips)


def _add_serve_parser(sub: argparse._SubParsersAction) -> None:
    from orchestrator.admin import guarded

    p = sub.add_parser("serve", help="run the service (REST API) on one data dir")
    _add_data_dir(p)
    p.set_defaults(func=guarded(cmd_serve))
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 for every interface)")
    p.add_argument("--port", type=int, default=8000,
                   help="TCP port to listen on; checked free before any account or token is created")
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--no-bootstrap", action="store_true", help="do not create the owner account on first start")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="uvicorn log level; below info drops the access log")
    p.add_argument("--forwarded-allow-ips", default=None,
                   help="comma-separated proxy addresses (or *) whose X-Forwarded-For/-Proto are trusted; "
                        "default: none, the connecting address is the client")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="studio", description="Scenario Studio")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("simulate", help="play one match in-process and print its results")
    _add_data_dir(p)
    p.add_argument("--scenario", required=True,
                   help="a library id (svc:...), a saved scenario (usc_..., read from --data-dir) or arena:chess / "
                        "arena:connect-four")
    p.add_argument("--seed", type=int, help="the world's seed (default: the scenario's, else a fresh one)")
    p.add_argument("--spawn-seed", type=int, help="where agents start (default: the scenario's, else a fresh one)")
    p.add_argument("--ticks", type=int, help="season length in ticks, 10..2000 (default: the scenario's, else 300)")
    p.add_argument("--anchors", help="comma-separated policy ids or one population id; empty for none "
                   "(default: the scenario's anchors)")
    p.add_argument("--seats", help="comma-separated local/POLICY seats (arena: exactly two)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object instead of a table")
    from orchestrator.admin import guarded

    p.set_defaults(func=guarded(cmd_simulate))  # a saved scenario's store setting may be refused

    _add_serve_parser(sub)

    from orchestrator.admin import add_parsers

    add_parsers(sub, _add_data_dir)

    from analytics.report_cli import add_parser as add_report_parser

    add_report_parser(sub, _add_data_dir)

    from api.archive_cli import add_parser as add_archive_parser

    add_archive_parser(sub, _add_data_dir)

    from api.store_cli import add_parser as add_store_parser

    add_store_parser(sub, _add_data_dir)

    from api.export_cli import add_parser as add_export_parser

    add_export_parser(sub)

    from api.verify_cli import add_parser as add_verify_parser

    add_verify_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
