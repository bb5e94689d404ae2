"""Chen et al. (2015) Table 1 as measured scaling: map and training time against n and l (log-log).

Table 1 of the paper (KRR, X is n x m, d RKS features, l output features, t test points):

    method        mapping                          training
    M1 kernel     O(nnz(X) n)                      O(n^3)
    M2 RKS        O(nnz(X) d)                      O(n d^2)
    M3 TEFM-G     O(nnz(X) d + l^2 d + n l d)      O(n l^2)
    M4 TEFM-S     O(nnz(X) d + l^2 d + n d log l)  O(n l^2)

Here RKS outputs d = l features and TEFM d = 4 l, so the exponents in n (l fixed)
and in l (n fixed) are those of EXPECTED. Our TEFM-S applies the SRHT over the
n training rows (O(n d log n)); our TEFM-G uses q = 1 (3 products of cost n l d).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import NullFormatter

from experiments.chen2015.common import STYLE, loglog_slope
from rfrepro.plots import finished
from rfrepro.results import claim

N, L = "dataset.n_train", "method.n_components"
METHODS = {"exact": "M1 exact KRR", "rks_cos": "M2 RKS", "tefm_g": "M3 TEFM-G", "tefm_s": "M4 TEFM-S"}
COLORS = {"exact": "exact", "rks_cos": "rks", "tefm_g": "tefm_g", "tefm_s": "tefm_s"}
#: (method, time, against) -> (lowest, highest expected exponent, the paper's term)
EXPECTED = {
    ("exact", "map", "n"): (2, 2, "nnz(X) n"),
    ("exact", "train", "n"): (3, 3, "n^3"),
    ("rks_cos", "map", "n"): (1, 1, "nnz(X) d"),
    ("rks_cos", "train", "n"): (1, 1, "n d^2"),
    ("rks_cos", "map", "l"): (1, 1, "nnz(X) d, d = l"),
    ("rks_cos", "train", "l"): (2, 2, "n d^2, d = l"),
    ("tefm_g", "map", "n"): (1, 1, "nnz(X) d + n l d"),
    ("tefm_g", "train", "n"): (1, 1, "n l^2"),
    ("tefm_g", "map", "l"): (1, 2, "nnz(X) d + n l d, d = 4l: l .. l^2"),
    ("tefm_g", "train", "l"): (2, 2, "n l^2"),
    ("tefm_s", "map", "n"): (1, 1, "nnz(X) d + n d log l"),
    ("tefm_s", "train", "n"): (1, 1, "n l^2"),
    ("tefm_s", "map", "l"): (1, 3, "nnz(X) d + n d log l + l^2 d, d = 4l: l .. l^3"),
    ("tefm_s", "train", "l"): (2, 2, "n l^2"),
}
#: A measured slope agrees when it is within this of the expected range.
TOLERANCE = 0.3


def timed(table: pd.DataFrame) -> pd.DataFrame:
    """Finished runs with ``map_s`` (fit + transform) and ``train_s``, one row per run."""
    t = finished(table).copy()
    if t.empty:
        return t
    t["method"] = t["method.name"]
    t["map_s"] = t[["timings.map_fit_s", "timings.map_transform_s"]].fillna(0.0).sum(axis=1)
    t["train_s"] = t["timings.train_s"]
    t[L] = t[L].fillna(0) if L in t else 0
    return t


def fixed_values(t: pd.DataFrame) -> tuple[int, int]:
    """The fixed n of the l sweep and the fixed l of the n sweep (most frequent values)."""
    rks = t[t["method"] != "exact"]
    return int(rks[N].mode().iloc[0]), int(rks[L].mode().iloc[0])


def curves(table: pd.DataFrame) -> pd.DataFrame:
    """Median time over seeds per (method, against, x) for map and train."""
    t = timed(table)
    if t.empty:
        return pd.DataFrame()
    n0, l0 = fixed_values(t)
    rows = []
    for method, m in t.groupby("method"):
        vs_n = m if method == "exact" else m[m[L] == l0]
        for x, g in vs_n.groupby(N):
            rows.append({"method": method, "against": "n", "x": x, "map_s": g["map_s"].median(),
                         "train_s": g["train_s"].median(), "runs": len(g)})
        if method != "exact":
            for x, g in m[m[N] == n0].groupby(L):
                rows.append({"method": method, "against": "l", "x": x, "map_s": g["map_s"].median(),
                             "train_s": g["train_s"].median(), "runs": len(g)})
    return pd.DataFrame(rows)


def slopes(table: pd.DataFrame) -> dict:
    """(method, time, against) -> fitted log-log slope."""
    c = curves(table)
    out = {}
    for (method, against), g in (c.groupby(["method", "against"]) if len(c) else []):
        for kind in ("map", "train"):
            out[(method, kind, against)] = loglog_slope(g["x"], g[f"{kind}_s"])
    return out


def agrees(slope: float, lo: float, hi: float, tol: float = TOLERANCE) -> bool:
    return lo - tol <= slope <= hi + tol


def figure(table: pd.DataFrame):
    c = curves(table)
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
    t = timed(table)
    n0, l0 = fixed_values(t) if len(t) else (0, 0)
    panels = [("map", "n"), ("train", "n"), ("map", "l"), ("train", "l")]
    for ax, (kind, against) in zip(axes, panels):
        sub = c[c["against"] == against] if len(c) else c
        for method in [m for m in METHODS if len(sub) and m in set(sub["method"])]:
            g = sub[sub["method"] == method].sort_values("x")
            color, marker = STYLE[COLORS[method]]
            s = loglog_slope(g["x"], g[f"{kind}_s"])
            lo, hi, _ = EXPECTED[(method, kind, against)]
            exp = f"{lo}" if lo == hi else f"{lo}-{hi}"
            ax.plot(g["x"], g[f"{kind}_s"], marker=marker, color=color,
                    label=f"{METHODS[method]}: slope {s:.2f} (paper {exp})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("n (training rows)" if against == "n" else "l (features)")
        ax.set_ylabel(f"{kind} time (s), median over seeds")
        fixed = f"l = {l0}" if against == "n" else f"n = {n0}"
        ax.set_title(f"{kind} time against {against} ({fixed})", fontsize=10)
        ax.legend(fontsize=7)
    name = t["dataset.name"].iloc[0] if len(t) else "?"
    fig.suptitle(f"Chen et al. 2015 Table 1, measured on {name}: log-log time, fitted slopes vs the "
                 "paper's exponents (1 BLAS thread per run)")
    fig.tight_layout()
    return fig


def summary(table: pd.DataFrame) -> str:
    s = slopes(table)
    if not s:
        return "No finished runs."
    lines = ["| method | time | against | paper's term | expected exponent | fitted slope | agrees (+-0.3) |",
             "|---|---|---|---|---|---|---|"]
    for key, (lo, hi, term) in EXPECTED.items():
        if key in s:
            exp = f"{lo}" if lo == hi else f"{lo} .. {hi}"
            lines.append(f"| {METHODS[key[0]]} | {key[1]} | {key[2]} | O({term}) | {exp} | {s[key]:.2f} | "
                         f"{'yes' if agrees(s[key], lo, hi) else 'no'} |")
    c = curves(table)
    lines += ["", "| method | against | x | map time (s) | train time (s) | runs |", "|---|---|---|---|---|---|"]
    for _, r in c.sort_values(["against", "method", "x"]).iterrows():
        lines.append(f"| {METHODS[r['method']]} | {r['against']} | {int(r['x'])} | {r['map_s']:.4f} | "
                     f"{r['train_s']:.4f} | {int(r['runs'])} |")
    return "\n".join(lines)


def claims(table: pd.DataFrame) -> list[dict]:
    t = timed(table)
    out = []
    if t.empty:
        return [claim("C1.3-speed", "TEFM-S maps faster than TEFM-G", None, None, "no finished runs"),
                claim("T1", "Measured scaling matches Table 1's exponents", None, None, "no finished runs")]
    g = t[t["method"].isin(["tefm_g", "tefm_s"])].groupby(["method", N, L])["map_s"].median().unstack("method")
    if {"tefm_g", "tefm_s"} <= set(g.columns):
        g = g.dropna()
        ratio = (g["tefm_s"] / g["tefm_g"])
        out.append(claim(
            "C1.3-speed", "TEFM-S maps faster than TEFM-G",
            {"tefm_s_over_tefm_g_map_time": {f"n={int(n)},l={int(ell)}": round(float(v), 3)
                                             for (n, ell), v in ratio.items()},
             "points_faster": f"{int((ratio < 1).sum())}/{int(ratio.size)}"},
            bool(ratio.size) and bool((ratio < 1).all()),
            "median map time (fit + transform) over seeds at each (n, l); pass when TEFM-S is faster at "
            "every point; TEFM-G with q = 1",
        ))
    s = slopes(table)
    checked = {f"{k[0]} {k[1]} vs {k[2]}": {"slope": round(v, 2), "expected": EXPECTED[k][:2],
                                            "agrees": agrees(v, *EXPECTED[k][:2])}
               for k, v in s.items() if k in EXPECTED}
    out.append(claim(
        "T1", "Measured map / training time scale with n and l as Table 1's complexities say",
        checked, bool(checked) and all(v["agrees"] for v in checked.values()),
        f"log-log slope of the median time over seeds; agrees when within {TOLERANCE} of the expected "
        "exponent (range); small sizes carry fixed overheads that flatten slopes",
    ))
    return out
