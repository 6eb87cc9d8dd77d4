"""Reproducibility: spread per cell, A/A and GPU-to-GPU comparisons, untrustworthy cells first."""
import streamlit as st

from dashboard import analysis, charts, ui
from farm.analysis.compare import DEFAULT_TOLERANCE

st.title("Reproducibility")
st.caption("Can the numbers be trusted? Cells that cannot (unverified, throttled, noisy) come first; then the spread "
           "of each cell's samples, and noise-aware comparisons (farm.analysis.compare) of repeats, GPUs and runs.")


MAX_CHART_CELLS = 30  # the page stays about three screens tall: the table below a chart has every comparison
MAX_SPREAD_STAGES = 12


def comparison(df, tol: float, title: str, key: str, empty: str = "Nothing to compare.") -> None:
    if df.empty:
        st.info(empty)
        return
    s = analysis.comparison_summary(df, tol)
    c = st.columns(6)
    c[0].metric("comparisons", s["comparisons"])
    c[1].metric("SAME", s["SAME"], help=f"the whole ~95 % band within ±{100 * tol:g} %")
    c[2].metric("FASTER / SLOWER", f"{s['FASTER']} / {s['SLOWER']}", help="band excludes 0 and |diff| > half the tolerance")
    c[3].metric("UNCLEAR", s["UNCLEAR"], help="too noisy to say same or different")
    c[4].metric("median |diff|", f"{s['median_abs_diff_pct']:.3f} %")
    c[5].metric("median band", f"±{s['median_band_pct']:.3f} %")
    charts_df = df
    if df["cell"].nunique() > MAX_CHART_CELLS:
        not_same = df[df["verdict"] != "SAME"]
        worst = not_same.assign(_d=not_same["diff_pct"].abs()).sort_values("_d", ascending=False)["cell"].drop_duplicates()
        charts_df = not_same[not_same["cell"].isin(set(worst.head(MAX_CHART_CELLS)))]
        st.caption(f"{df['cell'].nunique()} cells: the chart shows the {charts_df['cell'].nunique()} cells, of "
                   f"{not_same['cell'].nunique()} not SAME, with the largest differences; the table below has them all.")
    if not charts_df.empty:
        ui.chart(charts.comparison_chart(charts_df, 100 * tol, title), key=f"{key}_chart")
    with st.expander("Table"):
        st.dataframe(df.drop(columns=["order", "cell"], errors="ignore"), hide_index=True)


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L)
    if ui.stop_if_empty(L, rows):
        return
    c1, c2 = st.columns(2)
    cv_limit = c1.number_input("Noise threshold (%)", min_value=0.05, max_value=50.0, value=2.0, step=0.25, key="repro_cv",
                               help="a cell is noisy when a repeat's CV or IQR/median, its repeats' (max−min)/median, or an A/A "
                                    "band exceed this, or when an A/A pair of its repeats is FASTER/SLOWER")
    tol = c2.number_input("Comparison tolerance (%)", min_value=0.1, max_value=20.0, value=100 * DEFAULT_TOLERANCE, step=0.5,
                          key="repro_tol", help="farm.analysis.compare: SAME when the whole ~95 % band lies within ±tolerance") / 100

    cells = analysis.cell_spread(rows, cv_limit / 100, analysis.aa_disagreements(rows, tol, cv_limit / 100))
    bad = cells[cells["severity"] > 0]
    st.subheader("Cells that cannot be trusted")
    m = st.columns(4)
    m[0].metric("untrusted cells", len(bad), help=f"of {len(cells)} cells (dataset, run, GPU, stage, shape) shown: "
                "unverified, throttled or noisy; a cell can be several")
    for i, issue in enumerate(("unverified", "throttled", "noisy")):
        m[i + 1].metric(issue, int(cells["issues"].str.contains(issue).sum()), help=f"of {len(cells)} cells")
    st.caption(f"{len(bad)} of {len(cells)} cells cannot be trusted; they head the table.")
    if bad.empty:
        st.success("Every cell shown is verified, unthrottled and within the noise threshold.")
    shown = ["issues", "dataset", "run_id", "gpu", "stage", "size_label", "repeats", "statuses", "median_ms", "cv_max",
             "iqr_rel_max", "repeat_spread", "aa", "throttled_max", "status_reason"]
    st.dataframe(cells[shown], hide_index=True, height=320, column_config={
        "size_label": "size", "run_id": "run",
        "issues": st.column_config.TextColumn("issues", help="unverified, throttled, noisy: untrustworthy cells first"),
        "median_ms": st.column_config.NumberColumn("median (ms)", format="%.4f"),
        "cv_max": st.column_config.NumberColumn("CV max", format="percent"),
        "iqr_rel_max": st.column_config.NumberColumn("IQR/median max", format="percent"),
        "repeat_spread": st.column_config.NumberColumn("repeats (max−min)/median", format="percent"),
        "aa": st.column_config.TextColumn("repeats disagree (A/A)", help="an A/A pair FASTER/SLOWER, or its band wider than the noise threshold"),
        "throttled_max": st.column_config.NumberColumn("throttled fraction max", format="%.3f")})

    spread_tab, aa_tab, g2g_tab, r2r_tab = st.tabs(["Spread of samples", "A/A: repeats of one run",
                                                    "GPU to GPU: same model, same run", "Run to run"])
    with spread_tab:
        spread(rows, cv_limit)
    with aa_tab:
        repeats(rows, tol)
    with g2g_tab:
        gpus(rows, tol)
    with r2r_tab:
        run_to_run(rows, tol)


