"""Leaderboard arms from the maps' own declarations: a method yaml says what it approximates.

A method config (``conf/method/<name>.yaml``, or one in a directory on
``RFREPRO_CONFIG_PATH``) that belongs on the leaderboard declares::

    leaderboard:
      arm: rks_cos                 # its arm's name in the leaderboard studies (claim ids use it)
      label: RKS cos               # how tables, figures and claims name it
      member: true                 # false: only when a sweep adds it (sweep.arms_from.add)
      kernels:                     # each kernel family it approximates: the arm's overrides
        gaussian: {overrides: ["method.n_components=${lb_point.D}"]}
        laplacian: {overrides: ["method.n_components=${lb_point.D}"]}

A study that takes its arms from those declarations says so in its sweep::

    sweep:
      arms_from:
        kernel: gaussian           # every member declaring this kernel becomes an arm
        grid: {lb_D: [d128, ...]}  # the arms' own grid, unless a declaration gives one
        add: []                    # method names to add (a map outside the members)
        drop: []                   # arm names to leave out

Each arm runs ``method=<name>`` and the declaration's overrides. The
declaration is read from the yaml as written; :func:`strip` removes it from
a composed config, so it is never a constructor argument nor part of a run's
identity (a label edit reuses every record).
"""

from __future__ import annotations

import functools

from omegaconf import OmegaConf

from rfrepro.harness.catalog import config_dirs

#: the key of a method config that holds its leaderboard declaration
KEY = "leaderboard"


@functools.lru_cache(maxsize=64)
def _load(path: str, mtime_ns: int) -> dict:
    node = OmegaConf.load(path)
    return OmegaConf.to_container(node, resolve=False) if OmegaConf.is_dict(node) else {}


def declarations() -> dict[str, dict]:
    """Method option name -> its ``leaderboard`` declaration (options without one are absent)."""
    out: dict[str, dict] = {}
    for base in config_dirs():
        for path in sorted((base / "method").glob("*.yaml")):
            if path.name.startswith("_"):
                continue
            decl = _load(str(path), path.stat().st_mtime_ns).get(KEY)
            if isinstance(decl, dict):
                out.setdefault(path.stem, decl)
    return out


def labels() -> dict[str, str]:
    """Arm name -> display label, over every declaration."""
    return {str(d.get("arm")): str(d.get("label") or d.get("arm")) for d in declarations().values() if d.get("arm")}


def label(arm: str) -> str:
    """The display label of ``arm`` (its name when no declaration names it)."""
    return labels().get(arm, arm)


def kernel_arms(kernel: str) -> tuple[str, ...]:
    """The member arms declaring ``kernel``, in the order of their method names."""
    return tuple(str(d["arm"]) for _, d in sorted(declarations().items())
                 if d.get("member", True) and kernel in (d.get("kernels") or {}))


def arms(spec: dict) -> dict[str, dict]:
    """``sweep.arms_from`` -> the sweep's arms (``{arm: {overrides, grid}}``), checked.

    An added method joins the studies of the kernels it declares (others
    ignore it). Raises ValueError for an added method that declares no
    kernel, or an arm name declared twice.
    """
    kernel = spec.get("kernel")
    if not kernel:
        raise ValueError("sweep.arms_from needs a kernel")
    decls = declarations()
    add = [str(m) for m in spec.get("add") or []]
    drop = {str(a) for a in spec.get("drop") or []}
    for name in add:  # a map added to every study: each study of a kernel it declares takes it
        if name not in decls or not decls[name].get("kernels"):
            raise ValueError(f"sweep.arms_from.add: method {name!r} declares no leaderboard arm (a "
                             "'leaderboard: {arm: ..., label: ..., kernels: {<kernel>: {overrides: [...]}}}' "
                             f"block in its yaml); methods that do: {', '.join(sorted(decls))}")
    out: dict[str, dict] = {}
    for name, decl in sorted(decls.items()):
        per_kernel = (decl.get("kernels") or {}).get(kernel)
        if per_kernel is None or not (decl.get("member", True) or name in add):
            continue
        arm = str(decl.get("arm") or name)
        if arm in drop:
            continue
        if arm in out:
            raise ValueError(f"leaderboard arm {arm!r} is declared by two methods for the {kernel} kernel")
        per_kernel = per_kernel or {}
        out[arm] = {"overrides": [f"method={name}", *(per_kernel.get("overrides") or [])],
                    "grid": dict(per_kernel.get("grid") or spec.get("grid") or {})}
    return out


def strip(cfg) -> None:
    """Remove the declaration from a composed config's ``method`` (in place)."""
    method = cfg.get("method") if cfg is not None else None
    if method is not None and KEY in method:
        from omegaconf import open_dict

        with open_dict(cfg):
            del cfg.method[KEY]
