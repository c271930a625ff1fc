"""Progress on long work goes to stderr, stdout keeping only what a program reads (a JSON object, a
path): `make realmodel`'s play phase follows each run tick by tick (benchmarks/realmodel.py's wait)."""
from __future__ import annotations

import re
import time

from benchmarks import realmodel
from tests.runs.conftest import local_body


def test_realmodel_shows_each_runs_ticks_while_it_plays(lab, capsys):
    run_id = lab.post("/api/v1/runs", json=local_body(season_ticks=40)).json()["run"]["run_id"]
    views = realmodel.wait_ended(lab, "world run", run_id, time.monotonic() + 120)
    assert views[run_id]["run"]["status"] == "finished"
    said = capsys.readouterr()
    assert said.out == ""
    steps = re.findall(r"^world run: (\d+)/40 ticks \((\w+)\)$", said.err, re.M)
    assert steps and steps[-1] == ("40", "finished")
