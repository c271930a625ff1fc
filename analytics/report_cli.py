"""`studio report`: a series', some runs' or the whole archive's summary table, or JSON: one summary
and one leaderboard per game (the world, each arena game), failed runs left out and counted.

Reads the archive's Parquet files only, so it is safe while the service runs.
The progress bar goes to stderr and only on a terminal, so `--json` output stays clean on stdout.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# rich, pandas, scipy and DuckDB are imported inside the functions: `studio` builds every
# subcommand's parser on each start, and other commands should not pay for this one's imports.


def add_parser(sub, add_data_dir) -> None:
    """Register `report` on the `studio` subparsers (api/cli.py calls this)."""
    p = sub.add_parser("report", help="summary table of a series, some runs or the whole archive")
    add_data_dir(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--series", help="a series' id (its batch_id, bat_...): one row per seat")
    # the flag's first name, kept so existing scripts still run
    which.add_argument("--batch", dest="series", help=argparse.SUPPRESS)
    which.add_argument("--runs", help="comma-separated run ids: one row per seat")
    which.add_argument("--all", action="store_true", help="every archived match: one row per model, per game")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the leaderboard")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(func=cmd_report)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("ch") else f"{n} {word}s"


def _interval(iv: dict, scale: float = 1.0, digits: int = 1) -> str:
    if iv["estimate"] is None:
        return "-"
    est = f"{iv['estimate'] * scale:.{digits}f}"
    if iv["low"] is None:
        return est
    return f"{est} [{iv['low'] * scale:.{digits}f}, {iv['high'] * scale:.{digits}f}]"


def build_report(data_dir: str, *, series: str | None, runs: list[str] | None, resamples: int,
                 progress=None) -> dict:
    """The report as plain data: per game the selection holds (world, each arena game: GAME_IDS),
    its series summary and Bradley-Terry leaderboard; failed runs left out and counted.
    ``progress``: a rich Progress to show the steps on, or None."""
    from analytics.compare import leaderboard
    from analytics.data import failed_left_out, open_data_dir
    from analytics.summary import series_summary

    def step(text: str):
        return progress.add_task(text, total=None) if progress else None

    def done(task):
        if progress:
            progress.update(task, completed=1, total=1)

    data = open_data_dir(data_dir)
    failed = data.failed_run_ids()
    selected = {"batch_id": series, "run_ids": runs}
    left_out = failed_left_out(data, failed, **selected)
    games = data.games(**selected, exclude_runs=failed)
    if not games:
        what = f"series {series}" if series else f"runs {', '.join(runs)}" if runs else "the archive"
        only = f" ({left_out['note']}: nothing else)" if left_out["note"] else ""
        raise LookupError(f"no archived matches for {what} under {data_dir}{only}")
    sections = []
    for game in games:
        task = step(f"{game}: summarising seats, leaderboard with {resamples} bootstrap resamples")
        summary = series_summary(data, **selected, by="seat" if series or runs else "model", game=game,
                                 exclude_runs=failed)
        board = leaderboard(data, **selected, game=game, n_resamples=resamples)
        done(task)
        sections.append({"game": game, "summary": summary, "leaderboard": board.to_dict()})
    return {"data_dir": str(data_dir), "games": sections, "left_out": left_out}


def _heads(game: str) -> tuple[str, ...]:
    """The summary columns that mean something for this game: arena seats neither starve nor craft, and
    their rank 1 is a win or a draw."""
    from analytics.data import WORLD
    from engine.arena.games import GAMES

    if game == WORLD:
        return "fitness index", "win %", "survival %", "crafter"
    return GAMES[game].fitness.replace("_", " "), "won or drew %"


def _title(game: str) -> str:
    from engine.arena.games import GAMES

    return GAMES[game].title if game in GAMES else "World"


def render(report: dict, console) -> None:
    """Per game, two rich tables (summary, leaderboard) on ``console``; then what was left out."""
    from rich.table import Table

    from analytics.data import WORLD

    for section in report["games"]:
        game, summary, board = section["game"], section["summary"], section["leaderboard"]
        per_seat = summary["by"] == "seat"
        scope = (f"series {summary['batch_id']}" if summary["batch_id"] else
                 _count(len(summary['run_ids']), "run") if per_seat else "all runs")
        table = Table(title=f"{_title(game)}, {scope}: {_count(summary['runs'], 'run')}, "
                            f"{_count(summary['matches'], 'match')}, scenarios {', '.join(summary['scenario_ids'])} "
                            "(95% intervals)")
        if per_seat:
            table.add_column("seat", justify="right")
            table.add_column("name", no_wrap=True)
        table.add_column("model", no_wrap=True)
        heads = _heads(game)
        for head in ("n", *heads):
            table.add_column(head, justify="right")
        for row in summary["seats" if per_seat else "models"]:
            label = [str(row["seat"]), row["name"] + (" (anchor)" if row["anchor"] else "")] if per_seat else []
            cells = [_interval(row["fitness_index"]), _interval(row["win_rate"], 100, 0)]
            if game == WORLD:
                crafter = "-" if row["crafter_score"] is None else f"{row['crafter_score']:.1f}"
                cells += [_interval(row["survival_rate"], 100, 0), crafter]
            table.add_row(*label, row["model"], str(row["n"]), *cells)
        console.print(table)

        lb = Table(title=f"{_title(game)}: Bradley-Terry leaderboard over {_count(board['n_matches'], 'match')} "
                         f"({board['n_resamples']} resamples; same group = tied)")
        for head in ("rank", "model", "log-strength", "group", "matches"):
            lb.add_column(head, justify="left" if head == "model" else "right")
        for row in board["rows"]:
            lb.add_row(str(row["rank"]), str(row["model"]),
                       f"{row['estimate']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]", str(row["group"]),
                       str(row["n"]))
        console.print(lb)
    if report["left_out"]["note"]:
        console.print(f"Note: {report['left_out']['note']} (their scores are not results to rank).")


def cmd_report(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    err = Console(stderr=True, soft_wrap=True)
    if not Path(args.data_dir).is_dir():
        err.print(f"studio report: no data dir at {args.data_dir}")
        return 2
    runs = [r for r in args.runs.split(",") if r] if args.runs else None
    if args.resamples < 1:
        err.print("studio report: --resamples must be at least 1")
        return 2
    try:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                      transient=True, disable=not err.is_terminal) as progress:
            report = build_report(args.data_dir, series=args.series, runs=runs, resamples=args.resamples,
                                  progress=progress)
    except LookupError as e:
        err.print(f"studio report: {e}")
        return 2
    if args.json:
        print(json.dumps(report, allow_nan=False))
    else:
        out = Console(file=sys.stdout)
        # Piped output has no width to fit; 80 columns would wrap every interval over three lines.
        render(report, out if out.is_terminal else Console(file=sys.stdout, width=160))
    return 0
