"""The head's side of series summaries while it has a dispatcher: a read that finds a series' kept
summary stale asks for the new one here, and one of ACTORS worker actors computes it; this process
only reads the graded seats, hands them over with the match ids, and keeps the text that comes back.
At most one task per series is out, and a series' tasks go to the same actor, which keeps the rows it
read. While a series plays its summary lags on purpose (PLAYING_EVERY_S, PLAYING_GROWTH,
PLAYING_STALE_S): a summary costs a worker about the same whatever the number of runs, so a series
that plays fast is summarised a few times, not once per landed run. One thread starts the tasks and
keeps their results, so neither the event loop nor Ray's threads touch the store on a summary's
account.
"""
# A newer state asked for while a task runs is computed after it (the newest asked, once), and whoever
# asked for an older state gets that newer summary: a series' scored and graded runs only grow, so of
# two states the one with more of both is the newer. A series none of whose runs has ended has nothing
# to compute: its summary is made here, with no task. A final summary (asked for once the series has
# ended) starts as soon as nothing of it is out. One that comes back over fewer matches than the series
# scored (a listing of the archive raced a part's publishing rename, which POSIX lets a directory read
# miss) is asked again, SHORT_RETRY_S apart for SHORT_PATIENCE_S at most, and then fails: whoever waits
# computes it itself rather than answer an ended series with a summary of some of its runs.
from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field

import ray

from analytics.archive.store import Archive
from orchestrator.core import Core
from orchestrator.grading.read import graded_seats
from orchestrator.listeners import Listeners
from orchestrator.runs.series import summaries
from orchestrator.runs.series.summary_task import Summaries
from orchestrator.runs.series.summary_text import Kept, nothing_scored
from orchestrator.workers import cause

log = logging.getLogger("studio.summaries")
PLAYING_EVERY_S = 2.0
PLAYING_GROWTH = 0.5  # while a series plays, its next summary waits for half as many runs again...
PLAYING_STALE_S = 10.0  # ...or for this long after the last one
SHORT_RETRY_S = 0.25
SHORT_PATIENCE_S = 5.0
ACTORS = 2  # summaries computed at once, each by its own actor
SERIES_KEPT = 4096  # series whose last summary (its size, when, which actor) is remembered


class Stopped(RuntimeError):
    """The dispatcher stopped before the summary came back."""


class Short(RuntimeError):
    """An ended series' summary kept coming back over fewer matches than it scored."""


@dataclass
class Ask:
    """One summary to compute: the series' scored and graded match ids, and who waits for it."""
    scored: tuple[str, ...]
    graded: tuple[str, ...]
    final: bool = False  # the series has ended: nobody has the summary of its last state yet
    done: Future = field(default_factory=Future)
    not_before: float = 0.0  # (monotonic) a short final summary's next try
    first: float | None = None  # (monotonic) when its first task started

    def __post_init__(self) -> None:
        # running from the start: a waiter that gives up (cancels its wrapper) cannot cancel it for the others
        self.done.set_running_or_notify_cancel()

    def covers(self, scored, graded) -> bool:
        return len(self.scored) >= len(scored) and len(self.graded) >= len(graded)

    @property
    def size(self) -> int:
        return len(self.scored) + len(self.graded)


@dataclass
class Slot:
    running: Ask | None = None
    wanted: Ask | None = None  # starts when nothing is out and it is due
    not_before: float = 0.0    # (monotonic) when a playing series' next task is due


@dataclass
class Last:
    """A series' last kept summary: its size (Ask.size), when it came back (monotonic), and the actor
    that computed it, which holds the series' seat rows (None: made here)."""
    size: int
    at: float
    actor: int | None


