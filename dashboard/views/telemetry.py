"""Telemetry: SM clock, temperature and power over each run; time vs SM clock; throttled windows."""
import streamlit as st

from dashboard import analysis, charts, ui

st.title("Telemetry")
st.caption("NVML samples (every 10 ms) taken while cells were measured. Each cell's samples sit at its row's "
           "timestamp plus their offset in the cell, cells of one GPU laid end to end; the gaps between cells are "
           "compilation and verification. Red bands: throttled windows (power, thermal or hardware slowdown, or an "
           "SM clock below 75 % of the max, during timed batches).")


def body() -> None:
    L, rows, tele = ui.filtered()
    ui.messages(L)
    if ui.stop_if_empty(L, rows):
        return
    pairs = sorted(set(zip(tele["dataset"], tele["run_id"]))) if not tele.empty else []
    st.subheader("Over a run")
    pick = ui.pick_run("Run", pairs, "tele_run", rows)
    if pick is None:
        st.info("No telemetry samples under the current filters (sweeps run with telemetry off write none).")
    else:
        run_rows = rows[(rows["dataset"] == pick[0]) & (rows["run_id"] == pick[1])]
        run_tele = tele[(tele["dataset"] == pick[0]) & (tele["run_id"] == pick[1])]
        gpus = analysis.options(run_rows, "gpu")
        chosen = st.multiselect("GPUs", gpus, default=gpus, key="tele_gpus")
        run_rows = run_rows[run_rows["gpu"].isin(chosen)]
        tl = analysis.timeline(run_tele, run_rows)
        if tl.empty:
            st.info("No samples for these GPUs.")
        else:
            windows = analysis.throttle_windows(tl)
            n_thr = int(tl["throttled"].sum())
            c = st.columns(4)
            c[0].metric("samples shown", len(tl), help="thinned to ~24000 in all (every k-th sample); throttled samples always kept")
            c[1].metric("throttled windows", len(windows))
            c[2].metric("SM clock range (MHz)", f"{tl['sm_clock_mhz'].min():.0f}–{tl['sm_clock_mhz'].max():.0f}")
            c[3].metric("peak temperature (°C)", f"{tl['temp_c'].max():.0f}")
            ui.chart(charts.telemetry_chart(tl, windows), key="tele_chart")
            st.caption("Drag to pan, scroll to zoom the time axis.")
            if n_thr:
                st.dataframe(windows.drop(columns=["gpu_uuid"]), hide_index=True, column_config={
                    "stages": "cells", "min_clock_mhz": st.column_config.NumberColumn("lowest SM clock (MHz)", format="%d"),
                    "start": st.column_config.DatetimeColumn("from (UTC)", format="HH:mm:ss.SSS"),
                    "end": st.column_config.DatetimeColumn("to (UTC)", format="HH:mm:ss.SSS")})
            else:
                st.success("No throttled samples in this run.")

    st.subheader("Time vs SM clock")
    ct = analysis.clock_vs_time(rows)
    if ct.empty:
        st.info("No rows with a sampled SM clock under the current filters.")
    else:
        st.caption("Each timed row: the median SM clock during its batches (as % of its GPU's max SM clock, so GPU "
                   "models compare) against its time relative to the median of all rows of the same cell (GPU model, "
                   "stage, shape) shown here. Slow rows at low clocks would mean the clock explains the spread.")
        clocks = ct.groupby("gpu_model")["sm_clock_median_mhz"].agg(["min", "max"])
        steady = clocks[clocks["min"] == clocks["max"]]
        if len(steady):
            st.caption("SM clock identical in every row on " + ", ".join(f"{m} ({r['min']:.0f} MHz)" for m, r in steady.iterrows())
                       + ": there the clock does not explain the spread.")
        ui.chart(charts.clock_time_chart(ct), key="clock_time")

    st.subheader("Throttled rows")
    thr = rows[(rows["throttled_fraction"].fillna(0) > 0)]
    if thr.empty:
        st.caption("No row has throttled samples (throttled_fraction > 0).")
    else:
        st.dataframe(thr[["dataset", "run_id", "gpu", "stage", "size_label", "repeat", "throttled_fraction", "low_clock_fraction",
                          "sm_clock_min_mhz", "sm_clock_median_mhz", "temp_max_c", "power_mean_w", "clock_event_names"]],
                     hide_index=True, column_config={
                         "run_id": "run", "size_label": "size", "throttled_fraction": "throttled fraction",
                         "low_clock_fraction": "low-clock fraction", "sm_clock_min_mhz": "lowest SM clock (MHz)",
                         "sm_clock_median_mhz": "median SM clock (MHz)", "temp_max_c": "max temp (°C)",
                         "power_mean_w": "mean power (W)", "clock_event_names": "clock-event reasons"})


ui.live(body)
