"""Telemetry: SM clock, temperature and power over each run; time vs SM clock; throttled windows."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames, marks, ui
from dashboard.frames import JOIN_KEYS
from dashboard.marks import (
    clean,
    fields_of,
    flag_marks,
    never_null,
    nominal,
    stage_order,
    stage_scale,
    tip,
    with_provenance,
)
from farm.data import throttle

# ---------------------------------------------------------------- queries

TIMED_SERIES = ("kernel", "baseline", "a", "b")  # a, b: a paired cell's arms
_THROTTLE_BITS = throttle.POWER | throttle.THERMAL | throttle.HW_SLOWDOWN
SAMPLE_PERIOD_MS = 10.0


def timeline(tele: pd.DataFrame, rows: pd.DataFrame, max_points: int = 24000) -> pd.DataFrame:
    """Telemetry samples on one wall-clock axis per GPU: each cell's samples at its row's timestamp + t_ms.

    Cells of one GPU and run are laid end to end in timestamp order: a cell that would begin
    before the previous one ended (timestamps written at the end of a cell) starts where the
    previous one ended. `throttled`: a timed sample (kernel or baseline batches) with a power,
    thermal or hardware-slowdown reason, or an SM clock below 75 % of the GPU's max.
    Thinned to about `max_points` samples in all (at least 1000 per GPU), throttled samples always kept.
    """
    cols = [
        *JOIN_KEYS,
        "gpu",
        "cell",
        "series",
        "t_ms",
        "time",
        "sm_clock_mhz",
        "mem_clock_mhz",
        "temp_c",
        "power_w",
        "reasons",
        "reason_names",
        "max_sm_clock_mhz",
        "throttled",
        "size_label",
    ]
    if tele.empty or rows.empty:
        return pd.DataFrame(columns=cols)
    cells = rows[[*JOIN_KEYS, "timestamp", "max_sm_clock_mhz", "gpu", "size_label"]].drop_duplicates(JOIN_KEYS)
    span = tele.groupby(JOIN_KEYS, sort=False)["t_ms"].agg(["min", "max"]).reset_index()
    cells = cells.merge(span, on=JOIN_KEYS, how="inner").sort_values(["dataset", "run_id", "gpu_uuid", "timestamp"])
    starts = []
    prev_key, prev_end = None, None
    for key, ts, lo, hi in zip(
        zip(cells["dataset"], cells["run_id"], cells["gpu_uuid"]), cells["timestamp"], cells["min"], cells["max"]
    ):
        start = ts
        if key == prev_key and prev_end is not None and ts + pd.Timedelta(milliseconds=float(lo)) < prev_end:
            start = prev_end - pd.Timedelta(milliseconds=float(lo))
        starts.append(start)
        prev_key, prev_end = key, start + pd.Timedelta(milliseconds=float(hi) + SAMPLE_PERIOD_MS)
    cells["start"] = starts
    s = tele.merge(cells[[*JOIN_KEYS, "start", "max_sm_clock_mhz", "gpu", "size_label"]], on=JOIN_KEYS, how="inner")
    s["time"] = s["start"] + pd.to_timedelta(s["t_ms"].astype("float64"), unit="ms")
    reasons = s["reasons"].fillna(0).astype("int64")
    max_clk = s["max_sm_clock_mhz"].astype("float64")
    low = (s["sm_clock_mhz"].astype("float64") < throttle.LOW_CLOCK_FRACTION * max_clk) & max_clk.notna()
    s["throttled"] = s["series"].isin(TIMED_SERIES) & (((reasons & _THROTTLE_BITS) != 0) | low)
    s["reason_names"] = [", ".join(throttle.reason_names(int(x))) for x in reasons]
    s["cell"] = (
        s["gpu_uuid"]
        + "|"
        + s["stage"]
        + "|"
        + s["m"].astype(str)
        + "x"
        + s["n"].astype(str)
        + "x"
        + s["k"].astype(str)
        + "|r"
        + s["repeat"].astype(str)
    )
    s = s.sort_values(["gpu_uuid", "time"])
    n = s.groupby("gpu_uuid")["time"].transform("size")
    per_gpu = max(1000, max_points // max(1, s["gpu_uuid"].nunique()))
    stride = np.maximum(1, np.ceil(n / per_gpu)).astype(int)
    pos = s.groupby("gpu_uuid").cumcount()
    s = s[(pos % stride == 0) | s["throttled"]]
    return s[cols].reset_index(drop=True)


def throttle_windows(tl: pd.DataFrame) -> pd.DataFrame:
    """Runs of consecutive throttled samples per GPU as [start, end) windows."""
    cols = ["gpu", "gpu_uuid", "start", "end", "samples", "reasons", "stages", "min_clock_mhz"]
    if tl.empty or not tl["throttled"].any():
        return pd.DataFrame(columns=cols)
    out = []
    for uuid, g in tl.sort_values("time").groupby("gpu_uuid", sort=False):
        flag = g["throttled"].to_numpy()
        run_id = np.cumsum(np.r_[True, flag[1:] != flag[:-1]])
        for rid in np.unique(run_id[flag]):
            w = g[(run_id == rid)]
            out.append(
                {
                    "gpu": w["gpu"].iloc[0],
                    "gpu_uuid": uuid,
                    "start": w["time"].min(),
                    "end": w["time"].max() + pd.Timedelta(milliseconds=SAMPLE_PERIOD_MS),
                    "samples": len(w),
                    "reasons": ", ".join(sorted({n for x in w["reason_names"] for n in x.split(", ") if n}))
                    or "low clock",
                    "stages": ", ".join(dict.fromkeys(w["stage"] + " " + w["size_label"])),
                    "min_clock_mhz": w["sm_clock_mhz"].min(),
                }
            )
    return pd.DataFrame(out, columns=cols)


def clock_vs_time(rows: pd.DataFrame) -> pd.DataFrame:
    """Timed rows with their median SM clock (% of the GPU's max) and their time relative to the cell's median
    over all rows shown (%)."""
    t = frames.timed(rows)
    t = t[t["sm_clock_median_mhz"].notna() & (t["max_sm_clock_mhz"] > 0)] if not t.empty else t
    if t.empty:
        return t.assign(rel_pct=pd.Series(dtype="float64"), clock_pct=pd.Series(dtype="float64"))
    med = t.groupby(["gpu_model", "stage", "m", "n", "k"])["median_ms"].transform("median")
    return t.assign(
        rel_pct=100 * (t["median_ms"] / med - 1), clock_pct=100 * t["sm_clock_median_mhz"] / t["max_sm_clock_mhz"]
    )


# ---------------------------------------------------------------- charts


def telemetry_chart(tl: pd.DataFrame, windows: pd.DataFrame) -> alt.VConcatChart:
    """SM clock, temperature and power against wall-clock time (UTC), one line per GPU; red bands: throttled windows."""
    tips = [
        tip("time", "time", type_="temporal"),
        nominal("gpu", "GPU"),
        nominal("run_id", "run id"),
        nominal("stage", "stage"),
        nominal("size_label", "size"),
        tip("repeat", "repeat", "d"),
        nominal("series", "series"),
        tip("t_ms", "t in cell (ms)", ".1f"),
        tip("sm_clock_mhz", "SM clock (MHz)", "d"),
        tip("temp_c", "temperature (°C)", "d"),
        tip("power_w", "power (W)", ".1f"),
        nominal("reason_names", "clock-event reasons"),
        nominal("throttled", "throttled"),
    ]
    df = clean(tl, [*fields_of(tips), "cell"])
    tips = never_null(df, tips)
    gpus = sorted(df["gpu"].unique().tolist())

    def time_x(field: str, labelled: bool) -> alt.X:
        if labelled:
            return alt.X(
                f"{field}:T",
                title="time (UTC)",
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(format="%H:%M:%S", labelAngle=0),
            )
        return alt.X(
            f"{field}:T",
            title=None,
            scale=alt.Scale(type="utc"),
            axis=alt.Axis(labels=False, ticks=False, domain=False),
        )

    bottom, inner = time_x("time", True), time_x("time", False)
    color = alt.Color(
        "gpu:N",
        title="GPU",
        sort=gpus,
        scale=alt.Scale(range=marks.MEASURED_COLORS),
        legend=alt.Legend(orient="top", labelLimit=300),
    )
    wtips = [
        nominal("gpu", "GPU"),
        tip("start", "from", type_="temporal"),
        tip("end", "to", type_="temporal"),
        tip("samples", "samples", "d"),
        nominal("reasons", "reasons"),
        nominal("stages", "cells"),
        tip("min_clock_mhz", "lowest SM clock (MHz)", "d"),
    ]
    wdf = clean(windows, fields_of(wtips))
    wtips = never_null(wdf, wtips)
    zoom = alt.selection_interval(encodings=["x"], bind="scales")

    def panel(
        field: str, title: str, extra=None, x=inner, scale: alt.Scale | None = None, fmt: str = "~s"
    ) -> alt.LayerChart:
        layers = []
        if not wdf.empty:
            layers.append(
                alt.Chart(wdf)
                .mark_rect(color="#e45756", opacity=0.25)
                .encode(x=time_x("start", x is bottom), x2="end:T", tooltip=wtips)
            )
        line = (
            alt.Chart()
            .mark_line(strokeWidth=1.2, interpolate="step-after")
            .encode(
                x=x,
                y=alt.Y(f"{field}:Q", title=title, scale=scale or alt.Scale(zero=False), axis=alt.Axis(format=fmt)),
                color=color,
                detail="cell:N",
            )
        )  # one line per cell: the gaps between cells stay gaps
        pts = (
            alt.Chart()
            .mark_circle(size=8, opacity=0.5)
            .encode(x=x, y=alt.Y(f"{field}:Q", title=title), color=color, tooltip=tips)
        )
        layers += [line, pts]
        if extra is not None:
            layers.append(extra)
        return alt.layer(*layers).properties(width=700, height=170)

    clock_ref = None
    top = float(df["sm_clock_mhz"].max())
    if "max_sm_clock_mhz" in tl and tl["max_sm_clock_mhz"].notna().any():
        ref = clean(tl.groupby("gpu", as_index=False)["max_sm_clock_mhz"].max())
        top = max(top, float(ref["max_sm_clock_mhz"].max()))
        clock_ref = (
            alt.Chart(ref)
            .mark_rule(strokeDash=[6, 4], color="#333")
            .encode(
                y=alt.Y("max_sm_clock_mhz:Q", title="SM clock (MHz; dashed: max)"),
                tooltip=[nominal("gpu", "GPU"), tip("max_sm_clock_mhz", "max SM clock (MHz)", "d")],
            )
        )
    # From half the max clock (or lower, if the clock went lower) to just above the max: a drop reads in proportion.
    clock_scale = alt.Scale(domain=[min(float(df["sm_clock_mhz"].min()) - 50, 0.5 * top), top * 1.04], nice=False)
    clock = panel("sm_clock_mhz", "SM clock (MHz; dashed: max)", clock_ref, scale=clock_scale, fmt="d").add_params(zoom)
    return alt.vconcat(
        clock,
        panel("temp_c", "temperature (°C)", fmt="d"),
        panel("power_w", "board power (W)", x=bottom, fmt="d"),
        spacing=14,
        data=df,
    ).resolve_scale(x="shared")


BELOW = alt.Legend(orient="bottom", columns=4, labelLimit=200)  # a legend under the plot keeps the chart narrow


def robust_domain(values: pd.Series, keep: float = 0.99, k: float = 20.0, least: float = 1.0) -> list[float]:
    """An axis symmetric about 0 holding the `keep` fraction of `values` nearest 0, but no wider than `k` robust
    standard deviations (1.4826 x the median absolute deviation: where outliers are more than 1 - `keep` of a few
    rows) and at least ±`least`: a few outliers must not squash everyone else into a line."""
    mad = float((values - values.median()).abs().median())
    half = max(least, min(float(values.abs().quantile(keep)), k * 1.4826 * mad))
    return [-half, half]


def clock_time_chart(ct: pd.DataFrame) -> alt.LayerChart:
    """Each timed row: its median SM clock vs its time relative to the cell's median (%). The time axis is set by the
    bulk of the rows (robust_domain); rows beyond it sit at its edge, ringed, their value in the tooltip."""
    tips = [
        nominal("dataset", "dataset"),
        nominal("run_id", "run id"),
        nominal("gpu", "GPU"),
        nominal("family", "family"),
        nominal("stage", "stage"),
        nominal("size_label", "size"),
        tip("repeat", "repeat", "d"),
        tip("sm_clock_median_mhz", "median SM clock (MHz)", ".0f"),
        tip("sm_clock_min_mhz", "lowest SM clock (MHz)", ".0f"),
        tip("median_ms", "median time (ms)", ".5f"),
        tip("clock_pct", "median SM clock (% of max)", ".2f"),
        tip("max_sm_clock_mhz", "max SM clock (MHz)", ".0f"),
        tip("rel_pct", "vs cell median (%)", "+.3f"),
        tip("throttled_fraction", "throttled fraction", ".3f"),
        nominal("throttle_state", "power / thermal"),
    ]
    tips = with_provenance(tips, marks.ROW_PROVENANCE_TIPS)
    ct = ct.assign(
        throttle_state=[
            ("power-capped" if p is True else "no power cap") + (", thermal slowdown" if t is True else "")
            for p, t in zip(ct.get("throttle_power", [None] * len(ct)), ct.get("throttle_thermal", [None] * len(ct)))
        ]
    )
    df = clean(ct, [*fields_of(tips), "order", "family", "size"])
    tips = never_null(df, tips)
    domain = robust_domain(df["rel_pct"])
    df["beyond"] = (df["rel_pct"] < domain[0]) | (df["rel_pct"] > domain[1])
    stages = stage_order(df)
    sizes = list(dict.fromkeys(df.sort_values("size")["size_label"]))
    lo, hi = float(df["clock_pct"].min()), float(df["clock_pct"].max())
    pad = max(2.0, 0.05 * (hi - lo))
    if len(stages) <= 20:
        color = alt.Color("stage:N", sort=stages, title="stage", scale=stage_scale(df, stages), legend=BELOW)
    else:  # too many stages for a legend one can read: colour by family, the stage is in the tooltip
        fams = list(dict.fromkeys(df.sort_values("order")["family"]))
        color = alt.Color("family:N", sort=fams, title="family", scale=alt.Scale(range=marks.TABLEAU10), legend=BELOW)
    x = alt.X(
        "clock_pct:Q",
        title="median SM clock during the cell (% of the GPU's max)",
        scale=alt.Scale(domain=[lo - pad, min(hi + pad, max(hi, 100.0) + 2)], nice=False),
    )
    y = alt.Y("rel_pct:Q", title="time vs cell median (%)", scale=alt.Scale(domain=domain, clamp=True, nice=False))
    pts = (
        alt.Chart()
        .mark_point(filled=True, size=40, opacity=0.7)
        .encode(
            x=x, y=y, color=color, shape=alt.Shape("size_label:N", title="size", sort=sizes, legend=BELOW), tooltip=tips
        )
    )
    ringed = (
        alt.Chart()
        .transform_filter("datum.beyond")
        .mark_point(size=160, strokeWidth=1.5, color="#000")
        .encode(x=x, y=y, tooltip=tips)
    )
    n = int(df["beyond"].sum())
    note = (
        f"{n} row(s) beyond ±{domain[1]:.2g} % sit at the edge, ringed" if n else f"every row within ±{domain[1]:.2g} %"
    )
    return alt.layer(pts, ringed, flag_marks(x, y, tips, "launch_flag"), data=df).properties(
        width=640, height=360, title=alt.TitleParams("Time vs SM clock", subtitle=note, anchor="start")
    )


# ---------------------------------------------------------------- the page

CAPTION = (
    "NVML samples (every 10 ms) taken while cells were measured. Each cell's samples sit at its row's "
    "timestamp plus their offset in the cell, cells of one GPU laid end to end; the gaps between cells are "
    "compilation and verification. Red bands: throttled windows (power, thermal or hardware slowdown, or an "
    "SM clock below 75 % of the max, during timed batches)."
)


def body(L, rows, tele) -> None:
    pairs = sorted(set(zip(tele["dataset"], tele["run_id"]))) if not tele.empty else []
    st.subheader("Over a run")
    pick = ui.pick_run("Run", pairs, "tele_run", rows)
    if pick is None:
        st.info("No telemetry samples under the current filters (sweeps run with telemetry off write none).")
    else:
        run_rows = rows[(rows["dataset"] == pick[0]) & (rows["run_id"] == pick[1])]
        run_tele = tele[(tele["dataset"] == pick[0]) & (tele["run_id"] == pick[1])]
        gpus = frames.options(run_rows, "gpu")
        chosen = st.multiselect("GPUs", gpus, default=gpus, key="tele_gpus")
        run_rows = run_rows[run_rows["gpu"].isin(chosen)]
        tl = timeline(run_tele, run_rows)
        if tl.empty:
            st.info("No samples for these GPUs.")
        else:
            windows = throttle_windows(tl)
            n_thr = int(tl["throttled"].sum())
            c = st.columns(4)
            c[0].metric(
                "samples shown",
                len(tl),
                help="thinned to ~24000 in all (every k-th sample); throttled samples always kept",
            )
            c[1].metric("throttled windows", len(windows))
            c[2].metric("SM clock range (MHz)", f"{tl['sm_clock_mhz'].min():.0f}–{tl['sm_clock_mhz'].max():.0f}")
            c[3].metric("peak temperature (°C)", f"{tl['temp_c'].max():.0f}")
            ui.chart(telemetry_chart(tl, windows), key="tele_chart")
            st.caption("Drag to pan, scroll to zoom the time axis.")
            if n_thr:
                st.dataframe(
                    windows.drop(columns=["gpu_uuid"]),
                    hide_index=True,
                    column_config={
                        "stages": "cells",
                        "min_clock_mhz": st.column_config.NumberColumn("lowest SM clock (MHz)", format="%d"),
                        "start": st.column_config.DatetimeColumn("from (UTC)", format="HH:mm:ss.SSS"),
                        "end": st.column_config.DatetimeColumn("to (UTC)", format="HH:mm:ss.SSS"),
                    },
                )
            else:
                st.success("No throttled samples in this run.")

    st.subheader("Time vs SM clock")
    ct = clock_vs_time(rows)
    if ct.empty:
        st.info("No rows with a sampled SM clock under the current filters.")
    else:
        st.caption(
            "Each timed row: the median SM clock during its batches (as % of its GPU's max SM clock, so GPU "
            "models compare) against its time relative to the median of all rows of the same cell (GPU model, "
            "stage, shape) shown here. Slow rows at low clocks would mean the clock explains the spread."
        )
        clocks = ct.groupby("gpu_model")["sm_clock_median_mhz"].agg(["min", "max"])
        steady = clocks[clocks["min"] == clocks["max"]]
        if len(steady):
            st.caption(
                "SM clock identical in every row on "
                + ", ".join(f"{m} ({r['min']:.0f} MHz)" for m, r in steady.iterrows())
                + ": there the clock does not explain the spread."
            )
        ui.chart(clock_time_chart(ct), key="clock_time")

    st.subheader("Throttled rows")
    thr = rows[(rows["throttled_fraction"].fillna(0) > 0)]
    if thr.empty:
        st.caption("No row has throttled samples (throttled_fraction > 0).")
    else:
        st.dataframe(
            thr[
                [
                    "dataset",
                    "run_id",
                    "gpu",
                    "stage",
                    "size_label",
                    "repeat",
                    "throttled_fraction",
                    "low_clock_fraction",
                    "sm_clock_min_mhz",
                    "sm_clock_median_mhz",
                    "temp_max_c",
                    "power_mean_w",
                    "clock_event_names",
                ]
            ],
            hide_index=True,
            column_config={
                "run_id": "run",
                "size_label": "size",
                "throttled_fraction": "throttled fraction",
                "low_clock_fraction": "low-clock fraction",
                "sm_clock_min_mhz": "lowest SM clock (MHz)",
                "sm_clock_median_mhz": "median SM clock (MHz)",
                "temp_max_c": "max temp (°C)",
                "power_mean_w": "mean power (W)",
                "clock_event_names": "clock-event reasons",
            },
        )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Telemetry", CAPTION, body)
