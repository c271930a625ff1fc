"""Imports flow one way (docs/ARCHITECTURE.md): every module of the house is parsed and each of its
imports, at module level or inside a function, is checked against the layering."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A package may import its own layer and the ones below it, never one above.
LAYERS = {"engine": 0, "analytics": 1, "orchestrator": 2, "api": 3}
# Library code never reaches into the scripts and tests that sit beside it.
OUTSIDE = {"tests", "benchmarks", "examples"}
# A floor imports nothing of the house but the names it lists. The control-plane store (its repositories
# and the records they return) is the floor of
# the core: every other orchestrator module builds on it. The archive package is the floor the service
# writes through and analytics reads through (the one writer below the orchestrator): engine only.
FLOOR = {"orchestrator.store": ("orchestrator.store", "orchestrator.records", "orchestrator.finite",
                                 "orchestrator.statuses", "orchestrator.provider_kinds", "orchestrator.ids"),
         "orchestrator.records": ("orchestrator.records", "orchestrator.finite", "orchestrator.statuses",
                                   "orchestrator.provider_kinds"),
         "analytics.archive": ("analytics.archive", "engine")}
# The console script is a transport nothing imports: create_app never loads the command line.
TOP = "api.cli"
# The levels inside a package, highest first: each of its modules and sub-packages stands on one level
# and imports only from the levels below its own (a lazy import too), so no two of them import each
# other, directly or through others. A new module or package is placed here by whoever adds it.
LEVELS = {
    "orchestrator": (
        ("runs",),                                      # the run service, its head and its reads
        ("admin", "listing", "sample", "workers", "bundles"),  # operator commands; the Ray actors that play; bundles' check
        ("play", "bootstrap", "console_auth", "doctor", "me", "scenarios", "skills"),
        ("agents", "auth"),
        ("seats", "outbox"),
        ("grading", "accounts", "mail"),
        ("core", "envspec", "actors"),
        ("archive_config", "egress", "ratelimit", "validation"),
        ("clock", "datadir", "errors", "lastused", "listeners", "plans", "reaper"),
        ("store",),                                     # every SQL statement, the repositories
        ("records", "ids"),                             # the typed records the rules take and return
        ("finite", "statuses", "provider_kinds"),                                    # what a number from outside may be
    ),
    "orchestrator.runs": (
        ("exports",),
        ("inspect_log", "bundle"),
        ("agent_turns", "pages"),                       # the owner's reads of one run, through service.run_row
        ("service", "usage"),
        ("admission", "head"),
        ("analysis", "series"),
        ("kinds", "lifecycle", "views"),
        ("match_log",),
    ),
}
# Imports against the levels that another branch of the same change removes, each with why; the test
# fails once one is gone, so the entry goes with it.
PENDING: dict[tuple[str, str], str] = {}


def _parse(path: Path) -> ast.Module:
    """The file's syntax tree. CPython 3.11 can raise "AST constructor recursion depth mismatch" for a
    well-formed file when the interpreter's stack is deep at the call (seen once in a whole-suite run);
    parsing again from here gives the tree."""
    source = path.read_text()
    try:
        return ast.parse(source, str(path))
    except SystemError:
        return ast.parse(source, str(path))


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations(root: Path) -> list[str]:
    """Every import in root's packages that points against the layering, as 'file:line a -> b'."""
    bad = []
    for top, layer in LAYERS.items():
        for path in sorted((root / top).rglob("*.py")):
            module = _module(path, root)
            floor = next((f for f in FLOOR if _under(module, [f])), None)
            for line, target in _imports(path, module):
                head = target.split(".")[0]
                where = f"{path.relative_to(root)}:{line} {module} -> {target}"
                if head in LAYERS and LAYERS[head] > layer:
                    bad.append(where + f" ({top} sits below {head})")
                elif head in OUTSIDE:
                    bad.append(where + f" (library code imports {head})")
                elif floor is not None and head in LAYERS and not _under(target, FLOOR[floor]):
                    bad.append(where + f" ({floor} is a floor: it imports {', '.join(FLOOR[floor]) or 'nothing of the house'})")
                elif (target == TOP or target.startswith(TOP + ".")) and module != TOP:
                    bad.append(where + " (nothing imports the console script)")
    return bad


def test_every_import_follows_the_layering():
    assert violations(ROOT) == []


def test_the_walk_sees_upward_and_lazy_imports(tmp_path):
    for top in LAYERS:
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text("")
    (tmp_path / "analytics" / "data.py").write_text("from orchestrator.runs.archiving import export\n")
    (tmp_path / "analytics" / "archive").mkdir()
    (tmp_path / "analytics" / "archive" / "__init__.py").write_text("")
    (tmp_path / "analytics" / "archive" / "format.py").write_text("from engine.events import COLUMNS\nfrom . import layout\n")
    (tmp_path / "analytics" / "archive" / "store.py").write_text("from analytics.archive import format\n"
                                                                 "def sweep():\n    from analytics.data import DataDir\n")
    (tmp_path / "orchestrator" / "cli.py").write_text("def serve():\n    from api.serve import serve\n")
    (tmp_path / "orchestrator" / "store.py").write_text("from orchestrator.runs import schema\n")
    (tmp_path / "api" / "ok.py").write_text("from orchestrator import store\nfrom . import ok\nimport engine\n")
    (tmp_path / "api" / "app.py").write_text("def run():\n    from api.cli import main\n")
    found = violations(tmp_path)
    assert len(found) == 5, found
    assert any("api/app.py:2" in v for v in found)
    assert any("analytics/data.py:1" in v for v in found)
    assert any("orchestrator/cli.py:2" in v for v in found)
    assert any("orchestrator/store.py:1" in v for v in found)
    assert any("analytics/archive/store.py:3" in v for v in found)


