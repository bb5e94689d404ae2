"""A run's code identity: the source of exactly the modules the run can execute.

The code a run executes starts from a few roots:

- the run's own steps (:data:`ROOTS`: loading the data, fitting the map,
  training the model, the metrics: :mod:`rfrepro.runner.steps` and what it imports);
- the ``_target_`` classes of its method and model (a map or model outside
  ``rfrepro``, importable on ``sys.path``, counts the same way);
- the steps a run takes only when its config asks for them (:data:`CONDITIONAL`:
  cross-validation of sigma and lambda).

From the roots the import closure is followed statically, from the source
(``ast``; nothing is imported, so no import side effect runs): every
``import`` / ``from ... import`` in a module, function-level ones included,
whose module belongs to ``rfrepro`` or to a root's own top-level package.
Third-party packages are not followed (their versions are in each record's
``env``). A package ``__init__`` that only re-exports names of its
submodules is not pulled in by ``from package import Name``: the name is
followed to the submodule that defines it, so adding a sibling module, or
editing a map a run does not use, changes no other run's identity. Importing
a submodule does not pull in its parent package's ``__init__`` either (it
defines names; it computes nothing).

Each module of the closure is identified by its git blob id (sha1 of
``"blob <size>\\0" + bytes``), the same id ``git ls-tree`` prints, so the code
of a reference made at a commit can be compared with today's files without
re-running it. The run's code version is
``<package version>+src.<sha256 of the sorted (path, blob) list, first 12 hex>``.

Record keeping is not in a run's code: where a record goes, how it is
identified, locked and stored (:mod:`rfrepro.runner.record`, ``store``,
``identity``, this module) decides no number of it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from importlib import machinery, metadata
from pathlib import Path

#: the modules every run executes: its steps (data, map, model, metrics), from which the closure starts
ROOTS = ("rfrepro.runner.steps",)
#: modules a run executes only when its config asks for them: module -> predicate on the config.
#: The closure walk never enters one of these unless the run's predicate holds.
CONDITIONAL = {
    "rfrepro.runner.cv": lambda cfg: bool((cfg.get("cv") or {}).get("enabled")),
}
#: bumped when the identity scheme changes (it is part of every digest)
SCHEME = 2
#: the project's own top-level package
PACKAGE = "rfrepro"


@dataclass(frozen=True)
class Code:
    """The code a run can execute: per module path its git blob id, and the version string."""

    version: str
    modules: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, str]:
        return dict(self.modules)


def blob_id(data: bytes) -> str:
    """git's blob id of ``data`` (what ``git hash-object`` and ``git ls-tree`` print)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@functools.cache
def _locate(name: str) -> tuple[Path, bool, str] | None:
    """(file, is_package, path relative to its sys.path entry) of module ``name``, without importing it."""
    parts = name.split(".")
    spec = machinery.PathFinder.find_spec(parts[0])
    for i in range(1, len(parts)):
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = machinery.PathFinder.find_spec(".".join(parts[: i + 1]), list(spec.submodule_search_locations))
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    path = Path(spec.origin)
    is_pkg = spec.submodule_search_locations is not None
    rel = "/".join(parts) + ("/__init__.py" if is_pkg else ".py")
    return path, is_pkg, rel


@functools.cache
def _parse(path: Path, mtime_ns: int) -> ast.Module:
    return ast.parse(path.read_bytes(), filename=str(path))


def _tree(path: Path) -> ast.Module:
    return _parse(path, path.stat().st_mtime_ns)


