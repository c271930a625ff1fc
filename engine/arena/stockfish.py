"""Stockfish over UCI (python-chess drives it): the chess oracle and the local/stockfish-N seats.

Deterministic by construction: one thread, a fixed hash size, a node (or depth) limit, and a new
game (`ucinewgame`, which clears the hash) before every position, so a position's evaluation never
depends on what was searched before it, nor on which engine process searched it. That is what lets
a `Pool` grade a game's positions on every core and still give the same grades.
"""
from __future__ import annotations

import os
import queue
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import chess
import chess.engine

INSTALL_LINE = "apt-get install -y stockfish"
GRADE_NODES = 100_000
PLAY_NODES = 200_000  # a cap for the scripted levels, whose depth limit usually stops them first
MATE_CP = 1000


class StockfishMissing(RuntimeError):
    pass


def path() -> str | None:
    """STUDIO_STOCKFISH, else Debian's /usr/games/stockfish, else `stockfish` on PATH."""
    env = os.environ.get("STUDIO_STOCKFISH")
    if env:
        return env if os.access(env, os.X_OK) else None
    if os.access("/usr/games/stockfish", os.X_OK):
        return "/usr/games/stockfish"
    return shutil.which("stockfish")


def available() -> bool:
    return path() is not None


def unavailable_message() -> str:
    return f"chess needs Stockfish: install it with `{INSTALL_LINE}` (or set STUDIO_STOCKFISH to its path)"


def fixed_grade_engines() -> int | None:
    """STUDIO_GRADE_ENGINES: how many grading engines a process keeps, when set."""
    env = os.environ.get("STUDIO_GRADE_ENGINES", "")
    return int(env) if env.isdigit() and int(env) > 0 else None


def grade_engines() -> int:
    """The most grading engines a process opens: STUDIO_GRADE_ENGINES, else one per core it may use."""
    return fixed_grade_engines() or cores()


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def cp_of(score: chess.engine.PovScore, color: chess.Color) -> int:
    """Centipawns from `color`'s side; mates count as +-1000, everything capped there."""
    return capped(score.pov(color))


def capped(score: chess.engine.Score) -> int:
    """lichess's view of a score: centipawns capped at +-1000, a mate counted as the cap."""
    if score.is_mate():
        return MATE_CP if score > chess.engine.Cp(0) else -MATE_CP
    return max(-MATE_CP, min(MATE_CP, score.score()))


class Engine:
    """One Stockfish process; open one per worker and reuse it for every game it grades."""

    def __init__(self):
        exe = path()
        if exe is None:
            raise StockfishMissing(unavailable_message())
        self._engine = chess.engine.SimpleEngine.popen_uci(exe)
        self._engine.configure({"Threads": 1, "Hash": 16})
        self.name = self._engine.id.get("name", "Stockfish")

    @property
    def pid(self) -> int:
        """The engine process's id (benchmarks read its CPU time)."""
        return self._engine.transport.get_pid()

    @property
    def version(self) -> str:
        return self.name.split(" ", 1)[1] if " " in self.name else ""

    def score(self, board: chess.Board, nodes: int = GRADE_NODES) -> tuple[chess.engine.Score, str | None]:
        """(the engine's score from the side to move, uncapped, mates as mates; its best move in UCI)
        of a position that is not over. The board's move stack goes along: repetitions count."""
        info = self._engine.analyse(board, chess.engine.Limit(nodes=nodes), game=object())
        pv = info.get("pv") or []
        return info["score"].pov(board.turn), (pv[0].uci() if pv else None)

    def scores(self, boards: list[chess.Board], nodes: int = GRADE_NODES) -> list[tuple[chess.engine.Score, str | None]]:
        return [self.score(b, nodes) for b in boards]

    def candidates(self, board: chess.Board, depth: int, multipv: int, nodes: int = PLAY_NODES):
        """[(cp from the side to move, move)] best first, up to multipv lines."""
        infos = self._engine.analyse(board, chess.engine.Limit(depth=depth, nodes=nodes), multipv=multipv,
                                     game=object())
        out = [(cp_of(i["score"], board.turn), i["pv"][0]) for i in infos if i.get("pv")]
        return sorted(out, key=lambda t: -t[0])

    def close(self) -> None:
        # close, not quit: quit waits for the child's exit through python-chess's event loop thread,
        # and in a process whose asyncio nest_asyncio2 has patched (inspect_ai does so when it is called
        # inside a running loop: a notebook, Playwright's sync API) that wait never ended and the
        # process hung; close ends the pipe and the engine at once, and an engine keeps no state
        try:
            self._engine.close()
        except (chess.engine.EngineError, OSError):  # already gone: nothing left to close
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Pool:
    """Grading engines, each position sent to whichever engine is free; results in position order.

    A size given (here or in STUDIO_GRADE_ENGINES) is kept: that many engines, opened on first use and
    kept for the process's later games. Without one, a grading uses one engine per core that is idle
    at the time (the cores less the 1-minute load average, this process's own share counted back) and
    closes the extra engines when it is done: a worker among many busy ones grades on one engine as
    before and holds no idle processes, a lone game takes every core. A thread per engine only waits
    on its pipe; the search runs in the Stockfish processes.
    """

    def __init__(self, size: int | None = None):
        self.fixed = size is not None or fixed_grade_engines() is not None
        self.size = max(1, size or grade_engines())
        self._engines: list[Engine] = []
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(self.size, thread_name_prefix="stockfish")

    def _wanted(self, positions: int) -> int:
        if self.fixed:
            return min(self.size, positions)
        idle = int(cores() - os.getloadavg()[0] + 1)
        return max(1, min(self.size, positions, idle))

    def _open(self, n: int) -> list[Engine]:
        """The first n engines, opening the missing ones side by side."""
        missing = n - len(self._engines)
        if missing > 0:
            self._engines += list(self._threads.map(lambda _: Engine(), range(missing)))
        return self._engines[:n]

    def start(self) -> None:
        """Open every engine now rather than on first use."""
        with self._lock:
            self._open(self.size)

    def scores(self, boards: list[chess.Board], nodes: int = GRADE_NODES) -> list[tuple[chess.engine.Score, str | None]]:
        with self._lock:
            free: queue.SimpleQueue[Engine] = queue.SimpleQueue()
            for engine in self._open(self._wanted(len(boards))):
                free.put(engine)

            def one(board: chess.Board):
                engine = free.get()
                try:
                    return engine.score(board, nodes)
                finally:
                    free.put(engine)
            try:
                return list(self._threads.map(one, boards))
            finally:
                if not self.fixed:
                    self._close(self._engines[1:])
                    del self._engines[1:]

    @property
    def version(self) -> str:
        with self._lock:
            return self._open(1)[0].version

    @property
    def pids(self) -> list[int]:
        """The open engine processes' ids (benchmarks read their CPU time)."""
        return [e.pid for e in self._engines]

    @staticmethod
    def _close(engines: list[Engine]) -> None:
        for e in engines:
            e.close()

    def close(self) -> None:
        with self._lock:
            self._threads.shutdown(wait=True)
            self._close(self._engines)
            self._engines.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
