"""What changed between two sides (runs, commits, GPU models or datasets): farm.analysis.compare's noise-aware verdict per
cell, a count per family and GPU model, and the worst regressions first. Pure pandas, no Streamlit."""
from __future__ import annotations

import pandas as pd

from dashboard import analysis

SIDES = {"run": "run", "git_commit": "commit", "gpu_model": "GPU model", "dataset": "dataset"}  # column -> what it is called
VERDICT_ORDER = {"SLOWER": 0, "FASTER": 1, "UNCLEAR": 2, "SAME": 3}  # regressions first, then gains, then the undecided


def side_column(rows: pd.DataFrame, by: str) -> pd.Series:
    """The value naming each row's side: a run is 'run_id · dataset' (run ids repeat across datasets)."""
    if by == "run":
        return rows["run_id"].astype(str) + " · " + rows["dataset"].astype(str)
    return rows[by].astype(str)


def side_options(rows: pd.DataFrame, by: str) -> list[str]:
    """The values to pick from, oldest first (by their first timed row)."""
    t = analysis.timed(rows)
    if t.empty:
        return []
    first = t.assign(_side=side_column(t, by)).groupby("_side")["timestamp"].min().sort_values(kind="stable")
    return list(first.index)


def compare(rows: pd.DataFrame, by: str, a: str, b: str, tol: float) -> pd.DataFrame:
    """B against A per cell: gpu_model (or 'B vs A' between GPU models), family, stage, shape, medians, diff and
    band (%), verdict; regressions first, then FASTER, UNCLEAR and SAME, each largest |difference| first."""
    side = side_column(rows, by)
    df = analysis.compare_selected(rows, side == a, side == b, tol, model_label=f"{b} vs {a}" if by == "gpu_model" else None)
    if df.empty:
        return df.assign(family=pd.Series(dtype="object"), dtype=pd.Series(dtype="object"))
    info = rows.drop_duplicates("stage").set_index("stage")
    df.insert(1, "family", df["stage"].map(info["family"]))
    df.insert(3, "dtype", df["stage"].map(info["dtype"]))
    df["pair"] = f"{b} vs {a}"
    rank = df["verdict"].map(VERDICT_ORDER)
    return df.assign(_r=rank, _d=-df["diff_pct"].abs()).sort_values(["_r", "_d"], kind="stable").drop(columns=["_r", "_d"]).reset_index(drop=True)


def summary(cmp: pd.DataFrame) -> pd.DataFrame:
    """Per family and GPU model: how many cells are faster, slower, same, unclear, as counts and one line of text."""
    cols = ["family", "gpu_model", "cells", "FASTER", "SLOWER", "SAME", "UNCLEAR", "summary", "worst_pct"]
    if cmp.empty:
        return pd.DataFrame(columns=cols)
    counts = pd.crosstab([cmp["family"], cmp["gpu_model"]], cmp["verdict"]).reindex(columns=list(VERDICT_ORDER), fill_value=0)
    out = counts.reset_index()
    out["cells"] = counts.sum(axis=1).values
    out["summary"] = [f"{f} faster, {s} slower, {m} same, {u} unclear"
                      for f, s, m, u in zip(out["FASTER"], out["SLOWER"], out["SAME"], out["UNCLEAR"])]
    worst = cmp[cmp["verdict"] == "SLOWER"].groupby(["family", "gpu_model"])["diff_pct"].max()
    out["worst_pct"] = [worst.get((f, g), float("nan")) for f, g in zip(out["family"], out["gpu_model"])]
    return out.sort_values(["SLOWER", "worst_pct"], ascending=False, kind="stable")[cols].reset_index(drop=True)


def launch_note(rows: pd.DataFrame, by: str, a: str, b: str) -> str:
    """A warning when the two sides launched their rows differently (direct against CUDA graph, e.g. schema 2
    cuBLAS baselines against schema 3): below ~2048^3 such differences are the launch, not the kernel."""
    t = analysis.timed(rows)
    side = side_column(t, by)
    methods = {s: sorted(set(t.loc[side == s, "launch_method"].dropna())) for s in (a, b)}
    if methods[a] == methods[b] or not methods[a] or not methods[b]:
        return ""
    return (f"A's rows were launched {' and '.join(methods[a])}, B's {' and '.join(methods[b])}: where one cell was "
            "timed from Python (direct) and the other replayed from a CUDA graph, a difference at small sizes is the "
            "host launch overhead, not the kernel (`launch_method` per row).")