def _absolute(module: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _reexports(name: str) -> dict[str, str] | None:
    """For a package whose ``__init__`` only re-exports: its names -> the module each comes from; else None.

    Only re-exporting: every top-level statement is the docstring, an import,
    or an assignment to ``__all__``.
    """
    found = _locate(name)
    if found is None or not found[1]:
        return None
    path, _, _ = found
    table: dict[str, str] = {}
    for stmt in _tree(path).body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if all(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                continue
            return None
        if isinstance(stmt, ast.ImportFrom):
            src = _absolute(name, True, stmt)
            for alias in stmt.names:
                table[alias.asname or alias.name] = src
            continue
        if isinstance(stmt, ast.Import):
            continue
        return None
    return table


def _imports(name: str) -> set[str]:
    """The modules ``name``'s source imports (anywhere in it), as absolute module names."""
    found = _locate(name)
    if found is None:
        return set()
    path, is_pkg, _ = found
    out: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = _absolute(name, is_pkg, node)
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                out.add(sub if _locate(sub) is not None else _through(mod, alias.name))
    return out


def _through(package: str, attr: str, depth: int = 0) -> str:
    """The module that defines ``attr`` of ``package`` (through re-exporting ``__init__`` files)."""
    table = _reexports(package)
    if table is None or attr not in table or depth > 8:
        return package
    src = table[attr]
    sub = f"{src}.{attr}"
    if _locate(sub) is not None:
        return sub
    return _through(src, attr, depth + 1) if _reexports(src) is not None else src


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _installed(top: str) -> str | None:
    """``<distribution>==<version>`` when ``top`` is an installed package other than ours, else None."""
    dists = _distributions().get(top)
    if top == PACKAGE or not dists:
        return None
    try:
        return f"{dists[0]}=={metadata.version(dists[0])}"
    except metadata.PackageNotFoundError:
        return None


def closure(roots: tuple[str, ...], *, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """Module path -> git blob id of every module the ``roots`` can execute (see the module docstring).

    Followed: modules of ``rfrepro`` and of each root's own top-level package
    (a user's map on ``sys.path``); never entered: the modules in ``skip``. A
    root in an installed third-party distribution (``sklearn.preprocessing``)
    is identified by that distribution's name and version instead of its source.
    """
    out: dict[str, str] = {}
    packages = {PACKAGE}
    for root in roots:
        top = root.split(".", 1)[0]
        installed = _installed(top)
        if installed is not None:
            out[f"{top} (installed)"] = installed
        else:
            packages.add(top)
    seen: set[str] = set()
    todo = [r for r in roots if r not in skip and r.split(".", 1)[0] in packages]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found = _locate(name)
        if found is None:
            continue
        path, _, rel = found
        if _reexports(name) is None:  # a re-exporting __init__ computes nothing: only its names are followed
            out[rel] = blob_id(path.read_bytes())
        for dep in _imports(name):
            if dep.split(".", 1)[0] in packages and dep not in seen and dep not in skip:
                todo.append(dep)
    return dict(sorted(out.items()))


def _target_module(target: str | None) -> str | None:
    """The module that defines ``target`` (``pkg.Class`` through a re-exporting ``pkg/__init__``)."""
    if not target:
        return None
    module, _, attr = target.rpartition(".")
    return _through(module, attr) if module else None


def _version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:  # a checkout that is not installed
        return "0+unknown"


@functools.lru_cache(maxsize=256)
def _code(targets: tuple[str, ...], conditions: tuple[str, ...]) -> Code:
    roots = tuple(dict.fromkeys(ROOTS + conditions + targets))
    skip = frozenset(CONDITIONAL) - set(conditions)
    modules = closure(roots, skip=skip)
    digest = hashlib.sha256(json.dumps({"scheme": SCHEME, "modules": modules}, sort_keys=True).encode()).hexdigest()
    return Code(f"{_version()}+src.{digest[:12]}", tuple(modules.items()))


_STAMP: list[tuple] = []


def _tree_stamp(folder: str) -> tuple:
    """(path, mtime) of every ``.py`` file under ``folder``, by ``os.scandir`` (a run's hot path)."""
    out = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                out.extend(_tree_stamp(entry.path))
            elif entry.name.endswith(".py"):
                out.append((entry.path, entry.stat().st_mtime_ns))
    return tuple(out)


def _fresh() -> None:
    """Forget what was located and hashed when a source file of the package was added, removed or
    edited since (a long-lived process, a notebook or a test sees the change)."""
    stamp = _tree_stamp(str(Path(__file__).resolve().parents[1]))
    if _STAMP != [stamp]:
        _STAMP[:] = [stamp]
        _locate.cache_clear()
        _code.cache_clear()


def run_code(cfg) -> Code:
    """The code ``cfg``'s run can execute: the closure of :data:`ROOTS`, its method's and model's
    ``_target_`` modules and the :data:`CONDITIONAL` modules its config asks for."""
    targets = tuple(m for m in (_target_module((cfg.get(k) or {}).get("_target_")) for k in ("method", "model"))
                    if m is not None)
    conditions = tuple(name for name, wanted in CONDITIONAL.items() if wanted(cfg))
    _fresh()
    return _code(targets, conditions)


def changed(modules: dict[str, str]) -> list[str]:
    """The modules of ``modules`` (path -> blob id) whose source today differs (or is gone)."""
    out = []
    for rel, blob in modules.items():
        if rel.endswith(" (installed)"):
            if _installed(rel.split(" ", 1)[0]) != blob:
                out.append(rel)
            continue
        found = _locate(rel.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
        if found is None or blob_id(found[0].read_bytes()) != blob:
            out.append(rel)
    return out
