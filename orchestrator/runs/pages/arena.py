"""Public pages of arena matches (docs/ARENA.md): the graded move list as the log, the
report with its evaluation series, and replay frames (the position after every ply). What differs
between games (the series, the frames) is the game's own."""
from __future__ import annotations

from datetime import datetime, timezone

from engine.arena.games import GAMES
from analytics.archive.store import Archive
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs import match_log
from orchestrator.runs.pages.world import _public_seat, _row, bundle_link
from orchestrator.runs.views import results_of


def is_arena(core: Core, match_id: str) -> bool:
    return _row(core, match_id).scenario_id in GAMES


def _moves(core: Core, match_id: str) -> list[dict]:
    """The graded moves as archived; none while the game plays (or when nothing was archived)."""
    with match_log.readable():
        game = Archive.of(core.data_dir).read_game(match_id)
    return game["moves"] if game else []


def log(core: Core, match_id: str) -> dict:
    row = _row(core, match_id)
    return {"match_id": match_id, "game": row.scenario_id, "status": row.status,
            "moves": _moves(core, match_id)}


def report(core: Core, match_id: str) -> dict:
    row = _row(core, match_id)
    eff = row.effective
    moves = _moves(core, match_id)
    graph = GAMES[row.scenario_id].graph(moves) if moves else None
    return {"match_id": match_id, "name": row.name, "status": row.status, "scenario_id": row.scenario_id,
            "config_hash": eff["hash"], "seed": eff["seed"], "first_seat": eff["first_seat"],
            "started_at_ms": row.started_at_ms, "finished_at_ms": row.finished_at_ms,
            "stop_reason": row.stop_reason, "roster": [_public_seat(s) for s in row.roster],
            "results": results_of(row), "moves": moves, "graph": graph, "bundle": bundle_link(row)}


def frames(core: Core, match_id: str) -> dict:
    """Every position from the start, as the game's board draws it (chess FENs, Connect Four grids)."""
    row = _row(core, match_id)
    moves = _moves(core, match_id)
    return {"match_id": match_id, "game": row.scenario_id, "status": row.status,
            "frames": GAMES[row.scenario_id].frames(moves), "moves": moves}


def pgn(core: Core, match_id: str, site: str) -> str:
    """The graded game in its game's standard notation (chess: PGN with lichess's annotations); a
    game that has none, and every world match, answers not_found. `site`: where the game is found
    (the public report's address). Before the game is graded it holds no moves and Result `*`."""
    row = _row(core, match_id)
    game = GAMES.get(row.scenario_id)
    text = game.annotated_pgn(_moves(core, match_id), _tags(row, site)) if game else None
    if text is None:
        what = game.title if game else "world"
        raise DomainError("not_found", f"match '{match_id}' is a {what} game: PGN exists for chess games only")
    return text


def _tags(row, site: str) -> dict[str, str]:
    """PGN's seven tags (and the oracle as Annotator, the end as Termination once graded)."""
    eff, roster = row.effective, row.roster
    results = row.results if row.results else None
    first = eff["first_seat"]
    started = row.started_at_ms
    tags = {"Event": f"Scenario Studio: {row.name}", "Site": site,
            "Date": datetime.fromtimestamp(started / 1000, timezone.utc).strftime("%Y.%m.%d") if started
            else "????.??.??",
            "Round": str(row.trial + 1) if row.batch_id else "-",
            "White": roster[first]["name"], "Black": roster[1 - first]["name"],
            "Result": results["game"]["result"] if results else "*"}
    if results:
        oracle = results["game"]["oracle"]
        tags["Annotator"] = f"{oracle['engine']} {oracle['version']} ({oracle['nodes']} nodes)"
        tags["Termination"] = results["game"]["termination"]
    return tags
