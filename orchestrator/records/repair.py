"""A stored number JSON cannot carry, as `studio doctor` reports it: where (table and row) and what."""
from __future__ import annotations

from orchestrator.records.base import Record, Text


class Finding(Record):
    where: Text
    what: Text
