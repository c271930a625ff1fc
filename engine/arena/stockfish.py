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


def grade_engines() -> int:
    """How many grading engines a process opens: STUDIO_GRADE_ENGINES, else one per core it may use."""
    env = os.environ.get("STUDIO_GRADE_ENGINES", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
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

    def evaluate(self, board: chess.Board, nodes: int = GRADE_NODES) -> tuple[int, str | None]:
        """(centipawns from the side to move, capped as lichess caps them; best move in UCI)."""
        score, best = self.score(board, nodes)
        return capped(score), best

    def candidates(self, board: chess.Board, depth: int, multipv: int, nodes: int = PLAY_NODES):
        """[(cp from the side to move, move)] best first, up to multipv lines."""
        infos = self._engine.analyse(board, chess.engine.Limit(depth=depth, nodes=nodes), multipv=multipv,
                                     game=object())
        out = [(cp_of(i["score"], board.turn), i["pv"][0]) for i in infos if i.get("pv")]
        return sorted(out, key=lambda t: -t[0])

    def close(self) -> None:
        try:
            self._engine.quit()
        except (chess.engine.EngineError, OSError):  # already gone: nothing left to close
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Pool:
    """Grading engines, one per core by default: each position goes to whichever engine is free.

    Engines open on first use and stay open for the process's later games (starting one costs about
    as much as grading a position or two). A thread per engine only waits on its engine's pipe, so the
    search itself runs in the Stockfish processes, in parallel; results come back in position order.
    """

    def __init__(self, size: int | None = None):
        self.size = max(1, size or grade_engines())
        self._engines: list[Engine] = []
        self._free: queue.SimpleQueue[Engine] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(self.size, thread_name_prefix="stockfish")

    def _take(self) -> Engine:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                if len(self._engines) < self.size:
                    engine = Engine()
                    self._engines.append(engine)
                    return engine
            return self._free.get()

    def _score(self, board: chess.Board, nodes: int):
        engine = self._take()
        try:
            return engine.score(board, nodes)
        finally:
            self._free.put(engine)

    def scores(self, boards: list[chess.Board], nodes: int = GRADE_NODES) -> list[tuple[chess.engine.Score, str | None]]:
        return list(self._threads.map(lambda b: self._score(b, nodes), boards))

    @property
    def version(self) -> str:
        engine = self._take()
        self._free.put(engine)
        return engine.version

    @property
    def pids(self) -> list[int]:
        """The engine processes' ids (benchmarks read their CPU time)."""
        with self._lock:
            return [e.pid for e in self._engines]

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        with self._lock:
            for e in self._engines:
                e.close()
            self._engines.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
