"""History: every run of a stage on a GPU model at a shape, ordered by time, with change points (farm.analysis.changepoints)."""
from urllib.parse import urlencode

import streamlit as st

from dashboard import analysis, charts, history, ui
from farm.analysis.compare import DEFAULT_TOLERANCE

st.title("History")
RULE = ("**Change points.** Each series (GPU model, stage, shape, timing mode) is fitted with levels that change "
        "as few times as the noise allows: a penalised step fit (as asv does) over its runs, each run weighted by the "
        "noise model's variance for it (its repeats, and the run-to-run noise learned from the A/A history of the loaded "
        "datasets; `farm/analysis/changepoints.py`). A step is marked where a new level begins and exceeds half the "
        "tolerance (the smallest difference `farm compare` reports). Where the card, driver, CUDA or library version, SM clock or power limit changed across the step too, "
        "it is marked as an **environment** change, with what changed, and not counted as a regression. Noise alone "
        "marks nothing.")
st.caption("Per stage, GPU model and shape, every run's median time ordered by when it ran, with its commit, like asv "
           "or conbench follow a benchmark. Whiskers: the ~95 % band of each run's median.")


def compare_link(prev_run: str, run: str) -> str:
    """The Compare page with these two runs picked (relative URL: the app's own)."""
    return "compare?" + urlencode({"by": "run", "a": prev_run, "b": run})


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L)
    if ui.stop_if_empty(L, rows):
        return
    with st.expander("How a change is found", expanded=False):
        st.markdown(RULE)
    tol = st.columns([1, 4])[0].number_input("Tolerance (%)", min_value=0.1, max_value=20.0, value=100 * DEFAULT_TOLERANCE, step=0.5,
                          key="hist_tol", help="the smallest change that matters: a step beyond the noise and half of it is a change") / 100
    hist = history.history(rows, tol)
    if hist.empty:
        st.info("No timed rows with per-batch samples under the current filters.")
        return
    runs_per = hist.groupby(["gpu_model", "stage", "size_label"])["run"].transform("size")
    if (runs_per < 2).all():
        st.info("Every stage was measured in one run only under the current filters: a history needs two runs or more "
                "of the same stage on the same GPU model at the same shape. Clear the Runs or Datasets filter.")
    marked = history.changes(hist)
    code = marked[marked["change"]] if not marked.empty else marked
    st.subheader(f"Changes outside the noise ({len(marked)})")
    if marked.empty:
        st.success("No series steps beyond the noise and the tolerance.")
    else:
        st.caption(f"{int((code['verdict'] == 'SLOWER').sum())} regressions and {int((code['verdict'] == 'FASTER').sum())} "
                   f"improvements of the code; {len(marked) - len(code)} steps came with a change of the environment "
                   "(named in its column), not counted as either.")
        table = marked.assign(compare=[compare_link(p, r) for p, r in zip(marked["prev_run"], marked["run"])])
        st.dataframe(table[["compare", "verdict", "diff_pct", "band_pct", "environment", "gpu_model", "stage", "size_label", "launch_change", "prev_run",
                            "run", "commit",
                            "started", "median_ms"]], hide_index=True, height=min(400, 40 + 35 * len(table)), column_config={
            "gpu_model": "GPU model", "size_label": "size", "prev_run": "from run", "run": "to run",
            "launch_change": st.column_config.TextColumn("launch changed", help="the two runs launched this cell differently "
                                                         "(direct from Python against a CUDA graph): at small sizes the "
                                                         "difference is then the host launch overhead"),
            "diff_pct": st.column_config.NumberColumn("vs previous level (%)", format="%+.2f", help="+ is slower"),
            "band_pct": st.column_config.NumberColumn("± band (%)", format="%.2f", help="99 % half-width of the step"),
            "environment": st.column_config.TextColumn("environment changed", help="what else changed across the step "
                                                       "(card, driver, CUDA, library, clocks, power cap): not a regression of the code"),
            "median_ms": st.column_config.NumberColumn("median (ms)", format="%.5f"),
            "started": st.column_config.DatetimeColumn("started (UTC)", format="YYYY-MM-DD HH:mm"),
            "compare": st.column_config.LinkColumn("Compare view", display_text="open ↗",
                                                   help="the two runs side by side on the Compare page")})

    st.subheader("Runs over time")
    multi = hist[runs_per >= 2]
    pool = multi if not multi.empty else hist
    c = st.columns([2, 2, 4])
    models = analysis.options(pool, "gpu_model")
    model = c[0].selectbox("GPU model", models, key="hist_model")
    at_model = pool[pool["gpu_model"] == model]
    sizes = list(dict.fromkeys(at_model.sort_values(["m", "n", "k"])["size_label"]))
    size = c[1].selectbox("Size", sizes, index=len(sizes) - 1, key="hist_size")
    at = at_model[at_model["size_label"] == size]
    stages = list(dict.fromkeys(at.sort_values("order")["stage"]))
    with_changes = list(dict.fromkeys(at.loc[at["change"], "stage"]))
    default = (with_changes or stages)[:6]
    chosen = c[2].multiselect("Stages", stages, default=default, key=f"hist_stages_{model}_{size}",
                              help="by default the stages with a marked change (at most six)")
    if not chosen:
        st.info("Pick a stage.")
        return
    ui.chart(charts.history_chart(at[at["stage"].isin(chosen)]), key="hist_chart")


ui.live(body)
