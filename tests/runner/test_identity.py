"""A run's identity is the whole computation: every config key, the data's bytes, the code."""

import copy
import hashlib
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf, open_dict

from rfrepro.harness.run.config import compose
from rfrepro.runner.identity import NOT_IDENTITY, code_version, compute_id, identity_config, run_id
from rfrepro.runner.record import identify, run_and_record

FAST = ["experiment=sun2018/fig1", "method.n_components=1", "dataset.n_train=200", "dataset.n_test=500",
        "model.lam=0.01"]
FP = {"generated": "disk_annulus"}


def _leaves(tree, prefix=()):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, prefix + (k,))
    else:
        yield prefix, tree


def _flipped(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return 1
    if isinstance(value, list):
        return value + [1]
    raise AssertionError(f"unexpected leaf {value!r}")


def _set(tree, path, value):
    node = tree
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def test_every_identity_key_changes_the_run_id():
    cfg = compose(FAST + ["+cv.sigma_factors=[1,2]"])
    tree = identity_config(cfg)
    base = run_id(tree, FP, code="c")
    leaves = list(_leaves(tree))
    assert len(leaves) > 40  # dataset, method, model, kernel, eval, seed, dtype, study, cv ...
    for path, value in leaves:
        other = copy.deepcopy(tree)
        _set(other, path, _flipped(value))
        assert run_id(other, FP, code="c") != base, ".".join(path)


def test_excluded_keys_do_not_change_the_run_id_and_are_documented():
    cfg = compose(FAST)
    base = identify(cfg)[0]
    other = compose(FAST + ["arm=other", "paths.results=/elsewhere", "paths.data=/elsewhere", "threads=1",
                            "force=true", "mirror=file:///elsewhere", "study.title=another title",
                            "+deviations=[{what: x}]"])
    assert identify(other)[0] == base
    assert {k.split(".")[0] for k in NOT_IDENTITY} >= {"paths", "threads", "force", "arm", "sweep"}


def test_data_fingerprint_and_code_version_are_part_of_the_identity():
    cfg = compose(FAST)
    assert run_id(cfg, FP, code="a") != run_id(cfg, FP, code="b")
    assert run_id(cfg, {"variant": "cpuact", "files": {}}, code="a") != \
        run_id(cfg, {"variant": "cpusmall", "files": {}}, code="a")
    # compute_id ignores the study (shared computations), run_id does not
    other_study = compose(FAST + ["study.item=fig2"])
    assert compute_id(cfg, FP, "a") == compute_id(other_study, FP, "a")
    assert run_id(cfg, FP, "a") != run_id(other_study, FP, "a")


def test_code_version_hashes_every_module_outside_the_harness(tmp_path):
    import shutil

    import rfrepro
    from rfrepro.runner.identity import ORCHESTRATION, source_digest

    root = Path(rfrepro.__file__).parent
    assert code_version().endswith("+src." + source_digest(root)[:12])
    copy = tmp_path / "rfrepro"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(copy)
    # any module of the harness (a claim's statistic, a figure, the report, a new file): records stay valid
    harness = sorted(p.relative_to(copy).as_posix() for p in (copy / ORCHESTRATION).rglob("*.py"))
    assert {"harness/report/claims.py", "harness/report/plots.py", "harness/report/report.py", "harness/run/pools.py"} <= set(harness)
    for rel in harness:
        with open(copy / rel, "a") as fh:
            fh.write("\n# edited\n")
    (copy / ORCHESTRATION / "new_module.py").write_text("x = 1\n")
    assert source_digest(copy) == before
    # any other module (a feature map, a model, the run, the store, a new file): every record is stale
    computing = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*.py")
                       if p.relative_to(copy).parts[0] != ORCHESTRATION)
    assert {"features/rff.py", "models/svm.py", "runner/steps.py", "runner/record.py", "runner/store.py", "data/registry.py",
            "kernels.py"} <= set(computing)
    for rel in computing + ["features/new_map.py"]:
        edited = tmp_path / "edited"
        shutil.rmtree(edited, ignore_errors=True)
        shutil.copytree(copy, edited)
        with open(edited / rel, "a") as fh:
            fh.write("\n# edited\n")
        assert source_digest(edited) != before, rel


