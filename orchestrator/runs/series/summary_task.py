"""The Ray actor that computes series' summaries on a worker: it reads a series' seat rows from the
archive itself, so neither the rows nor the statistics cost the head anything; the head sends the
match ids and the graded seats (the store stays on the head) and gets back the summary's JSON text.

An actor, not a task: Ray ends an idle task worker within about a second, and a fresh one spends
seconds importing the statistics stack; the actor stays warm, warms itself when it starts, and keeps
the seat rows of the series it summarised. Scheduled as the grading tasks are: no CPU reserved (the
scripted match workers hold every CPU), at the lower priority, so a playing match keeps its core.
"""
from __future__ import annotations

import pyarrow as pa
import ray

from analytics.archive.store import Archive
from orchestrator.grading.work import _POOL, _lower_priority
from orchestrator.runs.series.summary_text import compute, warm


@ray.remote(num_cpus=0, scheduling_strategy="SPREAD", runtime_env=_POOL, max_restarts=-1)
class Summaries:
    def __init__(self) -> None:
        _lower_priority()
        # Arrow's CPU pool decodes a series' files in parallel: in a background actor on cores the
        # match workers hold, that only adds the threads' own overhead to the same work
        pa.set_cpu_count(1)
        warm()

    def summarize(self, uri: str, batch_id: str, match_ids: list[str], decisions: pa.Table) -> str:
        archive = Archive(uri)
        try:
            return compute(archive, batch_id, match_ids, decisions).text
        except FileNotFoundError:
            # the series' compaction removed a landed file between the listing and the read: once
            # more, it finds the compacted one
            return compute(archive, batch_id, match_ids, decisions).text
