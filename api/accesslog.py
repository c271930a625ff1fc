"""Access-log redaction: a secret sent in a query string (`?api_key=dsk_...`) is logged as [redacted]."""
from __future__ import annotations

import logging
import re

SECRET_PARAMS = re.compile(r"(?i)([?&](?:api_key|apikey|token|access_token|key|password|secret)=)[^&#\s]*")
TOKEN = re.compile(r"dsk_[0-9a-f]{8,}")


def redact(text: str) -> str:
    return TOKEN.sub("dsk_[redacted]", SECRET_PARAMS.sub(r"\1[redacted]", text))


class Redact(logging.Filter):
    """On uvicorn's access logger: its record args are (client, method, path with query, version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def install() -> None:
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, Redact) for f in logger.filters):
        logger.addFilter(Redact())
