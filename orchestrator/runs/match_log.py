"""A match's archived record for the service's readers (pages, observations, forks, transcripts,
exports): the archive's reads with their refusals in the API's envelope. A scripted match's log is
regenerated from its inputs; one that cannot be derived is never served as the match's: 410
`log_not_kept` naming the cause, and the match's results (its run's) stand. A file that is there and
cannot be read is 410 `archive_damaged` naming it: never an empty answer, and never a fault of any
other match."""
from __future__ import annotations

from contextlib import contextmanager

from analytics.archive.damage import Damaged
from analytics.archive.derive import DerivedLogError
from analytics.archive.store import Archive
from orchestrator.core import Core
from orchestrator.errors import DomainError


def damaged(e: Damaged) -> DomainError:
    """The refusal of a read that met a damaged file (api/errors.py gives it for one met anywhere else)."""
    return DomainError("archive_damaged", f"the archive file {e.path} is damaged and cannot be read ({e.cause}); "
                       "what it holds of this match cannot be shown until the operator restores it from a backup "
                       "(`studio archive check` lists every damaged file). The run's results stand")


@contextmanager
def readable():
    """Reads of the archive inside: a damaged file is refused as `damaged` says."""
    try:
        yield
    except Damaged as e:
        raise damaged(e) from None


def read_events(core: Core, match_id: str, key: str | None) -> tuple[dict | None, dict | None]:
    """(columns, metadata) as Archive.read_events gives them; (None, None) when nothing is archived."""
    try:
        with readable():
            return Archive.of(core.data_dir, core.config).read_events(match_id, key)
    except DerivedLogError as e:
        raise DomainError("log_not_kept", e.message) from None


def read_transcript(core: Core, match_id: str, **page) -> tuple[list[dict], bool]:
    """A page of the match's archived model turns (Archive.read_transcript); nothing when it has none."""
    with readable():
        return Archive.of(core.data_dir, core.config).read_transcript(match_id, **page)
