"""What a followed series' summaries cost, as a summary actor computes them, in this one process:
`--trials` matches of the base world (24 agents, `--ticks` ticks) played and landed as scripted
workers land them, then the series summarised at each size the summarizer asks for while it plays
(growth by half: 1, 2, 3, 5, 8, ...) and finally over every match. CPU of those summaries per
repeat, each repeat in a fresh state (no rows or intervals kept from the one before). Prints one
JSON object; the final summary's digest lets two versions of the code be compared for equal results.

    python benchmarks/followed.py [--trials 50] [--ticks 300] [--repeats 3]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.figures import spread


def sizes(trials: int) -> list[int]:
    """The sizes a playing series is summarised at when each summary waits for growth by half."""
    out = [1]
    while out[-1] < trials:
        out.append(min(trials, max(out[-1] + 1, int(out[-1] * 1.5))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()

    import pyarrow as pa

    from analytics.archive.store import Archive
    from benchmarks.derived import KEY, jobs
    from orchestrator.play import play_job
    from orchestrator.play.job import land_chunk
    from orchestrator.runs.series import summary_text

    with tempfile.TemporaryDirectory() as tmp:
        todo = jobs(a.trials, a.ticks, False, tmp)
        for i in range(0, len(todo), 8):
            land_chunk([(j, play_job(j, pack=False)) for j in todo[i:i + 8]])
        ids = [j.match_id for j in todo]
        graded = pa.table({"match_id": pa.array([], pa.string()), "seat": pa.array([], pa.int32()),
                           "accuracy": pa.array([], pa.float64())})
        summary_text.warm()
        steps, cpu, digest = sizes(a.trials), [], None
        for _ in range(a.repeats):
            summary_text._kept.clear()  # a fresh actor's state: every row read again, no interval held
            t0 = time.process_time()
            for n in steps:
                kept = summary_text.compute(Archive(tmp), KEY, ids[:n], graded, final=n == a.trials)
            cpu.append(1000 * (time.process_time() - t0))
            digest = hashlib.sha256(kept.text.encode()).hexdigest()[:16]
    print(json.dumps({
        "benchmark": "followed",
        "setup": {"trials": a.trials, "ticks": a.ticks, "agents": 24, "summarised_at": steps,
                  "load_avg_1m_at_end": round(os.getloadavg()[0], 2)},
        "figures": {"summaries_cpu_per_series": spread(cpu, "ms", 1),
                    "summaries_cpu_per_run": spread([c / a.trials for c in cpu], "ms", 3)},
        "final_summary_sha256": digest,
    }, indent=1))


if __name__ == "__main__":
    main()
