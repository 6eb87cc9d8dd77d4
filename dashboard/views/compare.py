"""Compare: two runs, commits, GPU models or datasets, cell by cell, with farm.analysis.compare's noise-aware verdicts,
a count per family and GPU model, and the worst regressions first."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import frames, ui, verdicts
from farm.analysis.compare import DEFAULT_TOLERANCE

SIDES = {"run": "run", "git_commit": "commit", "gpu_model": "GPU model", "dataset": "dataset"}  # column -> its name
VERDICT_ORDER = {"SLOWER": 0, "FASTER": 1, "UNCLEAR": 2, "SAME": 3}  # regressions first


def side_column(rows: pd.DataFrame, by: str) -> pd.Series:
    """The value naming each row's side: a run is 'run_id · dataset' (run ids repeat across datasets)."""
    if by == "run":
        return rows["run_id"].astype(str) + " · " + rows["dataset"].astype(str)
    return rows[by].astype(str)


def side_options(rows: pd.DataFrame, by: str) -> list[str]:
    """The values to pick, oldest timed first."""
    t = frames.timed(rows)
    if t.empty:
        return []
    first = t.assign(_side=side_column(t, by)).groupby("_side")["timestamp"].min().sort_values(kind="stable")
    return list(first.index)


def compare(rows: pd.DataFrame, by: str, a: str, b: str, tol: float, cross_fit: bool = False) -> pd.DataFrame:
    """B against A per cell: gpu_model (or 'B vs A'), family, stage, shape, medians, diff and band (%), verdict and
    the design that judged it, in VERDICT_ORDER, each largest |difference| first. `cross_fit`: compare_selected's."""
    side = side_column(rows, by)
    df = verdicts.compare_selected(
        rows, side == a, side == b, tol, model_label=f"{b} vs {a}" if by == "gpu_model" else None, cross_fit=cross_fit
    )
    if df.empty:
        return df.assign(family=pd.Series(dtype="object"), dtype=pd.Series(dtype="object"))
    info = rows.drop_duplicates("stage").set_index("stage")
    df.insert(1, "family", df["stage"].map(info["family"]))
    df.insert(3, "dtype", df["stage"].map(info["dtype"]))
    df["pair"] = f"{b} vs {a}"
    rank = df["verdict"].map(VERDICT_ORDER)
    return (
        df.assign(_r=rank, _d=-df["diff_pct"].abs())
        .sort_values(["_r", "_d"], kind="stable")
        .drop(columns=["_r", "_d"])
        .reset_index(drop=True)
    )


def summary(cmp: pd.DataFrame) -> pd.DataFrame:
    """Per family and GPU model: the verdicts' counts, and as one line of text."""
    cols = ["family", "gpu_model", "cells", "FASTER", "SLOWER", "SAME", "UNCLEAR", "summary", "worst_pct"]
    if cmp.empty:
        return pd.DataFrame(columns=cols)
    counts = pd.crosstab([cmp["family"], cmp["gpu_model"]], cmp["verdict"]).reindex(
        columns=list(VERDICT_ORDER), fill_value=0
    )
    out = counts.reset_index()
    out["cells"] = counts.sum(axis=1).values
    out["summary"] = [
        f"{f} faster, {s} slower, {m} same, {u} unclear"
        for f, s, m, u in zip(out["FASTER"], out["SLOWER"], out["SAME"], out["UNCLEAR"])
    ]
    worst = cmp[cmp["verdict"] == "SLOWER"].groupby(["family", "gpu_model"])["diff_pct"].max()
    out["worst_pct"] = [worst.get((f, g), float("nan")) for f, g in zip(out["family"], out["gpu_model"])]
    return out.sort_values(["SLOWER", "worst_pct"], ascending=False, kind="stable")[cols].reset_index(drop=True)


def pairing_note(rows: pd.DataFrame, by: str, a: str, b: str) -> str:
    """Whether runs A and B are a paired sweep's arms (verdicts.sweep_of)."""
    if by != "run":
        return ""
    t = frames.timed(rows)
    runs = dict(zip(side_column(t, by), zip(t["dataset"], t["run_id"])))
    return verdicts.sweep_of(rows, runs[a], runs[b]) if a in runs and b in runs else ""


