"""The service's private Ray hands a match's result back inline in the task's reply (no object store
round trip) up to workers.INLINE_RESULT_BYTES; larger ones still go through the object store."""
from __future__ import annotations

import ray

from orchestrator.workers import INLINE_RESULT_BYTES


@ray.remote
def _blob(n: int) -> bytes:
    return b"x" * n


def test_a_match_sized_result_comes_back_inline_and_a_larger_one_through_the_store(ray_pool):
    small, large = _blob.remote(1_000_000), _blob.remote(INLINE_RESULT_BYTES + 1_000_000)
    assert len(ray.get(small)) == 1_000_000 and len(ray.get(large)) == INLINE_RESULT_BYTES + 1_000_000
    where = ray.experimental.get_object_locations([small, large])
    assert where[small]["node_ids"] == []  # in the caller's own memory: it never touched a node's store
    assert where[large]["node_ids"] != []  # Ray's default past 100 KB, kept above the inline limit
