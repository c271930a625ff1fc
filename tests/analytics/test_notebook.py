"""The example notebook runs headless from top to bottom in a fresh kernel."""
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from analytics import choice

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "analysis.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory, mixed_dir):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # Runs in a temp dir so nothing it might write lands in the repository. Its last part reads the
    # service's data dir as `make notebook` names it: here one holding a world series and Connect Four.
    path = tmp_path_factory.mktemp("notebook")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("STUDIO_DATA_DIR", str(mixed_dir))
        NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path)}}).execute()
    return nb


def test_example_notebook_runs_without_errors(executed):
    outputs = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 5  # forest, profile, leaderboard, satiety, wealth
    assert any("scorecards, all equal to the stored ones" in str(o.get("data", {})) for o in outputs)


def test_notebook_reads_the_service_data_dir_one_leaderboard_per_game(executed):
    """A data dir holding several games: a board each, where one board over all of them is refused."""
    shown = " ".join(str(o.get("data", {})) + str(o.get("text", "")) for c in executed.cells if c.cell_type == "code"
                     for o in c.outputs)
    assert "Leaderboard, world" in shown and "Leaderboard, arena:connect-four" in shown
    assert "local/solver" in shown and "STUDIO_DATA_DIR does not name" not in shown


def test_notebook_states_the_interval_methods_the_summary_uses(executed):
    """Its text named "Student t below 30 trials, BCa from 30" while summaries use CHOICE's bounded methods:
    the method list is now printed from analytics.choice.CHOICE, and the summary table shows each method."""
    prose = " ".join(c.source for c in executed.cells if c.cell_type == "markdown")
    assert "Student t below 30" not in prose and "its t interval" not in prose
    shown = [str(o.get("data", {})) for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert any(choice.choice_text("fitness_index") in s for s in shown)
    # the series play 12 seeds: the summary's fitness intervals are CHOICE's 12-trial method
    twelve = choice.METHOD_NAMES[choice.method_for("fitness_index", 12)]
    assert any(twelve in s and "interval" in s for s in shown)
