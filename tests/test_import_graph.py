"""The house's structure, read from the source by ``ast``: rooms, the direction of their imports, no circle.

Rooms, from the top down (a room may import only the rooms below it):

- the entry points ``rfrepro.harness.{cli, multirun, reproduce, reference, report_cli}`` and the package's
  ``__main__``/``report``/``reproduce`` shims: nothing in ``src/`` imports them (``cli`` uses ``multirun``);
- ``rfrepro.harness.report``: outputs, claims, plots, the scorecard, REPORT.md and the site;
- ``rfrepro.harness.run``: config, grids, plans, checks, pools and clusters, the console summary;
- the shared facts of both sides: ``rfrepro.harness.paths`` (results roots, writability, a full
  disk), ``rfrepro.harness.planfile`` (the saved-plan file) and ``rfrepro.harness.catalog`` (the
  config folders and each group's options: which studies exist);
- the computing packages (everything else under ``rfrepro``): they never import ``rfrepro.harness``.

``report`` and ``run`` never import each other: what both need lives in the shared modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rfrepro

SRC = Path(rfrepro.__file__).parent
ENTRY = {"rfrepro.harness.cli", "rfrepro.harness.multirun", "rfrepro.harness.reproduce",
         "rfrepro.harness.reference", "rfrepro.harness.report_cli", "rfrepro.__main__", "rfrepro.report", "rfrepro.reproduce"}
SHARED = {"rfrepro.harness.paths", "rfrepro.harness.planfile", "rfrepro.harness.catalog", "rfrepro.harness"}
#: the rooms in order, top first; a module may import its own room and those after it, except that
#: ``report`` and ``run`` stand side by side (neither imports the other)
ORDER = ("entry", "report", "run", "shared", "computing")


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room(module: str) -> str:
    if module in ENTRY:
        return "entry"
    if module in SHARED:
        return "shared"
    if module.startswith("rfrepro.harness.report"):
        return "report"
    if module.startswith("rfrepro.harness.run"):
        return "run"
    assert not module.startswith("rfrepro.harness."), f"{module} is in no room of the harness"
    return "computing"


def graph() -> dict[str, set[str]]:
    """module -> the modules of ``rfrepro`` it imports (anywhere in its source)."""
    modules = {module_name(p): p for p in SRC.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".") if is_pkg else name.split(".")[:-1]
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                for a in node.names:
                    deps.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
        out[name] = {d for d in deps if d in modules and d != name}
    return out


def test_no_import_runs_back_up_between_rooms():
    upward = []
    for src, deps in graph().items():
        for dst in deps:
            a, b = room(src), room(dst)
            if {a, b} == {"report", "run"} or ORDER.index(b) < ORDER.index(a):
                upward.append(f"{src} ({a}) -> {dst} ({b})")
    assert not upward, "\n".join(sorted(upward))


def test_nothing_imports_an_entry_point():
    importers = [(s, d) for s, deps in graph().items() for d in deps
                 if room(d) == "entry" and s not in ("rfrepro.harness.cli", "rfrepro.__main__", "rfrepro.report",
                                                     "rfrepro.reproduce")]  # the shims and cli -> multirun
    assert not importers


def test_the_package_has_no_import_circle():
    g = graph()
    state: dict[str, int] = {}
    circles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(g[node]):
            if state.get(dep) == 1:
                circles.append(stack[stack.index(dep):] + [dep] if dep in stack else [node, dep])
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node, [node])
    assert not circles, circles


def test_study_code_reads_no_entry_point():
    experiments = SRC.parents[1] / "experiments"
    bad = [p.relative_to(experiments).as_posix() for p in experiments.rglob("*.py")
           if any(f"rfrepro.harness.{m}" in p.read_text() for m in ("reproduce", "reference", "cli", "pools"))]
    assert not bad
