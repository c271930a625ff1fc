"""The benchmarks' CPU figures (benchmarks/heads.py's head per run) take the process's idle work off what
they measured: a burst of idle work (a head's start still compiling) in the idle window must not turn the
figure negative, as a 1-second window once did on a loaded machine (-2 ms per run)."""
from __future__ import annotations

import subprocess
import sys

from benchmarks.lib.procs import cpu_beyond_idle

# burns the CPU seconds it reads from each stdin line, answers "done", and otherwise sleeps
BURNER = """
import sys, time
for line in sys.stdin:
    end = time.process_time() + float(line)
    while time.process_time() < end:
        pass
    print("done", flush=True)
"""


def test_a_burst_while_idling_is_not_taken_off_the_work():
    p = subprocess.Popen([sys.executable, "-c", BURNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def burn(seconds: float) -> None:
        p.stdin.write(f"{seconds}\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == "done"

    try:
        p.stdin.write("0.6\n")  # the burst: still burning while the idle windows before the work begin
        p.stdin.flush()
        used = cpu_beyond_idle(p.pid, lambda: (p.stdout.readline(), burn(0.4)), settle=1.6)
    finally:
        p.kill()
        p.wait()
    # the work burned 0.4 CPU-s (the burst's rest may land in it too); /proc counts in 10 ms ticks
    assert 0.35 <= used <= 1.05, used
