"""A run or a series as an Inspect AI evaluation log (`.eval`), written through inspect_ai.log's own
types and writer so `inspect view`, `read_eval_log` and `inspect_ai.analysis.samples_df` read it.

One sample per roster seat and trial: a series' trials are the sample's epochs (Inspect's word for
repeated trials of one sample), so a seat's scores across the series line up under one sample id.
Messages are the seat's transcript (what it was told, then each turn's observation and reply), events
its turns, scores its scorecard, metadata the scenario hash, seeds and roster, usage its ledger's.
Every field is listed in docs/FORMATS.md. inspect_ai loads slowly, so it is imported when a log is
written, never when the service starts.
"""
from __future__ import annotations

import json
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from orchestrator import finite
from orchestrator.core import Core
from orchestrator.provider_kinds import AGENT, LOCAL, UNPAID
from orchestrator.records.roster import plain
from orchestrator.records.turn import Said
from orchestrator.runs import kinds
from orchestrator.statuses import ACTIVE, CANCELLED, FAILED
from orchestrator.runs.pages.transcript import every_turn
from orchestrator.runs.views import results_of, run_view
from orchestrator.seats.prompt import compose_directions

TASK_VERSION = 1


def _iso(ms: int | None) -> str | None:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat() if ms else None


def model_name(seat: dict) -> str:
    """Inspect names a model provider/model; a seat's provider is ours (router, local, agent, ...),
    and a scripted seat's model already names it (local/random)."""
    model, provider = seat["model"], seat["provider"]
    return model if model.startswith(provider + "/") else f"{provider}/{model}"


def _reply_message(seat: dict, reply: str | None, n: int):
    """The assistant message of one turn: a tools-format model seat's calls as Inspect tool calls,
    any other reply (json text, an agent's submitted body) as its text."""
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    said = Said.decode(reply, calls=seat["provider"] not in UNPAID and (seat.get("format") or "tools") == "tools")
    calls = []
    for k, c in enumerate(said.calls):
        args = c.arguments
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except (ValueError, RecursionError):
                args = {"_unreadable": args}
        if finite.unfit(args) is not None:  # a model's 1e400 or deep nesting: kept as the text it sent
            args = {"_unreadable": json.dumps(c.arguments)[:4096]}
        calls.append(ToolCall(id=f"t{n}.{k}", function=c.name,
                              arguments=args if isinstance(args, dict) else {"_value": args}))
    return ChatMessageAssistant(content=said.text, tool_calls=calls or None, model=seat["model"], source="generate")


def _messages_and_events(kind, seat: dict, turns: list[dict], shown: dict, at_ms: int | None):
    from inspect_ai.event import InfoEvent
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    messages, events = [], []
    if seat["provider"] == LOCAL:  # a scripted seat is told nothing
        system = None
    elif seat["provider"] == AGENT:  # an agent seat is handed its directions with every turn
        system = compose_directions(seat.get("skills") or [], seat.get("instructions")) or None
    else:
        system = kind.system_text(seat)
    if system:
        messages.append(ChatMessageSystem(content=system))
    stamp = datetime.fromtimestamp((at_ms or 0) / 1000, timezone.utc)
    for n, t in enumerate(turns):
        seen = shown.get((t["tick"], t["seat"]))
        messages.append(ChatMessageUser(content=seen if seen is not None else f"tick {t['tick']}"))
        messages.append(_reply_message(seat, t["reply"], n))
        events.append(InfoEvent(source="studio/turn", timestamp=stamp, data={
            k: t.get(k) for k in ("tick", "seat", "actions", "refused", "latency_ms", "input_tokens",
                                  "output_tokens", "error", "refusal", "truncated", "submitted_by")}))
    return messages, events


def _scores(agent: dict | None) -> dict:
    """The scorecard as Inspect scores: fitness_index, each dimension, and decision accuracy where graded."""
    from inspect_ai.scorer import Score

    if agent is None:
        return {}
    meta = {k: agent.get(k) for k in ("rank", "grade", "archetype", "status", "crafter_score")}
    out = {"fitness_index": Score(value=agent["fitness_index"], answer=agent.get("grade"),
                                  explanation=agent.get("epilogue"), metadata=meta)}
    for name, value in (agent.get("dimensions") or {}).items():
        out[name] = Score(value=value)
    decisions = agent.get("decisions")
    if decisions and decisions.get("accuracy") is not None:
        out["decision_accuracy"] = Score(value=decisions["accuracy"], metadata=decisions)
    return out


def _usage(seat: dict):
    from inspect_ai.model import ModelUsage

    u = seat.get("usage") or {}
    i, o = int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0)
    return ModelUsage(input_tokens=i, output_tokens=o, total_tokens=i + o, total_cost=u.get("usd"))


def _public_roster(roster: list[dict]) -> list[dict]:
    return [{k: s.get(k) for k in ("seat", "name", "model", "provider", "funding", "format", "scaffold")}
            for s in roster]


