"""Stockfish over UCI (python-chess drives it): the chess oracle and the local/stockfish-N seats.

Deterministic by construction: one thread, a fixed hash size, a node (or depth) limit, and a new
game (`ucinewgame`, which clears the hash) before every position, so a position's evaluation never
depends on what was searched before it.
"""
from __future__ import annotations

import os
import shutil

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


def cp_of(score: chess.engine.PovScore, color: chess.Color) -> int:
    """Centipawns from `color`'s side; mates count as +-1000, everything capped there."""
    s = score.pov(color)
    if s.is_mate():
        return MATE_CP if s.mate() > 0 else -MATE_CP
    return max(-MATE_CP, min(MATE_CP, s.score()))


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

    def evaluate(self, board: chess.Board, nodes: int = GRADE_NODES) -> tuple[int, str | None]:
        """(centipawns from the side to move, best move in UCI) of a position that is not over."""
        info = self._engine.analyse(board, chess.engine.Limit(nodes=nodes), game=object())
        pv = info.get("pv") or []
        return cp_of(info["score"], board.turn), (pv[0].uci() if pv else None)

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
