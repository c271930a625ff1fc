"""The Ray task that computes a series' summary on a worker: it reads the series' seat rows from the
archive itself, so neither the rows nor the statistics cost the head anything; the head sends the
match ids and the graded seats (the store stays on the head) and gets back the summary's JSON text.

Scheduled as the grading tasks are (orchestrator.grading.work), in their worker processes: no CPU
reserved (the scripted match workers hold every CPU), at the lower priority, so a playing match
keeps its core.
"""
from __future__ import annotations

import pyarrow as pa
import ray

from analytics.archive.store import Archive
from orchestrator.grading.work import _POOL, _lower_priority
from orchestrator.runs.summary_text import compute


# A read of a series racing its compaction may find a landed file gone between the listing and the
# read: once more, it finds the compacted one.
@ray.remote(num_cpus=0, scheduling_strategy="SPREAD", runtime_env=_POOL, max_retries=1, retry_exceptions=[OSError])
def summarize(uri: str, batch_id: str, match_ids: list[str], decisions: pa.Table) -> str:
    _lower_priority()
    return compute(Archive(uri), batch_id, match_ids, decisions).text
