"""Tuning: per GPU model and size, the best tile configuration autotuning found and what it bought over the ladder's."""
import pandas as pd
import streamlit as st

from dashboard import analysis, charts, data, ui

PLAN_HINT = ("`python farm/sweep.py --plan plans/tune.toml` (every tunable kernel, 64 to 8192; "
             "`plans/tune_quick.toml` for two kernels at four sizes)")

# The verdict first (what won, what it bought, is it meaningful), the evidence after.
TABLE_ORDER = ["gpu_model", "kernel", "dtype", "size_label", "best_config", "bought", "best_ms", "ladder_ms", "gap_pct", "winner",
               "ladder_aa_pct", "best_tflops", "best_pct", "configs", "failed", "runner_up", "runner_up_ms", "best_ms_lo",
               "best_ms_hi", "best_spread", "ladder_config", "ladder_rank", "best_baseline_ms", "best_local_bytes", "best_rows",
               "ladder_same_run", "runs"]

st.title("Tuning")
st.caption("Tile autotuning (kernels/tuning.py): every valid BM×BN×BK block tile, WM×WN warp tile and shared-memory "
           "stage count of each tunable kernel, measured beside the kernel's ladder stage (its hand-picked "
           "configuration) on the same GPUs. Only ok, verified rows count; repeats, runs and same-model GPUs are pooled "
           "(median of the rows' medians).")


def no_tuning(L: data.Loaded, rows: pd.DataFrame) -> bool:
    """Say why there is nothing to rank; True when the page should show nothing else."""
    if ui.stop_if_empty(L, rows):
        st.caption(f"Tuning rows come from a tuning plan: {PLAN_HINT}.")
        return True
    if analysis.tuning_rows(L.rows).empty:
        st.info("**No tuning rows in the loaded data** (stage group `tuning`, stages named "
                "`<kernel>_tune_<BMxBNxBK_WMxWN_sS>`).\n\n"
                f"Measure them with {PLAN_HINT}, then point the dashboard at the output: "
                "`streamlit run dashboard/app.py -- --data PATH`. `python -m kernels.tuning` lists each kernel's "
                "candidates and why the invalid ones are rejected before compiling.")
        return True
    tune = analysis.tuning_rows(rows)
    if tune.empty:
        st.info("No tuning rows match the sidebar filters: clear some of them (the tuned kernels' families are "
                f"{', '.join(sorted(analysis.tuning_rows(L.rows)['family'].dropna().unique()))}).")
        return True
    if not (tune["status"].eq("ok") & tune["verified"].eq(True)).any():
        counts = ", ".join(f"{k} {v}" for k, v in tune["status"].value_counts().items())
        st.warning(f"{len(tune)} tuning rows under the current filters, none ok and verified ({counts}): nothing to rank. "
                   "The Reproducibility page lists them with their status reasons.")
        return True
    return False


