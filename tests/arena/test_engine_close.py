"""A grading engine closes in any process, also one whose asyncio nest_asyncio2 has patched (inspect_ai
patches it when called inside a running loop); there python-chess's quit waited for good."""
import subprocess
import sys

import pytest

from engine.arena import stockfish

CHILD = """
import time, nest_asyncio2
nest_asyncio2.apply()
import chess
from engine.arena.stockfish import Engine
e = Engine()
pid = e._engine.transport.get_pid()
assert e.score(chess.Board(), nodes=500)[1]
t = time.monotonic()
e.close()
print(pid, time.monotonic() - t)
"""


@pytest.mark.skipif(stockfish.path() is None, reason="Stockfish is not installed (make install)")
def test_an_engine_closes_at_once_where_asyncio_is_patched():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    pid, took = out.stdout.split()
    assert float(took) < 5
    ps = subprocess.run(["ps", "-o", "stat=", "-p", pid], capture_output=True, text=True)
    assert ps.stdout.strip() == ""  # the engine is gone, not left running or a zombie
