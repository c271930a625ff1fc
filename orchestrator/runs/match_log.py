"""A match's event log for the service's readers (pages, observations, forks): the archive's read,
which regenerates a scripted match kept as its inputs (analytics.archive.derive), with its refusal in
SPEC.md's envelope. A log that cannot be derived is never served as the match's: the reader answers
410 `log_not_kept` naming the cause, and the match's results (its run's) stand."""
from __future__ import annotations

from analytics.archive.derive import DerivedLogError
from analytics.archive.store import Archive
from orchestrator.core import Core
from orchestrator.errors import DomainError


def read_events(core: Core, match_id: str, key: str | None) -> tuple[dict | None, dict | None]:
    """(columns, metadata) as Archive.read_events gives them; (None, None) when nothing is archived."""
    try:
        return Archive.of(core.data_dir, core.config).read_events(match_id, key)
    except DerivedLogError as e:
        raise DomainError("log_not_kept", e.message) from None