def launch_note(rows: pd.DataFrame, by: str, a: str, b: str) -> str:
    """A warning when the sides launched their rows differently (direct against CUDA graph): below ~2048^3 such
    differences are the launch, not the kernel."""
    t = frames.timed(rows)
    side = side_column(t, by)
    methods = {s: sorted(set(t.loc[side == s, "launch_method"].dropna())) for s in (a, b)}
    if methods[a] == methods[b] or not methods[a] or not methods[b]:
        return ""
    return (
        f"A's rows were launched {' and '.join(methods[a])}, B's {' and '.join(methods[b])}: where one cell was "
        "timed from Python (direct) and the other replayed from a CUDA graph, a difference at small sizes is the "
        "host launch overhead, not the kernel (`launch_method` per row)."
    )


CAPTION = (
    "Did it help, on every GPU, beyond the noise? B against A per cell (GPU model, stage, shape measured on "
    "both sides; repeats, cards and runs of a side pooled), with `farm compare`'s verdict, its noise learned from "
    "the loaded datasets' A/A history (repeats, and runs of one commit): SAME when the equivalence test's 90 % "
    "band of the difference lies within ±tolerance (the smallest change that matters), FASTER / SLOWER when the "
    "99 % band excludes 0 and the difference exceeds half the tolerance, UNCLEAR when the noise is too large to say. Each cell names what else "
    "differed between the sides (card, clocks, power cap, driver, library algorithm, commit); a FASTER or SLOWER "
    "with more than the code differing is marked. Regressions first. The two arms of a paired sweep "
    "(farm/sweep.py --paired or --base-kernels: runs RUN_ID-a and RUN_ID-b) are offered first where the data hold "
    "one, A its arm b (the base tree, or the same code again), B its arm a (this tree), and judged per pair with the "
    "paired design's noise; the page says which noise model judged the cells."
)
MAX_CHART_CELLS = 40


def _default(options: list[str], wanted: str | None, fallback: int) -> int:
    return options.index(wanted) if wanted in options else fallback


def _best_pair(rows, by: str, options: list[str]) -> tuple[int, int]:
    """For runs, the two that share the most cells; else the two newest values."""
    pair = verdicts.best_run_pair(rows) if by == "run" else None
    if pair:
        a, b = (f"{p[1]} · {p[0]}" for p in pair)
        if a in options and b in options:
            return options.index(a), options.index(b)
    return len(options) - 2, len(options) - 1


