"""Overview: the datasets and runs found, GPUs by model, freshness, any sweep in progress."""
import datetime as dt

import streamlit as st

from dashboard import analysis, charts, data, ui

st.title("gemm-farm · Overview")
st.caption("GEMM kernel stages compiled, verified against cuBLAS and timed on every GPU of the farm. "
           "All pages follow the sidebar filters and refresh while a sweep writes.")


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L, missing_sources=True)
    if ui.stop_if_empty(L, rows):
        return
    now = dt.datetime.now(dt.timezone.utc)
    newest = rows["timestamp"].max()
    c = st.columns(6)
    c[0].metric("Datasets", rows["dataset"].nunique())
    c[1].metric("Runs", rows.groupby(["dataset", "run_id"]).ngroups)
    c[2].metric("GPUs", rows["gpu_uuid"].nunique(), help="distinct GPU UUIDs")
    c[3].metric("GPU models", rows["gpu_model"].nunique())
    ok = int((rows["status"] == "ok").sum())
    c[4].metric("Rows", len(rows), help=f"{ok} ok, {len(rows) - ok} failed verification / skipped / error / timeout")
    c[5].metric("Newest row, age", ui.freshness(newest, now, suffix=""), help=f"{newest} (row timestamps, UTC)")

    live = analysis.sweeps_in_progress(rows, now, window_s=60)
    st.subheader("Sweep in progress")
    if live.empty:
        st.caption(f"No run wrote rows in the last minute (newest row {ui.freshness(newest, now)}).")
    for r in live.itertuples():
        st.markdown(f"**{r.run_id}** · {r.dataset} · {r.gpus} GPU(s), {r.mode} · "
                    f"{r.rows_last_window} rows in the last minute ({r.rows_per_min:.0f}/min) · last row {ui.freshness(r.last_row, now)}")
        st.progress(float(r.progress or 0.0), text=f"{r.rows} of {r.expected} cells of the plan" if r.planned else
                    f"{r.rows} of ≈{r.expected} cells (rows without the plan's size: the stage × shape × repeat grid "
                    "seen so far, an estimate that grows as new stages or sizes appear)")
        st.caption(f"Latest cell per GPU: {r.now_running}")

    runs = analysis.runs_table(rows)
    st.subheader("Runs")
    ui.chart(charts.runs_timeline_chart(runs), key="runs_timeline", stretch=True)
    st.dataframe(runs, hide_index=True, column_config={
        "started": st.column_config.DatetimeColumn("first row (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        "last_row": st.column_config.DatetimeColumn("last row (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        "duration_s": st.column_config.NumberColumn("span (s)", format="%.0f"),
        "not_ok": st.column_config.NumberColumn("not ok", help="failed verification, skipped, error or timeout"),
        "throttled": st.column_config.NumberColumn("throttled rows", help="rows with throttled_fraction > 0")})

    overheads = analysis.run_overheads(data.runs([s for s in L.sources if s.name in set(rows["dataset"])]))
    st.subheader("What each run cost")
    if overheads.empty:
        st.caption("No runs table in these datasets (written by sweeps since the runs table exists).")
    else:
        st.caption("One row per sweep command (a resumed run has one per part). Overhead: the farm's GPU-seconds, "
                   "start-up left out, per GPU-second inside timed windows; the cells' own untimed work (inputs, "
                   "verification, warm-up) keeps it above 1 even with a perfect driver.")
        st.dataframe(overheads, hide_index=True, column_config={
            "started_at": st.column_config.DatetimeColumn("started (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "startup_s": st.column_config.NumberColumn("start-up (s)", format="%.1f"),
            "first_row_s": st.column_config.NumberColumn("first row (s)", format="%.1f"),
            "wall_s": st.column_config.NumberColumn("wall (s)", format="%.1f"),
            "timed_gpu_s": st.column_config.NumberColumn("timed GPU (s)", format="%.1f"),
            "overhead": st.column_config.NumberColumn("overhead", format="%.2fx")})

    left, right = st.columns([2, 3])
    gpus = analysis.gpus_table(rows)
    with left:
        st.subheader("GPUs by model")
        ui.chart(charts.gpus_by_model_chart(gpus), key="gpus_by_model")
    with right:
        st.subheader("Datasets")
        st.dataframe(analysis.datasets_table(rows, [s for s in L.sources if s.name in set(rows["dataset"])], L.files),
                     hide_index=True, column_config={"newest": st.column_config.DatetimeColumn("newest row (UTC)", format="YYYY-MM-DD HH:mm:ss")})
    st.subheader("GPUs")
    st.dataframe(gpus, hide_index=True, column_config={
        "memory_gib": st.column_config.NumberColumn("memory (GiB)", format="%.0f"),
        "last_seen": st.column_config.DatetimeColumn("last row (UTC)", format="YYYY-MM-DD HH:mm:ss")})


ui.live(body)
