"""The example notebook runs headless from top to bottom in a fresh kernel."""
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "analysis.ipynb"


def test_example_notebook_runs_without_errors(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # Runs in a temp dir so nothing it might write lands in the repository.
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 5  # forest, profile, leaderboard, satiety, wealth
    assert any("scorecards, all equal to the stored ones" in str(o.get("data", {})) for o in outputs)