def best_table(summary: pd.DataFrame) -> None:
    st.subheader("Best configuration per GPU model and size")
    st.caption("**tuning bought** = the ladder stage's median time ÷ the best configuration's. **runner-up gap**: how "
               "much slower the second best is. **ladder A/A**: the ladder configuration measured again as a tuning "
               "row, against the ladder stage itself — the same kernel in two cells, so the cell-to-cell noise a gap "
               "must beat. **winner** is *clear* when the runner-up's spread lies wholly above the best's and its gap "
               "beats |ladder A/A|, *within noise* otherwise: then any of the leaders would do.")
    st.dataframe(summary, hide_index=True, column_order=TABLE_ORDER, column_config={
        "gpu_model": "GPU model", "dtype": "precision", "size_label": "size",
        "ladder_config": st.column_config.TextColumn("ladder config", help="the ladder stage's own tile configuration"),
        "ladder_ms": st.column_config.NumberColumn("ladder (ms)", format="%.4f", help="median time of the ladder stage"),
        "best_config": st.column_config.TextColumn("best config", help="BMxBNxBK block tile _ WMxWN warp tile _ s shared-memory stages"),
        "best_ms": st.column_config.NumberColumn("best (ms)", format="%.4f", help="median time of the fastest configuration"),
        "best_ms_lo": st.column_config.NumberColumn("best low (ms)", format="%.4f", help="see 'spread shown'"),
        "best_ms_hi": st.column_config.NumberColumn("best high (ms)", format="%.4f", help="see 'spread shown'"),
        "best_spread": st.column_config.TextColumn("spread shown", help="min–max of the rows' medians where the best has "
                                                   "two rows or more (repeats, runs, GPUs); q1–q3 of its samples for one row"),
        "best_tflops": st.column_config.NumberColumn("best TFLOP/s", format="%.1f"),
        "best_pct": st.column_config.NumberColumn("best % of cuBLAS", format="%.1f",
                                                  help="against the same-precision cuBLAS timed interleaved with the best's cell"),
        "best_baseline_ms": st.column_config.NumberColumn("cuBLAS (ms)", format="%.4f",
                                                          help="that interleaved cuBLAS's median time: it varies from cell to cell too"),
        "bought": st.column_config.NumberColumn("tuning bought", format="%.2fx", help="ladder ms / best ms"),
        "configs": st.column_config.NumberColumn("configs", format="%d", help="configurations with an ok, verified row here"),
        "failed": st.column_config.NumberColumn("failed", format="%d", help="configurations measured here with no ok, verified row"),
        "runner_up": st.column_config.TextColumn("runner-up"),
        "runner_up_ms": st.column_config.NumberColumn("runner-up (ms)", format="%.4f"),
        "gap_pct": st.column_config.NumberColumn("runner-up gap", format="+%.2f %%", help="runner-up ms / best ms − 1"),
        "winner": st.column_config.TextColumn("winner", help="clear: the runner-up's spread is wholly slower and its gap beats "
                                              "|ladder A/A|; within noise otherwise"),
        "ladder_rank": st.column_config.TextColumn("ladder config's rank", help="where the ladder configuration's tuning row ranks"),
        "ladder_aa_pct": st.column_config.NumberColumn("ladder A/A", format="%+.2f %%",
                                                       help="the ladder configuration's tuning row vs the ladder stage (+: slower)"),
        "best_local_bytes": st.column_config.NumberColumn("best's local mem (B)", format="%d",
                                                          help="local memory per thread of the best: > 0 means it spills"),
        "best_rows": st.column_config.NumberColumn("rows", format="%d", help="rows pooled for the best"),
        "ladder_same_run": st.column_config.CheckboxColumn("ladder same run", help="the ladder stage's rows come from the runs "
                                                           "that measured the tuning rows (else from other runs)"),
        "runs": "run ids",
    })
    notes = []
    if summary["ladder_ms"].isna().any():
        notes.append(f"{int(summary['ladder_ms'].isna().sum())} cell(s) have no ok ladder-stage row, so no 'tuning bought': "
                     "list the kernel under `kernels = [...]` in the tuning plan too.")
    if (~summary["ladder_same_run"] & summary["ladder_ms"].notna()).any():
        notes.append("Some ladder references come from other runs than their tuning rows (unticked 'ladder same run'): "
                     "compare with care.")
    if (summary["best_local_bytes"].fillna(0) > 0).any():
        notes.append("Some winners spill registers to local memory (local mem > 0): a register-hungrier toolchain may differ.")
    for n in notes:
        st.caption("⚠️ " + n)


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L)
    if no_tuning(L, rows):
        return
    cells = analysis.tuning_cells(rows, data.ladder_configs())
    if cells.empty:  # ok and verified, yet no time recorded
        st.warning("No tuning row under the current filters has a median time: nothing to rank.")
        return
    summary = analysis.tuning_summary(cells, rows)
    c = st.columns(4)
    c[0].metric("Cells tuned", len(summary), help="GPU model × kernel × size with an ok, verified tuning row")
    c[1].metric("Configurations measured", int(cells.loc[cells["role"] == analysis.TUNING_ROLE, "stage"].nunique()))
    bought = summary["bought"].dropna()
    c[2].metric("Tuning bought, median", f"{bought.median():.2f}×" if len(bought) else "—")
    c[3].metric("Tuning bought, range", f"{bought.min():.2f}× – {bought.max():.2f}×" if len(bought) else "—")
    best_table(summary)

    st.subheader("Every configuration against size")
    kernels = sorted(cells["kernel"].unique())
    c1, c2, c3, c4 = st.columns([2, 2, 2, 1])
    kernel = c1.selectbox("Kernel", kernels, key="tuning_kernel")
    models = sorted(cells.loc[cells["kernel"] == kernel, "gpu_model"].unique())
    model = c2.selectbox("GPU model", models, key="tuning_gpu")
    metric = c3.radio("Measure", list(charts.TUNING_METRICS), horizontal=True, key="tuning_metric",
                      format_func=lambda m: {"tflops": "TFLOP/s", "pct": "% of cuBLAS"}[m],
                      help="% of cuBLAS divides by the cuBLAS timed interleaved with each cell, whose own time moves "
                           "between cells: rank by TFLOP/s")
    log = c4.toggle("Log scale", value=False, key="tuning_log",
                    help="a log axis: small sizes' TFLOP/s are orders of magnitude below the largest's")
    lines = analysis.tuning_lines(cells[(cells["kernel"] == kernel) & (cells["gpu_model"] == model)])
    st.caption("Grey: every configuration; in colour: those that are the best at some size; black: the ladder stage; "
               "dashed: the ladder configuration measured again as a tuning row. Ringed: the best at each size. "
               "Whiskers on the highlighted lines: spread. Hover a point for its configuration, registers and spills.")
    ui.chart(charts.tuning_chart(lines, metric, log), key="tuning_chart")

    st.subheader("Ranking at one size")
    sizes = analysis.options(lines, "size_label")
    size = st.columns(3)[0].selectbox("Size", sizes, index=len(sizes) - 1, key="tuning_size")
    at = lines[lines["size_label"] == size]
    n = int(at["configs"].max()) if at["configs"].notna().any() else 0
    st.caption(f"{n} configurations of {kernel} on {model} at {size}, fastest first, labelled with how much slower than "
               "the best each is; dashed: the ladder stage. Is the winner alone, or one of a pack within the noise?")
    ui.chart(charts.tuning_rank_chart(lines, size, metric, log), key="tuning_rank_chart")
    if metric == "pct":
        st.caption("Ranked by time. % of cuBLAS scatters more than time does: each cell divides by the cuBLAS timed "
                   "interleaved with it, and that cuBLAS time moves from cell to cell (see 'cuBLAS time' in the tooltip).")
    with st.expander(f"Every configuration of {kernel} on {model} (table)"):
        st.dataframe(lines.drop(columns=["highlight", "best_here", "family", "size", "m", "n", "k", "kernel", "gpu_model"]),
                     hide_index=True, column_config={
                         "size_label": "size", "median_ms": st.column_config.NumberColumn("median (ms)", format="%.4f"),
                         "gap_to_best_pct": st.column_config.NumberColumn("slower than best", format="%.2f %%"),
                         "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
                         "pct": st.column_config.NumberColumn("% of cuBLAS", format="%.1f"),
                         "rank": st.column_config.NumberColumn("rank", format="%d")})


ui.live(body)