def _resolve(target: str, modules: set[str]) -> str | None:
    """The house module an import names: `from a.b import c` is module a.b.c when that exists, else a.b."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _targets(path: Path, module: str) -> list[str]:
    """What each import names, down to `from package import module` naming the module."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            found += [f"{base}.{a.name}" for a in node.names]
    return found


def circles(root: Path) -> list[list[str]]:
    """Every set of house modules that import each other in a ring (imports inside functions count:
    a lazy import only hides a circle from the interpreter, not from the reader). Package __init__
    modules re-export their children, so an arrow into a package's own child is not a ring."""
    paths = {_module(p, root): p for top in LAYERS for p in (root / top).rglob("*.py")}
    modules = set(paths)
    arrows = {m: set() for m in modules}
    for m, p in paths.items():
        for target in _targets(p, m):
            t = _resolve(target, modules)
            if t and t != m and not t.startswith(m + ".") and not m.startswith(t + "."):
                arrows[m].add(t)
    # Tarjan's strongly connected components, iteratively (the house is deep enough for recursion limits)
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(arrows[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(arrows[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    ring = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        ring.append(w)
                        if w == v:
                            break
                    if len(ring) > 1:
                        out.append(sorted(ring))
    return out


def test_no_module_imports_itself_through_others():
    assert circles(ROOT) == []


def test_the_walk_finds_lazy_circles(tmp_path):
    for top in LAYERS:
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text("")
    (tmp_path / "engine" / "a.py").write_text("from engine.b import x\n")
    (tmp_path / "engine" / "b.py").write_text("def f():\n    from engine import c\n")
    (tmp_path / "engine" / "c.py").write_text("import engine.a\n")
    (tmp_path / "engine" / "d.py").write_text("from engine.a import y\n")
    assert circles(tmp_path) == [["engine.a", "engine.b", "engine.c"]]


def _children(root: Path, package: str) -> set[str]:
    folder = root / package.replace(".", "/")
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"} | \
        {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}


def level_violations(root: Path, levels: dict = LEVELS) -> list[str]:
    """Every import between two parts of a package in `levels` that does not point to a lower level,
    as 'file:line a -> b (why)'; and every part of such a package that no level names."""
    paths = {_module(p, root): p for top in LAYERS for p in (root / top).rglob("*.py")}
    modules, bad = set(paths), []
    for package, tiers in levels.items():
        rank = {part: k for k, tier in enumerate(tiers) for part in tier}
        for part in sorted(_children(root, package) - set(rank)):
            bad.append(f"{package}.{part} stands on no level of {package}")

        def part_of(module: str) -> str | None:
            return module[len(package) + 1:].split(".")[0] if module.startswith(package + ".") else None

        for module, path in sorted(paths.items()):
            source = part_of(module)
            if source not in rank:
                continue
            lines = dict((t, line) for line, t in _imports(path, module))
            for target in _targets(path, module):
                found = _resolve(target, modules)
                dest = part_of(found) if found else None
                if dest is None or dest == source or dest not in rank or rank[dest] > rank[source]:
                    continue
                line = lines.get(target.rpartition(".")[0], lines.get(target, "?"))
                how = "the same level" if rank[dest] == rank[source] else "a higher level"
                bad.append(f"{path.relative_to(root)}:{line} {package}.{source} -> {package}.{dest} ({how})")
    return list(dict.fromkeys(bad))  # two names of one import are one finding


def _pending(found: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The violations that PENDING does not excuse, and the PENDING entries no violation needs."""
    left = [v for v in found if not any(f" {a} -> {b} " in v for a, b in PENDING)]
    stale = [(a, b) for a, b in PENDING if not any(f" {a} -> {b} " in v for v in found)]
    return left, stale


def test_every_part_of_orchestrator_imports_only_from_the_levels_below_it():
    left, stale = _pending(level_violations(ROOT))
    assert left == []
    assert stale == [], "these imports are gone: remove their PENDING entries"


def test_the_levels_see_lazy_same_level_and_unplaced_imports(tmp_path):
    for top in LAYERS:
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text("")
    (tmp_path / "orchestrator" / "deep").mkdir()
    (tmp_path / "orchestrator" / "deep" / "__init__.py").write_text("")
    (tmp_path / "orchestrator" / "deep" / "low.py").write_text("def f():\n    from orchestrator import high\n")
    (tmp_path / "orchestrator" / "high.py").write_text("from orchestrator.deep import low\nfrom orchestrator import side\n")
    (tmp_path / "orchestrator" / "side.py").write_text("import orchestrator.floor\n")
    (tmp_path / "orchestrator" / "floor.py").write_text("")
    (tmp_path / "orchestrator" / "stray.py").write_text("")
    levels = {"orchestrator": (("high", "side"), ("deep",), ("floor",))}
    found = level_violations(tmp_path, levels)
    assert len(found) == 3, found
    assert any("orchestrator/deep/low.py:2 orchestrator.deep -> orchestrator.high (a higher level)" in v for v in found)
    assert any("orchestrator/high.py:2 orchestrator.high -> orchestrator.side (the same level)" in v for v in found)
    assert any("orchestrator.stray stands on no level" in v for v in found)