#: Modules outside the harness that may import it: the ``python -m`` entry points, which only delegate.
ENTRY_POINTS = ("__main__.py", "reproduce.py", "report.py")


def test_no_computing_module_imports_the_harness():
    """The tree is the boundary: nothing hashed imports the harness, so it cannot reach a run's numbers."""
    import ast

    import rfrepro
    from rfrepro.runner.identity import ORCHESTRATION

    root = Path(rfrepro.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.split("/", 1)[0] == ORCHESTRATION or rel in ENTRY_POINTS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            offenders += [f"{rel} imports {n}" for n in names
                          if n == f"rfrepro.{ORCHESTRATION}" or n.startswith(f"rfrepro.{ORCHESTRATION}.")]
    assert not offenders, offenders


def test_entry_points_only_delegate_to_the_harness():
    import ast

    import rfrepro

    root = Path(rfrepro.__file__).parent
    for rel in ENTRY_POINTS:
        tree = ast.parse((root / rel).read_text())
        body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert len(body) - len(imports) == 1 and isinstance(body[-1], ast.If), rel  # if __name__ == ...
        assert any(isinstance(n, ast.ImportFrom) and n.module.startswith("rfrepro.harness.") for n in imports)


def test_no_import_cycle_between_packages():
    """Packages form layers: no package imports one that imports it back (directly or not)."""
    import ast

    import rfrepro

    root = Path(rfrepro.__file__).parent

    def unit(rel: str) -> str:
        head = rel.split("/", 1)[0]
        return head[:-3] if head.endswith(".py") else head

    edges: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel in ENTRY_POINTS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for n in names:
                if n.startswith("rfrepro.") and unit(rel) != n.split(".")[1]:
                    edges.setdefault(unit(rel), set()).add(n.split(".")[1])

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(u for u in edges if u in reach(u))
    assert not cycles, {u: sorted(edges[u]) for u in cycles}


def _file_dataset_config(tmp_path, values):
    raw = tmp_path / "data" / "raw" / "local"
    raw.mkdir(parents=True, exist_ok=True)
    rows = "\n".join(f"{y},{a},{b}" for y, a, b in values)
    (raw / "tiny.csv").write_text(rows + "\n")
    cfg = compose(["dataset=cadata", "method=rks_cos", "method.n_components=20", "model=krr",
                   "model.lam=0.1", f"paths.data={tmp_path / 'data'}"])
    with open_dict(cfg):
        cfg.dataset = OmegaConf.create({
            "name": "tiny", "task": "regression",
            "sources": {"all": {"file": "local/tiny.csv", "format": "csv", "label": 0}},
            "split": {"kind": "random", "test_size": 0.25, "seed": 0, "stratify": False},
            "preprocess": "none", "subsample": {"n_train": None, "n_test": None, "seed": 0},
        })
    return cfg


def test_a_changed_data_file_is_a_new_computation(results_root, tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(80, 2)
    first = _file_dataset_config(tmp_path, [(float(a + b), a, b) for a, b in X])
    rec1 = run_and_record(first)
    assert rec1["status"] == "ok", rec1.get("error")
    (sha,) = rec1["data_fingerprint"]["files"].values()
    assert sha == hashlib.sha256((tmp_path / "data/raw/local/tiny.csv").read_bytes()).hexdigest()
    assert run_and_record(first).get("_skipped")  # same bytes: reused
    second = _file_dataset_config(tmp_path, [(float(a - b), a, b) for a, b in X])  # other bytes
    rec2 = run_and_record(second)
    assert not rec2.get("_skipped") and "reused_from" not in rec2
    assert rec2["run_id"] != rec1["run_id"]
    assert rec2["metrics"]["rmse"] != pytest.approx(rec1["metrics"]["rmse"])
