"""Where a process tree's CPU and memory go, read from /proc (Linux): no instrumentation of the service.

A Sampler walks the tree under one root process (`studio serve`: its Ray, whose raylet starts the
workers, lives below it) every `every` seconds on a thread, and keeps for each process the CPU it
had used when last seen (utime + stime), its title (Ray renames its workers `ray::<Class>.<method>`)
and the tree's summed resident memory (RSS, and PSS, which counts a page shared by several
processes once). A process that exits inside a window keeps the CPU it was last seen with, so at
most one sampling interval of its work is missed.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

TICK = os.sysconf("SC_CLK_TCK")


def stat(path: str) -> tuple[str, int, float] | None:
    """(comm, ppid, CPU seconds) of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat; None once gone."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    comm = text[text.index("(") + 1: text.rindex(")")]
    rest = text[text.rindex(")") + 2:].split()  # from field 3 (state) on
    return comm, int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK


def title(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def kb(pid: int, key: str, file: str = "status") -> int:
    """A field in kB of /proc/<pid>/status (VmRSS, VmHWM) or smaps_rollup (Pss); 0 once gone."""
    try:
        with open(f"/proc/{pid}/{file}") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(root: int) -> list[int]:
    """root and every process below it."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = stat(f"/proc/{name}/stat")
            if s:
                children.setdefault(s[1], []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def threads(pid: int) -> dict[str, float]:
    """CPU seconds of a process's live threads, summed by thread name."""
    out: dict[str, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        s = stat(f"/proc/{pid}/task/{tid}/stat")
        if s:
            out[s[0]] = out.get(s[0], 0.0) + s[2]
    return out


@dataclass
class Proc:
    title: str
    cpu_s: float


def cores(a: Mark, b: Mark) -> float:
    """The tree's CPU use between two marks, in cores."""
    return sum(cpu - a.cpu.get(pid, 0.0) for pid, cpu in b.cpu.items()) / max(b.at - a.at, 1e-9)


@dataclass
class Mark:
    """A point in time: each process's CPU then; the peak of summed RSS since."""
    cpu: dict[int, float]
    at: float
    peak_rss_kb: int = 0
    peak_pss_kb: int = 0  # shared pages (libraries, Ray's object store) counted once, split among sharers


@dataclass
class Sampler:
    root: int
    every: float = 0.25
    procs: dict[int, Proc] = field(default_factory=dict)
    marks: list[Mark] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proc-sampler", daemon=True)

    def sample(self) -> tuple[int, int]:
        """Reads the tree once; its summed RSS and PSS in kB."""
        rss = pss = 0
        seen = {}
        for pid in tree(self.root):
            s = stat(f"/proc/{pid}/stat")
            if s is None:
                continue
            t = title(pid) or s[0]
            if t.startswith("ray::IDLE") and pid in self.procs:  # keep what the worker was last doing
                t = self.procs[pid].title
            seen[pid] = Proc(t, s[2])
            rss += kb(pid, "VmRSS")
            pss += kb(pid, "Pss", "smaps_rollup")
        with self._lock:
            self.procs.update(seen)
            for m in self.marks:
                m.peak_rss_kb = max(m.peak_rss_kb, rss)
                m.peak_pss_kb = max(m.peak_pss_kb, pss)
        return rss, pss

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def start(self) -> Sampler:
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def mark(self, peak: bool = False) -> Mark:
        """peak: follow the summed RSS's peak from now on (until drop)."""
        rss, pss = self.sample()
        with self._lock:
            m = Mark({pid: p.cpu_s for pid, p in self.procs.items()}, time.monotonic(), rss, pss)
            if peak:
                self.marks.append(m)
        return m

    @staticmethod
    def between(a: Mark, b: Mark, titles: dict[int, str]) -> dict[int, Proc]:
        """Each process's CPU from mark a to mark b (a process born after a: all of its CPU to b)."""
        return {pid: Proc(titles.get(pid, ""), cpu - a.cpu.get(pid, 0.0)) for pid, cpu in b.cpu.items()}

    def titles(self) -> dict[int, str]:
        with self._lock:
            return {pid: p.title for pid, p in self.procs.items()}

    def drop(self, mark: Mark) -> None:
        with self._lock:
            self.marks.remove(mark)

    def rss_hwm_kb(self) -> int:
        """The summed VmHWM (each process's own resident peak) of the tree's live processes."""
        return sum(kb(pid, "VmHWM") for pid in tree(self.root))


def cpu_of(pid: int) -> float:
    """The process's CPU seconds so far, every thread (utime + stime)."""
    return stat(f"/proc/{pid}/stat")[2]


def cpu_beyond_idle(pid: int, work, settle: float) -> float:
    """CPU seconds process `pid` spends while `work()` runs, less what it spends with nothing to do.

    The idle work (a dispatcher's passes, a start's last compiles) comes in bursts: the quietest window
    before or after is the floor taken off, so a burst while idling cannot push the figure below zero."""
    before = idle_rates(pid, settle)
    c0, t0 = cpu_of(pid), time.perf_counter()
    work()
    c1, t1 = cpu_of(pid), time.perf_counter()
    idle = min(before + idle_rates(pid, settle))
    return c1 - c0 - idle * (t1 - t0)


def idle_rates(pid: int, seconds: float, windows: int = 4) -> list[float]:
    """The process's CPU seconds per second in `windows` equal windows of `seconds` in all."""
    out = []
    for _ in range(windows):
        c0, t0 = cpu_of(pid), time.perf_counter()
        time.sleep(seconds / windows)
        out.append((cpu_of(pid) - c0) / (time.perf_counter() - t0))
    return out


def machine_cpu_s() -> tuple[float, float]:
    """The machine's busy and idle CPU seconds so far, every core (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / TICK, (v[3] + v[4]) / TICK
