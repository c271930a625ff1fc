"""Where a benchmark's CPU went: the sampled processes grouped (the head, Ray's workers, Ray's own
processes), named, and summed into the parts a regression is named by. Shared by scale.py and series.py."""
from __future__ import annotations

import os

GROUPS = ("head", "workers", "ray_system")
RAY_OWN = ("DashboardAgent", "RuntimeEnvAgent")  # Ray's agents, though titled like workers


def group(pid: int, title: str, head: int) -> str:
    if pid == head:
        return "head"
    if title.startswith("ray::") and name(title)[5:] not in RAY_OWN:
        return "workers"
    return "ray_system"


def name(title: str) -> str:
    """A process's short name: a Ray worker's class (or task), else its program and script."""
    if title.startswith("ray::"):
        return "ray::" + title[5:].split(".")[0].split()[0]
    parts = title.split()
    script = next((os.path.basename(p) for p in parts[1:] if p.endswith(".py")), "")
    return " ".join(x for x in (os.path.basename(parts[0]) if parts else "?", script) if x)


def by_group(procs: dict, head: int, per: float) -> dict:
    out = {g: 0.0 for g in GROUPS}
    for pid, p in procs.items():
        out[group(pid, p.title, head)] += p.cpu_s
    return {g: round(1000 * v / per, 3) for g, v in out.items()}


def by_name(procs: dict, head: int, per: float) -> dict:
    """Summed by process name; `each` splits a name several processes share (the scripted workers are
    the busy ones of ray::Player during scripted runs, the model workers during model runs)."""
    out: dict[str, list[float]] = {}
    for pid, p in procs.items():
        out.setdefault("studio serve (head)" if pid == head else name(p.title), []).append(p.cpu_s)
    return {k: {"processes": len(v), "ms": round(1000 * sum(v) / per, 3)}
            | ({"each": sorted((round(1000 * x / per, 3) for x in v), reverse=True)} if len(v) > 1 else {})
            for k, v in sorted(out.items(), key=lambda kv: -sum(kv[1]))}


# The parts a regression is named by, from the processes' names (by_name): each part's CPU per run.
PARTS = {"summaries": ("ray::Summaries",), "compactor": ("ray::Compactor",), "recorder": ("ray::Recorder",),
         "workers": ("ray::Player",)}


def by_part(processes: dict, groups: dict, engine_ms: float) -> dict:
    """CPU per run of each part: the head, the series summaries' actors, the compactor, the recorder,
    the scripted workers over the engine alone playing the same matches, the rest of Ray's workers and
    Ray's own processes. They add up to every process's CPU (workers_over_engine + engine_alone)."""
    def ms(names) -> float:
        return sum(p["ms"] for k, p in processes.items() if k in names)

    named = {part: round(ms(names), 3) for part, names in PARTS.items()}
    workers = named.pop("workers")
    other = groups["workers"] - workers - sum(named.values())
    return {"head": groups["head"], **named, "workers_over_engine": round(workers - engine_ms, 3),
            "engine_alone": engine_ms, "other_ray_workers": round(other, 3), "ray_system": groups["ray_system"],
            "unit": "ms of CPU per run"}
