"""A run or a series as a result bundle: every match's inputs, as-played configuration, results and
event-log digest, and every model or agent seat's recorded turns, for its owner only. GET
/api/v1/runs/:id/bundle, GET /api/v1/batches/:id/bundle, MCP export_run (format "bundle"), the console
and `Studio.bundle` all call `of`; `studio verify` checks the file offline. A fork's bundle carries the
match it continues, so it verifies alone."""
from __future__ import annotations

from importlib import metadata

from analytics.archive.store import Archive
from engine.digest import engine_digest
from engine.hashing import BASE_ID
from engine.rubric import RUBRIC_VERSION
from orchestrator.auth import Principal, require
from orchestrator.bundles import layout
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.runs import kinds, match_log
from orchestrator.runs.kinds.arena import Arena
from orchestrator.runs.pages.transcript import every_turn
from orchestrator.runs.pages.world import require_match
from orchestrator.runs.service import READ, list_runs, run_row
from orchestrator.runs.views import results_of, run_view
from orchestrator.statuses import TERMINAL

MEDIA_TYPE = "application/zip"


def filename(id: str) -> str:
    return f"{id}.studio-bundle.zip"


def of(core: Core, principal: Principal, id: str) -> bytes:
    """The bundle of a run (run_...) or a series (bat_...), for its owner."""
    require(principal, READ)
    if not isinstance(id, str) or not id:
        raise DomainError("bad_request", "id: send a run's id (run_...) or a series' batch_id (bat_...)")
    rows = _series(core, principal, id) if id.startswith("bat_") else [run_row(core, principal, id)]
    for row in rows:
        if row.status not in TERMINAL:
            raise DomainError("run_not_ended", f"run {row.id} is {row.status}: a bundle holds ended runs "
                              "only; ask again once it has finished, failed or been cancelled")
    matches, turns, seen = [], {}, set()
    for row in rows:
        _add(core, principal, row, matches, turns, seen, basis=False)
    manifest = {"format": layout.FORMAT, "service": {"name": "scenario-studio", "version": _version()},
                "engine": engine_digest(), "subject": {"batch_id" if id.startswith("bat_") else "run_id": id},
                "runs": [{"run_id": r.id, "trial": r.trial, "status": r.status,
                          "stop_reason": r.stop_reason, "match_id": r.match_id} for r in rows],
                "matches": matches}
    return layout.write(manifest, turns)


def of_match(core: Core, principal: Principal, match_id: str) -> tuple[str, bytes]:
    """(run id, bundle) of the run that played the match: the link of its public report, for its owner."""
    require(principal, READ)
    try:
        row = require_match(core, match_id)
    except DomainError:
        row = None
    if row is None or row.account_id != principal.account_id:
        raise DomainError("unknown_run", f"no match '{match_id}' in a run of this account; a match's bundle is "
                          "its run owner's")
    return row.id, of(core, principal, row.id)


def _version() -> str:
    try:
        return metadata.version("scenario-studio")
    except metadata.PackageNotFoundError:  # a source tree never installed
        return "unknown"


def _series(core: Core, principal: Principal, batch_id: str) -> list:
    """The series' runs in trial order, through the run listing (newest first, a page at a time)."""
    rows, cursor = [], None
    while True:
        page = list_runs(core, principal, batch_id=batch_id, limit=100, cursor=cursor)
        rows += [run_row(core, principal, r["run_id"]) for r in page["runs"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    if not rows:
        raise DomainError("unknown_batch", f"no series '{batch_id}' on this account; a series answers its batch_id "
                          "at launch")
    return sorted(rows, key=lambda r: (r.trial or 0, r.id))


def _add(core: Core, principal: Principal, row, matches: list, turns: dict, seen: set, basis: bool) -> None:
    """The run's match (after the match a fork continues, once per bundle), if it has one."""
    match_id = row.match_id
    if match_id is None or match_id in seen:
        return
    view = run_view(row)
    eff = view["effective"]
    arena = isinstance(kinds.of(row.scenario_id), Arena)
    entry = {"run_id": row.id, "match_id": match_id, "kind": "arena" if arena else "world", "basis": basis,
             "status": row.status, "stop": {"tick": _ticks(row), "reason": row.stop_reason},
             "scenario": {"id": row.scenario_id, "hash": row.scenario_hash,
                          "base": row.scenario_id if arena else BASE_ID, "season_ticks": eff["season_ticks"],
                          "env": eff["env"], "content_hash": eff["hash"]},
             "seeds": {"seed": {"value": eff.get("seed"), "source": eff.get("seed_source")},
                       "spawn_seed": {"value": eff.get("spawn_seed"), "source": eff.get("spawn_seed_source")}},
             "roster": view["roster"], "results": results_of(row), "engine": engine_digest()}
    if arena:
        with match_log.readable():
            game = Archive.of(core.data_dir, core.config).read_game(match_id)
        if game is None:
            raise DomainError("log_not_kept", f"match {match_id}'s game log is not in the archive; its results "
                              "stand, but it cannot be bundled")
        entry["rubric"] = (entry["results"] or {}).get("rubric")
        entry["played"] = {"meta": game["meta"], "moves": game["moves"]}
        entry["log_sha256"] = layout.sha256(layout.canonical(game["moves"]))
    else:
        cols, meta = match_log.read_events(core, match_id, row.batch_id)
        if cols is None:
            raise DomainError("log_not_kept", f"match {match_id}'s event log is not in the archive; its results "
                              "stand, but it cannot be bundled")
        fork = meta.get("fork")
        if fork:  # the match it continues goes first; where the service's archive lies is no part of it
            _add(core, principal, run_row(core, principal, fork["run_id"]), matches, turns, seen, basis=True)
            meta = dict(meta, fork={k: v for k, v in fork.items() if k != "archive"})
        entry["rubric"] = RUBRIC_VERSION
        entry["played"] = {"meta": meta}
        entry["log_sha256"] = layout.archived_log_sha256(cols)
        if fork:
            entry["fork"] = {k: fork[k] for k in ("run_id", "match_id", "tick", "continuation_seed") if k in fork}
    seen.add(match_id)
    matches.append(entry)
    recorded = every_turn(core, row)
    if recorded:
        turns[match_id] = recorded


def _ticks(row) -> int:
    results = results_of(row) or {}
    return int(results.get("match_ticks") or 0)