def _samples(core: Core, row, epoch: int) -> list:
    from inspect_ai.log import EvalError, EvalSample

    view, results = run_view(row), results_of(row)
    kind = kinds.of(row.scenario_id)
    roster = view["roster"]
    turns = every_turn(core, row) if row.match_id else []
    talking = {t["seat"] for t in turns}
    shown = kind.observations(core, row, talking) if row.status not in ACTIVE and talking else {}
    agents = {a["seat"]: a for a in (results or {}).get("agents", []) if a.get("seat") is not None}
    eff = view["effective"]
    seeds = {k: eff.get(k) for k in ("seed", "seed_source", "spawn_seed", "spawn_seed_source")}
    arm = (eff.get("fork") or {}).get("arm")
    out = []
    for seat in roster:
        k = seat["seat"]
        messages, events = _messages_and_events(kind, seat, [t for t in turns if t["seat"] == k], shown,
                                                view["started_at_ms"])
        error = view["error"]
        out.append(EvalSample(
            id=f"seat-{k}" + ("-control" if arm == "control" else ""), epoch=epoch,
            input=f"Seat {k} ({seat['name']}, {model_name(seat)}) plays {row.scenario_id} in run {row.id}",
            target="", messages=messages, events=events, scores=_scores(agents.get(k)),
            metadata={"run_id": row.id, "match_id": row.match_id, "batch_id": row.batch_id,
                      "trial": row.trial, "seat": k, "name": seat["name"], "model": seat["model"],
                      "provider": seat["provider"], "scenario_id": row.scenario_id,
                      "scenario_hash": row.scenario_hash, "config_hash": eff.get("hash"), **seeds,
                      "status": row.status, "stop_reason": row.stop_reason, "turns": seat.get("turns"),
                      "skills": [s["id"] for s in seat.get("skills") or []], "roster": _public_roster(roster),
                      "links": view["links"]},
            model_usage={model_name(seat): _usage(seat)} if seat["provider"] not in UNPAID else {},
            started_at=_iso(view["started_at_ms"]), completed_at=_iso(view["finished_at_ms"]),
            error=EvalError(message=f"{error['error']}: {error['message']}", traceback="", traceback_ansi="")
            if error else None))
    return out


def _metrics(samples: list) -> list:
    """Each score's mean over the samples that carry it (the batch view has the intervals)."""
    from inspect_ai.log import EvalMetric, EvalScore

    names: dict[str, list[float]] = {}
    for s in samples:
        for name, score in (s.scores or {}).items():
            names.setdefault(name, []).append(float(score.value))
    return [EvalScore(name=name, scorer=name, scored_samples=len(v), unscored_samples=len(samples) - len(v),
                      metrics={"mean": EvalMetric(name="mean", value=sum(v) / len(v))})
            for name, v in names.items()]


def _status(rows) -> str:
    statuses = {r.status for r in rows}
    if statuses & set(ACTIVE):
        return "started"
    if FAILED in statuses:
        return "error"
    return "cancelled" if statuses == {CANCELLED} else "success"


def eval_log(core: Core, rows: list, log_id: str) -> bytes:
    """The `.eval` file (a zip of JSON) of these runs (one run, or a series' runs in trial order)."""
    from inspect_ai.log import (EvalConfig, EvalDataset, EvalError, EvalLog, EvalResults, EvalSpec, EvalStats,
                                write_eval_log)
    from inspect_ai.model import ModelConfig

    first = rows[0]
    samples = [s for r in rows for s in _samples(core, r, epoch=r.trial + 1)]
    roster = plain(first.roster)  # as the run view shows it, as the samples read it
    models = sorted({model_name(s) for s in roster})
    usage: dict = {}
    for r in rows:
        for seat in plain(r.roster):
            if seat["provider"] in UNPAID:
                continue
            u, name = _usage(seat), model_name(seat)
            usage[name] = usage[name] + u if name in usage else u
    eff = first.effective
    spec = EvalSpec(
        eval_id=log_id, run_id=log_id, created=_iso(first.created_at_ms), task=first.scenario_id,
        task_id=first.scenario_hash, task_version=TASK_VERSION, task_display_name=first.name,
        task_args={"scenario": first.scenario_id, "seats": [model_name(s) for s in roster]},
        dataset=EvalDataset(name=first.scenario_id, samples=len(roster),
                            sample_ids=sorted({s.id for s in samples})),
        model=models[0] if len(models) == 1 else "studio/roster",
        model_roles={f"seat-{s['seat']}": ModelConfig(model=model_name(s)) for s in roster},
        config=EvalConfig(epochs=len(rows)), packages={"scenario-studio": _version()},
        metadata={"service": "scenario-studio", "scenario_id": first.scenario_id,
                  "scenario_hash": first.scenario_hash, "config_hash": eff.get("hash"),
                  "batch_id": first.batch_id, "run_ids": [r.id for r in rows],
                  "roster": _public_roster(roster)})
    status = _status(rows)
    failed = next((r.error for r in rows if r.error), None)
    log = EvalLog(
        status=status, eval=spec,
        results=EvalResults(total_samples=len(samples), completed_samples=sum(1 for s in samples if s.scores),
                            scores=_metrics(samples)),
        stats=EvalStats(started_at=_iso(min((r.started_at_ms for r in rows if r.started_at_ms), default=None))
                        or "", completed_at=_iso(max((r.finished_at_ms or 0) for r in rows)) or "",
                        model_usage=usage),
        error=EvalError(message=f"{failed['error']}: {failed['message']}", traceback="", traceback_ansi="")
        if status == "error" and failed else None,
        samples=samples)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{log_id}.eval"
        write_eval_log(log, str(path), format="eval")
        return path.read_bytes()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scenario-studio")
    except PackageNotFoundError:
        return "unknown"