def body(L, rows, _) -> None:
    q = st.query_params  # the History page links here with ?by=run&a=...&b=...
    sides = list(SIDES)
    c = st.columns([1.2, 3, 3, 1.2])
    by = c[0].selectbox("Compare", sides, index=_default(sides, q.get("by"), 0), format_func=SIDES.get, key="cmp_by")
    options = side_options(rows, by)
    if len(options) < 2:
        st.info(
            f"Only {len(options)} {SIDES[by]} with timed rows under the current filters: nothing to compare. "
            "Clear a sidebar filter, or compare by something else."
        )
        return
    ia, ib = _best_pair(rows, by, options)
    a = c[1].selectbox("A (before)", options, index=_default(options, q.get("a"), ia), key=f"cmp_a_{by}")
    b = c[2].selectbox("B (after)", options, index=_default(options, q.get("b"), ib), key=f"cmp_b_{by}")
    tol = (
        c[3].number_input(
            "Tolerance (%)",
            min_value=0.1,
            max_value=20.0,
            value=100 * DEFAULT_TOLERANCE,
            step=0.5,
            key="cmp_tol",
            help="the smallest change that matters: SAME when shown within ±tolerance, FASTER/SLOWER from half of it",
        )
        / 100
    )
    if a == b:
        st.info("Pick two different sides.")
        return
    cross_fit = st.session_state.get("cmp_cross_fit", False)
    df = compare(rows, by, a, b, tol, cross_fit)
    if df.empty:
        st.info(
            f"A and B measured no cell in common (same {'stage and shape' if by == 'gpu_model' else 'GPU model, stage and shape'}), "
            "or none with per-batch samples."
        )
        return
    if note := launch_note(rows, by, a, b):
        st.warning(note)
    if note := pairing_note(rows, by, a, b):
        st.info(note)
    st.caption(verdicts.design_line(df))
    if (df["design"] == "paired").any() or cross_fit:
        st.checkbox(
            "Cross-fit",
            key="cmp_cross_fit",
            help="as farm compare --cross-fit: each half of the stages judged with the noise of the other half and of "
            "every other run, for a first paired A/A whose noise is measured nowhere else (fewer than 100 paired A/A "
            "pairs of the GPU model otherwise leave its paired cells UNCLEAR)",
        )
    s = verdicts.comparison_summary(df, tol)
    m = st.columns(5)
    m[0].metric("cells compared", s["comparisons"])
    m[1].metric("SLOWER", s["SLOWER"], help="B slower than A beyond the noise and half the tolerance")
    m[2].metric("FASTER", s["FASTER"])
    m[3].metric("SAME", s["SAME"], help=f"the whole ~95 % band within ±{100 * tol:g} %")
    m[4].metric("UNCLEAR", s["UNCLEAR"], help="too noisy to say same or different")

    st.subheader("Per family and GPU model")
    per = summary(df)
    per["worst"] = [f"{w:+.1f} %" if w == w else "none slower" for w in per["worst_pct"]]
    st.dataframe(
        per[["family", "gpu_model", "cells", "summary", "worst"]],
        hide_index=True,
        column_config={
            "gpu_model": "GPU model",
            "summary": st.column_config.TextColumn("verdicts", width="large"),
            "worst": "worst slowdown",
        },
    )

    confounded = df[df["verdict"].isin(["FASTER", "SLOWER"]) & df["confounded"]]
    if not confounded.empty:
        st.warning(
            f"{len(confounded)} of the FASTER / SLOWER cells came with more than the code differing (another card, "
            "clock, power cap, driver or library algorithm: column *what else differed*): they may be that, not the change."
        )
    verdicts.show_calibration(rows, tol, set(df["gpu_model"]))

    st.subheader("Cells, regressions first")
    shown = df[df["verdict"] != "SAME"].head(MAX_CHART_CELLS)
    if shown.empty:
        st.success(f"Every cell is SAME: within ±{100 * tol:g} % beyond doubt.")
    else:
        st.caption(
            f"The {len(shown)} cells that are not SAME, slower first, then faster, then unclear"
            + (f" (the first {MAX_CHART_CELLS})" if len(shown) == MAX_CHART_CELLS else "")
            + "; the table has every cell."
        )
        ui.chart(verdicts.comparison_chart(shown, 100 * tol, f"{b}  vs  {a}"), key="cmp_chart")
    table = df.drop(columns=["order", "cell", "pair"], errors="ignore")
    order = [
        "gpu_model",
        "family",
        "stage",
        "dtype",
        "size_label",
        "verdict",
        "diff_pct",
        "band_pct",
        "differed",
        "why",
        "a_ms",
        "b_ms",
        "a_rows",
        "b_rows",
        "noise",
        "design",
    ]
    st.dataframe(
        table,
        hide_index=True,
        column_order=order,
        column_config={
            "gpu_model": "GPU model",
            "size_label": "size",
            "dtype": "precision",
            "a_ms": st.column_config.NumberColumn("A median (ms)", format="%.5f"),
            "b_ms": st.column_config.NumberColumn("B median (ms)", format="%.5f"),
            "diff_pct": st.column_config.NumberColumn("B vs A (%)", format="%+.2f", help="+ is slower"),
            "band_pct": st.column_config.NumberColumn(
                "± band (%)", format="%.2f", help="99 % half-width of the difference"
            ),
            "differed": st.column_config.TextColumn("what else differed", width="large"),
            "why": "note",
            "noise": st.column_config.TextColumn("noise from", help="the class of cells its noise was learned from"),
            "design": st.column_config.TextColumn(
                "noise model", help="paired: per pair of a paired sweep's arms; runs: sequential runs"
            ),
            "a_rows": "rows A",
            "b_rows": "rows B",
        },
    )
    st.download_button(
        f"comparison · CSV ({len(table)} cells)",
        data=lambda: table.to_csv(index=False).encode(),
        file_name="gemm-farm-compare.csv",
        mime="text/csv",
        key="cmp_csv",
        on_click="ignore",
    )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Compare", CAPTION, body)
