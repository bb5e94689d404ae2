"""Wu et al. (2016): every number the paper prints about its data and Z, beside ours.

Three groups of printed numbers, none of them a result of a method:

- Table 1's sizes (classes C, features d, training rows N, test rows M) per
  dataset, against the data our runs loaded (each record's ``dataset`` block);
- Fig. 4's sigma per dataset (cadata 0.56, ijcnn1 1.12, acoustic and letter
  0.28), against the sigma our runs used (the number the rule gave, where the
  paper prints none);
- Fig. 2's worked example of Z (N = 200 rows, R = 10 grids, D = 395 columns,
  nnz(Z) = 2000), a check of our Z's shape rules: nnz(Z(i, :)) = R for every
  row, so nnz(Z) = N R, and R <= D <= N R. Only nnz and the bounds are rules;
  D depends on the data and sigma, which the paper does not give for Fig. 2.

The sizes and sigmas come from one cheap run per dataset (R = 1 grid, no
model); the Fig. 2 example is computed by this module's code when the table
is built (a fixed generated sample), since it checks the code, not a run.
No claims: the paper states nothing about these numbers to test.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rfrepro.features.random_binning import RandomBinning
from rfrepro.harness.report.plots import finished, not_run_panel

#: Table 1 of the paper: C (classes; 1 = regression), d, N (train), M (test).
PAPER_TABLE1 = {
    "cadata": (1, 8, 16_512, 4_128), "census": (1, 119, 18_186, 2_273),
    "ijcnn1": (2, 22, 35_000, 91_701), "cod_rna": (2, 8, 49_437, 271_617),
    "covtype": (2, 54, 464_809, 116_203), "susy": (2, 18, 4_000_000, 1_000_000),
    "mnist": (10, 780, 60_000, 10_000), "acoustic": (3, 50, 78_823, 19_705),
    "letter": (26, 16, 10_500, 5_000),
}
#: Our dataset config -> the paper's Table 1 row it stands for.
ROW = {"cadata": "cadata", "census": "census", "ijcnn1_tr": "ijcnn1", "ijcnn1_val": "ijcnn1",
       "cod_rna": "cod_rna", "covtype": "covtype", "susy": "susy", "mnist": "mnist",
       "acoustic": "acoustic", "letter_tr": "letter"}
#: Fig. 4's legends: the sigma of each dataset it shows.
PAPER_SIGMA = {"cadata": 0.56, "ijcnn1": 1.12, "acoustic": 0.28, "letter": 0.28}
#: Fig. 2: N rows, R grids, D columns, nnz(Z).
FIG2 = {"N": 200, "R": 10, "D": 395, "nnz": 2000}
TABLE_COLS = (("C", "classes C"), ("d", "features d"), ("N", "training rows N"), ("M", "test rows M"))


def fig2_example(*, n: int = FIG2["N"], R: int = FIG2["R"], d: int = 8, seed: int = 0) -> dict:
    """Our Z on Fig. 2's sizes: N = 200 rows uniform on [-1, 1]^d (d = 8, cadata's), R = 10 grids.

    sigma is the L1 median rule of the sample (the paper names neither the
    data nor sigma of Fig. 2). Returns N, R, D, nnz(Z), the per-row nnz
    (min, max) and sigma.
    """
    X = np.random.RandomState(seed).uniform(-1.0, 1.0, size=(n, d))
    rb = RandomBinning(n_components=R, sigma="median", random_state=seed)
    Z = rb.fit_transform(X)
    rows = Z.getnnz(axis=1)
    return {"N": int(Z.shape[0]), "R": R, "D": int(Z.shape[1]), "nnz": int(Z.nnz),
            "row_nnz": (int(rows.min()), int(rows.max())), "sigma": float(rb.sigma_)}


def loaded(table: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset our runs loaded: C, d, N, M, sigma and its rule, from the records."""
    cols = ["dataset", "C", "d", "N", "M", "sigma", "rule"]
    t = finished(table)
    if t.empty or "dataset.name" not in t:
        return pd.DataFrame(columns=cols)
    rows = []
    for name, g in t.groupby("dataset.name", sort=False):
        r = g.iloc[0]
        regression = str(r.get("dataset.task", "")) == "regression"
        classes = r.get("dataset.n_classes", np.nan)
        rule = r.get("kernel.sigma_rule", np.nan)
        rows.append({"dataset": name, "C": 1 if regression else classes, "d": r["dataset.d"],
                     "N": r["dataset.n_train"], "M": r["dataset.n_test"],
                     "sigma": float(g["kernel.sigma"].astype(float).mean()),
                     "rule": rule if isinstance(rule, str) else None})
    return pd.DataFrame(rows, columns=cols)


def _int(v) -> str:
    return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{int(v):,}"


def _status(table: pd.DataFrame, name: str) -> str:
    statuses = set(table.loc[table["dataset.name"] == name, "status"]) \
        if "dataset.name" in table and "status" in table else set()
    return "data unavailable" if statuses == {"unavailable"} else "not in this sweep"


def table1_lines(table: pd.DataFrame) -> list[str]:
    """Table 1's C, d, N, M of every dataset beside ours (one line per number)."""
    ours = loaded(table).set_index("dataset")
    lines = ["### Table 1: dataset sizes, the paper's and the data our runs loaded", "",
             "| data (ours) | number | paper | ours | ours - paper |", "|---|---|---|---|---|"]
    for name, row in ROW.items():
        paper = dict(zip((k for k, _ in TABLE_COLS), PAPER_TABLE1[row]))
        for key, what in TABLE_COLS:
            if name not in ours.index:
                lines.append(f"| {row} ({name}) | {what} | {_int(paper[key])} | not run: "
                             f"{_status(table, name)} | |")
                continue
            v = ours.loc[name, key]
            diff = "" if pd.isna(v) else f"{int(v) - paper[key]:+,}"
            lines.append(f"| {row} ({name}) | {what} | {_int(paper[key])} | {_int(v)} | {diff} |")
    return lines


