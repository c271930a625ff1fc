"""Tokens' last-used times, written best-effort on a thread of their own.

A request only notes the time in memory; the write happens off the request path, so a held write
lock or a full disk delays the figure, never the request. A failed write is retried; the figure the
console shows lags the truth by at most the resolution plus the retry delay (well under a minute
while the store takes writes).
"""
from __future__ import annotations

import logging
import threading

from orchestrator.store import StoreError, tokens

log = logging.getLogger("studio.lastused")
RESOLUTION_MS = 30_000  # a token's time is rewritten at most this often
RETRY_S = 5.0


class LastUsed:
    def __init__(self, store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # a caller's flush waits for the thread's write in progress
        self._pending: dict[str, int] = {}   # token id -> newest time not yet written
        self._noted: dict[str, int] = {}     # token id -> last time handed to the writer
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()  # the running thread's own: set, it ends after its next write

    def note(self, token_id: str, stored_ms: int | None, now_ms: int) -> None:
        """Record a use at now_ms when the stored (or already noted) time is older than the resolution."""
        with self._lock:
            last = max(stored_ms or 0, self._noted.get(token_id, 0))
            seen = stored_ms is not None or token_id in self._noted
            if seen and now_ms - last < RESOLUTION_MS:
                return
            self._noted[token_id] = now_ms
            self._pending[token_id] = now_ms
            if self._thread is None:
                self._done = threading.Event()
                self._thread = threading.Thread(target=self._run, args=(self._done,), name="studio-last-used",
                                                daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Write what is pending once more and end the thread: a stopped service must leave no writer
        retrying against a store that may be gone (a dropped database, a removed data dir)."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._done.set()
        self._wake.set()
        if thread is not None:
            thread.join(timeout_s)

    def flush(self) -> bool:
        """Write what is pending now; False when the store refused (kept for the next try)."""
        with self._writing:
            return self._write()

    def _write(self) -> bool:
        with self._lock:
            due, self._pending = self._pending, {}
        if not due:
            return True
        try:
            with self.store.write() as c:
                tokens.note_used(c, due)
            return True
        except StoreError as e:
            log.warning("could not record tokens' last use (%s); retrying in %.0f s", e, RETRY_S)
            with self._lock:
                for tid, ms in due.items():
                    self._pending[tid] = max(ms, self._pending.get(tid, 0))
            return False

    def _run(self, done: threading.Event) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            written = self.flush()
            if done.is_set():
                return
            if not written:
                self._wake.wait(RETRY_S)  # a new use wakes it early; it then retries everything
                self._wake.set()