class Summarizer:
    def __init__(self, core: Core, archive: Archive):
        self.core = core
        # the workers open the archive themselves: a local one by its absolute path
        self.uri = str(archive.local_root) if archive.local_root is not None else archive.uri
        self._slots: dict[str, Slot] = {}
        self._lock = threading.Lock()
        self._events: queue.SimpleQueue = queue.SimpleQueue()
        self._listeners = Listeners("kept summaries")
        self._stopped = False
        self._actors: list = []
        self._out: dict[int, int] = {}  # tasks out per actor (by its index)
        self._turn = 0
        self._last: OrderedDict[str, Last] = OrderedDict()  # only the summarizer's thread touches it
        self._thread = threading.Thread(target=self._loop, name="studio-summaries", daemon=True)
        self._thread.start()

    def ask(self, batch_id: str, scored, graded, final: bool = False) -> Future:
        """A future of the series' summary over at least these scored and graded matches (a Kept); it
        fails when the task did (the caller computes it itself then). final: the series has ended."""
        scored, graded = tuple(scored), tuple(graded)
        with self._lock:
            if self._stopped:
                ask = Ask(scored, graded)
                ask.done.set_exception(Stopped("the dispatcher stopped"))
                return ask.done
            slot = self._slots.setdefault(batch_id, Slot())
            if slot.running is not None and slot.running.covers(scored, graded):
                return slot.running.done
            if slot.wanted is None:
                slot.wanted = Ask(scored, graded, final)
            elif not slot.wanted.covers(scored, graded):
                slot.wanted.scored, slot.wanted.graded = scored, graded  # its waiters take the newer one
            slot.wanted.final |= final
            done = slot.wanted.done
        self._events.put(("due", batch_id, None, None))
        return done

    def listening(self, heard):
        """heard(batch_id) is called, on this summarizer's thread, each time a summary is kept; it must
        return at once."""
        return self._listeners.listening(heard)

    def stop(self) -> None:
        """Tasks still out are left to finish; whoever waits on them is answered Stopped."""
        with self._lock:
            self._stopped = True
            waiting = [a for s in self._slots.values() for a in (s.running, s.wanted) if a is not None]
            self._slots.clear()
        self._events.put(("stop", None, None, None))
        self._thread.join(timeout=10)
        for actor in self._actors:
            ray.kill(actor)
        for ask in waiting:
            if not ask.done.done():
                ask.done.set_exception(Stopped("the dispatcher stopped"))

    # -- the thread ------------------------------------------------------------------------------
    def _loop(self) -> None:
        wait = None
        while True:
            try:
                what, batch_id, ask, result = self._events.get(timeout=wait)
            except queue.Empty:
                what = None
            if what == "stop":
                return
            if what == "back":
                again = False
                try:
                    again = self._back(batch_id, ask, result)
                except Exception as e:  # one series' fault never stops the others' summaries
                    log.exception("series %s: keeping its summary failed", batch_id)
                    if not ask.done.done():
                        ask.done.set_exception(e)
                if again:
                    self._again(batch_id, ask)
                else:
                    self._next(batch_id, ask)
            wait = self._start_due()

    def _start_due(self) -> float | None:
        """Starts every wanted summary that is due; returns how long until the next one is."""
        now, due, soonest = time.monotonic(), [], None
        with self._lock:
            for batch_id, slot in list(self._slots.items()):
                if slot.running is not None:
                    continue
                if slot.wanted is None:
                    if slot.not_before <= now:
                        del self._slots[batch_id]
                    continue
                at = slot.wanted.not_before if slot.wanted.final else max(slot.not_before,
                                                                          self._grown_at(batch_id, slot.wanted))
                if at <= now:
                    slot.running, slot.wanted = slot.wanted, None
                    due.append((batch_id, slot.running))
                else:
                    soonest = min(soonest or at, at)
        for batch_id, ask in due:
            try:
                self._start(batch_id, ask)
            except Exception as e:
                log.exception("series %s: starting its summary task failed", batch_id)
                ask.done.set_exception(e)
                self._next(batch_id, ask)
        return None if soonest is None else max(0.0, soonest - now)

    def _grown_at(self, batch_id: str, ask: Ask) -> float:
        """When a playing series' summary of this state is due as far as its growth goes (monotonic):
        at once when it grew by PLAYING_GROWTH since the last kept one, else PLAYING_STALE_S after it."""
        last = self._last.get(batch_id)
        if last is None or ask.size >= max(last.size + 1, last.size * (1 + PLAYING_GROWTH)):
            return 0.0
        return last.at + PLAYING_STALE_S

    def _start(self, batch_id: str, ask: Ask) -> None:
        if ask.first is None:
            ask.first = time.monotonic()
        if not self._actors:  # started with the first summary asked for: warm when the first runs end
            self._actors = [Summaries.remote() for _ in range(ACTORS)]
            self._out = dict.fromkeys(range(ACTORS), 0)
        if not ask.size:  # no run has ended: nothing to read, nothing for a worker to compute
            done = Future()
            done.set_result(nothing_scored(batch_id).text)
            self._events.put(("back", batch_id, ask, (None, done)))
            return
        decisions = graded_seats(self.core, list(ask.scored))
        last = self._last.get(batch_id)
        k = last.actor if last is not None and last.actor is not None else self._home()
        self._out[k] += 1
        ref = self._actors[k].summarize.remote(self.uri, batch_id, list(ask.scored), decisions)
        ref.future().add_done_callback(lambda f: self._events.put(("back", batch_id, ask, (k, f))))

    def _back(self, batch_id: str, ask: Ask, back: tuple[int | None, Future]) -> bool:
        """Keeps what came back and answers its waiters; True: a final summary came back short and is
        to be asked again."""
        k, result = back
        if k is not None:
            self._out[k] -= 1
        try:
            text = result.result()
        except Exception as e:
            log.error("series %s: the task computing its summary failed: %s", batch_id, cause(e), exc_info=e)
            ask.done.set_exception(e)
            return False
        kept = Kept(json.loads(text), text)
        if summaries.keep(self.core, batch_id, ask.scored, ask.graded, kept):  # kept before anyone reads it
            self._last.pop(batch_id, None)
            self._last[batch_id] = Last(ask.size, time.monotonic(), k)
            while len(self._last) > SERIES_KEPT:
                self._last.popitem(last=False)
        elif ask.final and kept.summary["matches"] < len(ask.scored):
            if time.monotonic() - ask.first < SHORT_PATIENCE_S:
                return True
            log.error("series %s: its summary read %d of its %d matches for %.0f s", batch_id,
                      kept.summary["matches"], len(ask.scored), SHORT_PATIENCE_S)
            ask.done.set_exception(Short(f"the archive showed {kept.summary['matches']} of the series' "
                                         f"{len(ask.scored)} matches"))
            return False
        ask.done.set_result(kept)
        self._listeners.notify(batch_id)
        return False

    def _again(self, batch_id: str, ask: Ask) -> None:
        """A short final summary is asked again after SHORT_RETRY_S; a newer state asked for meanwhile
        answers its waiters too."""
        with self._lock:
            slot = self._slots.get(batch_id)
            if slot is None or slot.running is not ask:
                return
            slot.running = None
            if slot.wanted is None:
                ask.not_before = time.monotonic() + SHORT_RETRY_S
                slot.wanted = ask
            else:
                slot.wanted.final = True
                slot.wanted.not_before = max(slot.wanted.not_before, time.monotonic() + SHORT_RETRY_S)
                slot.wanted.first = ask.first if slot.wanted.first is None else slot.wanted.first
                _answer_with(ask.done, slot.wanted.done)

    def _home(self) -> int:
        """The actor a series' first task goes to: the least busy one, in turn among equals."""
        self._turn += 1
        return min(self._out, key=lambda k: (self._out[k], (k - self._turn) % ACTORS))

    def _next(self, batch_id: str, ask: Ask) -> None:
        """The series' task is back: the wanted one is due after the pause (at once if final)."""
        with self._lock:
            slot = self._slots.get(batch_id)
            if slot is not None and slot.running is ask:
                slot.running, slot.not_before = None, time.monotonic() + PLAYING_EVERY_S


def _answer_with(waiting: Future, source: Future) -> None:
    """waiting gets source's result (or exception) once it has one."""
    def copy(f: Future) -> None:
        if f.exception() is not None:
            waiting.set_exception(f.exception())
        else:
            waiting.set_result(f.result())
    source.add_done_callback(copy)
