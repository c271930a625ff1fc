"""Comments say why; names and the layout do the navigation. No comment or docstring in the house spells
a dotted path into the project's own packages (`orchestrator.runs.lifecycle`, `seats.probe.check`), and
no module docstring runs past ten lines. Code and URLs are not prose and are not read."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ("engine", "orchestrator", "api", "analytics", "benchmarks")
MAX_DOC_LINES = 10
# A dotted run of names not glued to a path, a URL or a longer dotted name on its left.
DOTTED = re.compile(r"(?<![\w./:@-])([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)")
# The last label of a host name: `api.openai.com` is an address, not a module; `python -m engine.x` is a
# command, not a path to follow.
HOSTS = {"com", "org", "net", "io", "ai", "dev", "invalid", "local", "localhost", "internal", "example", "test"}

# Modules whose comments still navigate by dotted path or whose docstring is long; each entry goes when
# its module is clean (the test fails on an entry that no longer finds anything, so the list only shrinks).
PENDING: set[str] = set()


def _children(root: Path) -> dict[str, set[str]]:
    """Each package folder's name mapped to the modules and sub-packages inside it, so `seats.probe` is
    recognised as a path while `row.keys` or `e.g.` is not."""
    kids: dict[str, set[str]] = {}
    for top in (root / t for t in HOUSE if (root / t).is_dir()):
        for folder in [top, *(p for p in top.rglob("*") if p.is_dir())]:
            if folder.name == "__pycache__":
                continue
            names = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir()
                                                                if p.is_dir() and any(p.glob("*.py"))}
            kids.setdefault(folder.name, set()).update(names)
    return kids


def _prose(source: str, path: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and every module, class and function docstring."""
    found = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found.append((first.lineno, first.value.value))
    return found


def findings(path: Path, root: Path, kids: dict[str, set[str]]) -> list[str]:
    source = path.read_text()
    rel = path.relative_to(root).as_posix()
    found = []
    for line, text in _prose(source, rel):
        for m in DOTTED.finditer(text):
            head, rest = m.group(1), m.group(2).split(".")[1:]
            if rest[-1] in HOSTS or text[:m.start()].endswith("-m "):
                continue
            if head in HOUSE or rest[0] in kids.get(head, ()):
                found.append(f"{rel}:{line + text.count(chr(10), 0, m.start())} dotted path: {m.group(0)}")
    doc = ast.get_docstring(ast.parse(source, rel))
    if doc and len(doc.splitlines()) > MAX_DOC_LINES:
        found.append(f"{rel}:1 module docstring of {len(doc.splitlines())} lines")
    return found


def scan(root: Path) -> dict[str, list[str]]:
    kids = _children(root)
    by_file = {}
    for top in HOUSE:
        for path in sorted((root / top).rglob("*.py")):
            if found := findings(path, root, kids):
                by_file[path.relative_to(root).as_posix()] = found
    return by_file


def test_comments_do_not_navigate_and_module_docstrings_stay_short():
    by_file = scan(ROOT)
    paths = sum(1 for fs in by_file.values() for f in fs if "dotted path" in f)
    long = sum(1 for fs in by_file.values() for f in fs if "module docstring" in f)
    print(f"\n{paths} dotted paths and {long} long module docstrings in {len(by_file)} modules "
          f"({len(PENDING)} pending)")
    outside = [f for rel, fs in sorted(by_file.items()) if rel not in PENDING for f in fs]
    assert not outside, "comments that navigate or module docstrings that run long:\n" + "\n".join(outside)
    assert not PENDING - set(by_file), f"clean now, drop from PENDING: {sorted(PENDING - set(by_file))}"


def test_the_check_finds_what_it_looks_for(tmp_path):
    (tmp_path / "orchestrator" / "seats").mkdir(parents=True)
    (tmp_path / "orchestrator" / "seats" / "probe.py").write_text("")
    bad = tmp_path / "orchestrator" / "bad.py"
    bad.write_text('"""Reads the key.\n\nSee orchestrator.runs.lifecycle for why."""\n'
                   "import orchestrator.seats.probe  # seats.probe.check refuses it\n"
                   "# calls https://api.openai.com/v1 and api.openai.com,\n"
                   "# e.g. row.keys, 1.5 s, python -m engine.x\n"
                   "x = orchestrator.seats.probe\n"
                   "def f():\n    '''Like api.limits.BodyLimit.'''\n")
    long = tmp_path / "orchestrator" / "long.py"
    long.write_text('"""' + "\n".join(f"line {i}" for i in range(11)) + '"""\n')
    (tmp_path / "orchestrator" / "short.py").write_text('"""' + "\n".join(f"line {i}" for i in range(10)) + '"""\n')
    found = scan(tmp_path)
    assert found["orchestrator/bad.py"] == [
        "orchestrator/bad.py:4 dotted path: seats.probe.check",
        "orchestrator/bad.py:3 dotted path: orchestrator.runs.lifecycle",
        "orchestrator/bad.py:9 dotted path: api.limits.BodyLimit"]
    assert found["orchestrator/long.py"] == ["orchestrator/long.py:1 module docstring of 11 lines"]
    assert "orchestrator/short.py" not in found
