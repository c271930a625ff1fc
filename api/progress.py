"""Progress of long commands (`studio export`, `studio archive materialize`, `make realmodel`), on
stderr so that it never mixes with what they print on stdout (a path, one JSON object). On a terminal a
rich bar redrawn in place; elsewhere (a pipe, a log file, CI) one plain line per step, at most one per
PLAIN_EVERY_S and always the last, so a log shows the work alive without filling up."""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

PLAIN_EVERY_S = 1.0


class Steps:
    """One piece of work's progress: `update(done, total, note)` as it moves."""

    def __init__(self, console: Console, what: str, unit: str, bar: Progress | None) -> None:
        self.console, self.what, self.unit, self.bar = console, what, unit, bar
        self.task = bar.add_task(what, total=None) if bar is not None else None
        self.done: float = 0
        self.total: float | None = None
        self.note = ""
        self.shown_at = 0.0
        self.shown = ""

    def text(self) -> str:
        amount = f"{_num(self.done)}/{_num(self.total)}" if self.total else _num(self.done)
        return f"{self.what}: {amount}{' ' + self.unit if self.unit else ''}{' (' + self.note + ')' if self.note else ''}"

    def update(self, done: float, total: float | None = None, note: str = "") -> None:
        self.done, self.note = done, note
        if total is not None:
            self.total = total
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=self.total,
                            description=f"{self.what}{' ' + note if note else ''}")
            return
        now = time.monotonic()
        if now - self.shown_at >= PLAIN_EVERY_S or (self.total and done >= self.total):
            self.line()

    def line(self) -> None:
        text = self.text()
        if text != self.shown:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)
            self.shown, self.shown_at = text, time.monotonic()


def _num(x: float | None) -> str:
    return "?" if x is None else f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


@contextmanager
def progress(what: str, unit: str = "") -> Iterator[Steps]:
    """Steps of one piece of work named `what`, counted in `unit`; the last state is shown on leaving."""
    console = Console(stderr=True)
    if not console.is_terminal:
        steps = Steps(console, what, unit, None)
        steps.line()
        try:
            yield steps
        finally:
            steps.line()
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn(unit), TimeElapsedColumn())
    with Progress(*columns, console=console) as bar:
        yield Steps(console, what, unit, bar)