def sigma_lines(table: pd.DataFrame) -> list[str]:
    """Fig. 4's sigma per dataset beside the one our runs used."""
    ours = loaded(table).set_index("dataset")
    lines = ["### Fig. 4: sigma of the Laplacian kernel exp(-||x - y||_1 / sigma)", "",
             "| data (ours) | paper (Fig. 4) | ours | how ours was set |", "|---|---|---|---|"]
    for name, row in ROW.items():
        paper = f"{PAPER_SIGMA[row]:g}" if row in PAPER_SIGMA else "not printed"
        if name not in ours.index:
            lines.append(f"| {row} ({name}) | {paper} | not run: {_status(table, name)} | |")
            continue
        rule = ours.loc[name, "rule"]
        how = (f"the {rule} rule (L1 distances of 2000 training rows)" if rule in ("median", "mean")
               else "the paper's value" if row in PAPER_SIGMA else "set in the config")
        lines.append(f"| {row} ({name}) | {paper} | {ours.loc[name, 'sigma']:.3g} | {how} |")
    return lines


def fig2_lines() -> list[str]:
    """Fig. 2's worked example beside our Z on the same N and R."""
    ex = fig2_example()
    lo, hi = ex["row_nnz"]
    rule = "holds" if (ex["nnz"] == ex["N"] * ex["R"] and lo == hi == ex["R"]
                       and ex["R"] <= ex["D"] <= ex["N"] * ex["R"]) else "VIOLATED"
    return [f"### Fig. 2: the worked example of Z (shape rules nnz(Z) = N R, R <= D <= N R: {rule})", "",
            "| number | paper | ours |", "|---|---|---|",
            f"| N (rows) | {FIG2['N']} | {ex['N']} |", f"| R (grids) | {FIG2['R']} | {ex['R']} |",
            f"| nnz(Z) | {FIG2['nnz']:,} | {ex['nnz']:,} |",
            f"| nnz per row | R = {FIG2['R']} | {lo} to {hi} |",
            f"| D (columns: non-empty bins) | {FIG2['D']} | {ex['D']} |", "",
            f"Ours: 200 rows uniform on [-1, 1]^8, sigma = {ex['sigma']:.3g} (L1 median rule), seed 0; "
            "computed by this code when the table is built. D depends on the data and sigma, which the "
            "paper does not give for Fig. 2; only nnz and the bounds on D are rules."]


def figure(table: pd.DataFrame):
    """Ours against the paper's: Table 1's N, M and d (log-log, one point per number) and Fig. 4's sigma."""
    ours = loaded(table).set_index("dataset")
    fig, (ax, axs) = plt.subplots(1, 2, figsize=(10, 4.4))
    markers = {"N": ("o", "training rows N"), "M": ("s", "test rows M"), "d": ("^", "features d")}
    for key, (marker, what) in markers.items():
        pts = [(PAPER_TABLE1[ROW[n]][[k for k, _ in TABLE_COLS].index(key)], ours.loc[n, key])
               for n in ROW if n in ours.index]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, label=what)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lim = [1, 1e7]
    ax.plot(lim, lim, "--", color="gray", lw=1, label="ours = paper")
    ax.set_xlabel("paper (Table 1)")
    ax.set_ylabel("ours (loaded)")
    ax.set_title("Table 1 sizes", fontsize=10)
    ax.legend(fontsize=7)
    names = [n for n in ROW if n in ours.index and ROW[n] in PAPER_SIGMA]
    if names:
        x = np.arange(len(names))
        axs.bar(x - 0.2, [PAPER_SIGMA[ROW[n]] for n in names], 0.4, label="paper (Fig. 4)", color="gray")
        axs.bar(x + 0.2, [ours.loc[n, "sigma"] for n in names], 0.4, label="ours", color="tab:red")
        axs.set_xticks(x, names, fontsize=8)
        axs.set_ylabel("sigma")
        axs.legend(fontsize=7)
        axs.set_title("Fig. 4's sigma per dataset", fontsize=10)
    else:
        not_run_panel(axs, "Fig. 4's sigma per dataset", "no dataset with a printed sigma ran")
    fig.suptitle("Wu et al. 2016: the paper's data sizes and sigmas beside ours")
    fig.tight_layout()
    return fig


def summary(table: pd.DataFrame) -> str:
    notes = ["Notes:",
             "- ijcnn1: the paper's split is ijcnn1_tr (35,000 training rows, ijcnn1.t as test); "
             "ijcnn1_val, LIBSVM's validation file, stands in where the training file is absent.",
             "- mnist: the paper's d = 780 is, by our reading, the feature count LIBSVM lists for its "
             "mnist files; ours keeps all 28 x 28 = 784 pixels.",
             "- sizes count the rows and features after our preprocessing (the study's deviations)."]
    return "\n".join(table1_lines(table) + [""] + sigma_lines(table) + [""] + fig2_lines() + [""]
                     + notes) + "\n"


def claims(table: pd.DataFrame) -> list[dict]:
    # the paper states nothing about these numbers to test: Table 1 and Fig. 2 describe data and Z
    return []
