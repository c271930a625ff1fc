"""Callbacks a thread calls when something happened (a run ended, a summary was kept), registered for
the span of a `with`: how a waiting read learns that it may have something new to say."""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

log = logging.getLogger("studio.listeners")


class Listeners:
    def __init__(self, what: str):
        self.what = what  # named in the log when a listener fails
        self._lock = threading.Lock()
        self._heard: list[Callable] = []

    @contextmanager
    def listening(self, heard: Callable) -> Iterator[None]:
        """heard(...) is called on the notifying thread; it must return at once (set an event,
        schedule a wake-up)."""
        with self._lock:
            self._heard.append(heard)
        try:
            yield
        finally:
            with self._lock:
                self._heard.remove(heard)

    def notify(self, *args) -> None:
        with self._lock:
            heard = list(self._heard)
        for h in heard:
            try:
                h(*args)
            except Exception:  # a listener's fault (its event loop gone) never stops the notifying thread
                log.exception("a listener for %s failed", self.what)