def spread(rows, cv_limit: float) -> None:
    per_row = analysis.per_row_spread(rows)
    if per_row.empty:
        st.info("No timed rows.")
        return
    noisiest = per_row.groupby("stage")["cv_pct"].max().sort_values(ascending=False).index.tolist()
    chosen = st.multiselect("Stages", noisiest, default=noisiest[:MAX_SPREAD_STAGES], key="repro_spread_stages",
                            help=f"by default the {MAX_SPREAD_STAGES} stages whose rows' CV is highest")
    st.caption("Each timed row's CV and IQR / median of its samples; dashed: the noise threshold.")
    if chosen:
        ui.chart(charts.spread_chart(per_row[per_row["stage"].isin(chosen)], cv_limit), key="spread_chart")


def repeats(rows, tol: float) -> None:
    st.caption("Every pair of repeats of each cell on each GPU, each repeat a side of its own: how far apart two "
               "measurements of the same thing land.")
    ui.calibration(rows, tol, set(rows["gpu_model"]))
    pick = ui.pick_run("Run", analysis.runs_with_repeats(rows), "repro_aa_run", rows)
    if pick is None:
        st.info("No run with two repeats of a cell under the current filters.")
    else:
        run_rows = rows[rows["dataset"] == pick[0]]
        comparison(analysis.aa(run_rows, pick[1], tol), tol, f"A/A: repeats of {pick[1]}", "aa")


def gpus(rows, tol: float) -> None:
    pick = ui.pick_run("Run", analysis.runs_with_gpu_pairs(rows), "repro_gpu_run", rows)
    if pick is None:
        st.info("No run with two GPUs of one model measuring the same cells under the current filters.")
    else:
        run_rows = rows[rows["dataset"] == pick[0]]
        comparison(analysis.gpu_to_gpu(run_rows, pick[1], tol), tol, f"GPU to GPU in {pick[1]}", "g2g")


def run_to_run(rows, tol: float) -> None:
    st.caption("Run B against run A, per GPU model, stage and shape measured in both (repeats pooled per run); "
               "by default the two runs that share the most cells.")
    runs = sorted(set(zip(rows["dataset"], rows["run_id"])))
    if len(runs) < 2:
        st.info("One run only under the current filters.")
    else:
        c1, c2 = st.columns(2)
        fmt = lambda p: f"{p[1]}  ·  {p[0]}"  # noqa: E731
        best = analysis.best_run_pair(rows)
        pair = best or (runs[0], runs[1])
        a = c1.selectbox("A", runs, index=runs.index(pair[0]), key="repro_run_a", format_func=fmt)
        b = c2.selectbox("B", runs, index=runs.index(pair[1]), key="repro_run_b", format_func=fmt)
        if a == b:
            st.info("Pick two different runs.")
        else:
            df = analysis.run_to_run(rows, a, b, tol)
            comparison(df, tol, f"{b[1]} vs {a[1]}", "r2r",
                       empty="These two runs measured no cell in common (same GPU model, stage and shape)."
                       + ("" if best else " No two runs do under the current filters."))


ui.live(body)
