"""Overview: the datasets and runs found, GPUs by model, freshness, any sweep in progress."""

from __future__ import annotations

import datetime as dt

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import data, frames, marks, ui
from dashboard.marks import clean, never_null, nominal, tip

# ---------------------------------------------------------------- queries


def runs_table(rows: pd.DataFrame) -> pd.DataFrame:
    cols = [
        "dataset",
        "run_id",
        "started",
        "last_row",
        "duration_s",
        "gpus",
        "gpu_models",
        "stages",
        "shapes",
        "repeats",
        "rows",
        "ok",
        "not_ok",
        "throttled",
        "git_commit",
    ]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    r = rows.assign(_ok=rows["status"] == "ok", _thr=rows["throttled_fraction"].fillna(0) > 0, _shape=rows["shape"])
    g = r.groupby(["dataset", "run_id"], sort=False)
    out = g.agg(
        started=("timestamp", "min"),
        last_row=("timestamp", "max"),
        gpus=("gpu_uuid", "nunique"),
        stages=("stage", "nunique"),
        shapes=("_shape", "nunique"),
        repeats=("repeat", "nunique"),
        rows=("stage", "size"),
        ok=("_ok", "sum"),
        throttled=("_thr", "sum"),
    ).reset_index()
    out["gpu_models"] = g["gpu_model"].agg(frames.distinct_text).values
    out["git_commit"] = (
        g["git_commit"]
        .agg(
            lambda s: frames.distinct_text(x[:12] + ("-dirty" if str(x).endswith("-dirty") else "") for x in s.dropna())
        )
        .values
    )
    out["not_ok"] = out["rows"] - out["ok"]
    out["duration_s"] = (out["last_row"] - out["started"]).dt.total_seconds()
    return out[cols].sort_values("last_row", ascending=False).reset_index(drop=True)


def gpus_table(rows: pd.DataFrame) -> pd.DataFrame:
    cols = [
        "gpu_model",
        "gpu",
        "gpu_name",
        "gpu_uuid",
        "host",
        "arch",
        "sm_count",
        "memory_gib",
        "driver_version",
        "cuda_runtime_version",
        "runs",
        "rows",
        "last_seen",
    ]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    g = rows.groupby(["gpu_model", "gpu_uuid"], sort=True)
    out = g.agg(
        gpu=("gpu", "first"),
        gpu_name=("gpu_name", "first"),
        host=("host", "first"),
        arch=("arch", "first"),
        sm_count=("sm_count", "max"),
        memory=("memory_bytes", "max"),
        driver_version=("driver_version", "last"),
        cuda_runtime_version=("cuda_runtime_version", "last"),
        runs=("run_id", "nunique"),
        rows=("stage", "size"),
        last_seen=("timestamp", "max"),
    ).reset_index()
    out["memory_gib"] = out["memory"] / 2**30
    return out[cols]


def datasets_table(rows: pd.DataFrame, sources, files: dict) -> pd.DataFrame:
    cols = [
        "dataset",
        "path",
        "layout",
        "row_files",
        "telemetry_files",
        "rows",
        "runs",
        "gpus",
        "schema_versions",
        "newest",
    ]
    recs = []
    for s in sources:
        r = rows[rows["dataset"] == s.name] if not rows.empty else rows
        f = files.get(s.name, {})
        recs.append(
            {
                "dataset": s.name,
                "path": s.path,
                "layout": s.layout,
                "row_files": f.get("rows", 0),
                "telemetry_files": f.get("telemetry", 0),
                "rows": len(r),
                "runs": r["run_id"].nunique() if len(r) else 0,
                "gpus": r["gpu_uuid"].nunique() if len(r) else 0,
                "schema_versions": frames.distinct_text(r["schema_version"]) if len(r) else "",
                "newest": r["timestamp"].max() if len(r) else pd.NaT,
            }
        )
    return pd.DataFrame(recs, columns=cols)


def sweeps_in_progress(rows: pd.DataFrame, now: dt.datetime, window_s: float = 60.0) -> pd.DataFrame:
    """Runs that wrote rows in the last `window_s` seconds, with how far they are.

    The total is the plan's: its cells (the rows' `plan_cells`, written by the sweep driver) once per
    GPU (replicated runs) or once per GPU model (sharded runs, where no cell appears on two GPUs of a
    model); `planned` says so. Rows without it (older data, `farm bench`) fall back on the grid seen so
    far, the distinct stages x shapes x repeats, which only grows as new stages or shapes appear: an
    estimate (`planned` False).
    """
    cols = [
        "dataset",
        "run_id",
        "gpus",
        "rows",
        "rows_last_window",
        "rows_per_min",
        "expected",
        "planned",
        "progress",
        "mode",
        "last_row",
        "now_running",
    ]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    cutoff = pd.Timestamp(now) - pd.Timedelta(seconds=window_s)
    live = rows.groupby(["dataset", "run_id"])["timestamp"].max()
    live = live[live >= cutoff]
    recs = []
    for (dset, run), last in live.items():
        r = rows[(rows["dataset"] == dset) & (rows["run_id"] == run)]
        grid = r["stage"].nunique() * r["shape"].nunique() * r["repeat"].nunique()
        cell = ["stage", "m", "n", "k", "repeat"]
        per_model = r.groupby(["gpu_model", *cell])["gpu_uuid"].nunique()
        sharded = r["gpu_uuid"].nunique() > r["gpu_model"].nunique() and (per_model <= 1).all()
        plan_cells = r["plan_cells"].max() if "plan_cells" in r else np.nan
        planned = bool(plan_cells == plan_cells and plan_cells > 0)
        expected = int(plan_cells if planned else grid) * (
            r["gpu_model"].nunique() if sharded else r["gpu_uuid"].nunique()
        )
        recent = r[r["timestamp"] >= cutoff]
        newest = r.sort_values("timestamp").groupby("gpu_uuid").tail(1)
        recs.append(
            {
                "dataset": dset,
                "run_id": run,
                "gpus": r["gpu_uuid"].nunique(),
                "rows": len(r),
                "rows_last_window": len(recent),
                "rows_per_min": len(recent) * 60.0 / window_s,
                "expected": expected,
                "planned": planned,
                "progress": min(1.0, len(r) / expected) if expected else None,
                "mode": "sharded per model" if sharded else "every GPU runs every cell",
                "last_row": last,
                "now_running": "; ".join(
                    f"{g}: {s} {z} r{p}"
                    for g, s, z, p in zip(newest["gpu"], newest["stage"], newest["size_label"], newest["repeat"])
                ),
            }
        )
    return pd.DataFrame(recs, columns=cols)


def run_overheads(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, run and sweep command (a resumed run has several): GPUs, cells, start-up, wall time, summed timed
    GPU windows and the overhead: (wall - start-up) x GPUs / timed GPU seconds, farm time per timed GPU second."""
    if runs.empty:
        return pd.DataFrame(
            columns=[
                "dataset",
                "run_id",
                "started_at",
                "gpus",
                "cells",
                "startup_s",
                "first_row_s",
                "wall_s",
                "timed_gpu_s",
                "overhead",
                "stopped",
            ]
        )
    cells = runs.filter(like="cells_").drop(columns=["cells_not_run", "cells_resumed"]).sum(axis=1)
    g = (
        runs.assign(cells=cells)
        .groupby(["dataset", "run_id", "started_at"], as_index=False)
        .agg(
            gpus=("gpu_uuid", "nunique"),
            cells=("cells", "sum"),
            startup_s=("startup_seconds", "first"),
            first_row_s=("first_row_seconds", "min"),
            wall_s=("wall_seconds", "first"),
            timed_gpu_s=("timed_seconds", "sum"),
            stopped=("interrupted", "any"),
        )
    )
    busy = (g["wall_s"] - g["startup_s"]) * g["gpus"]
    return g.assign(overhead=(busy / g["timed_gpu_s"]).where(g["timed_gpu_s"] > 0)).sort_values(
        "started_at", ascending=False
    )


# ---------------------------------------------------------------- charts


def gpus_by_model_chart(gpus: pd.DataFrame) -> alt.Chart:
    df = clean(
        gpus.groupby("gpu_model", as_index=False).agg(
            gpus=("gpu_uuid", "nunique"),
            rows=("rows", "sum"),
            hosts=("host", lambda s: ", ".join(sorted(set(s.dropna())))),
            uuids=("gpu", lambda s: ", ".join(s)),
        )
    )

    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("gpu_model:N", title=None, sort="-x", axis=alt.Axis(labelLimit=260)),
            x=alt.X("gpus:Q", title="GPUs (distinct UUIDs)", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color("gpu_model:N", legend=None, scale=alt.Scale(range=marks.MEASURED_COLORS)),
            tooltip=[
                nominal("gpu_model", "GPU model"),
                tip("gpus", "GPUs", "d"),
                tip("rows", "rows", "d"),
                nominal("hosts", "hosts"),
                nominal("uuids", "GPUs"),
            ],
        )
        .properties(height=max(60, 32 * len(df)), width=240)
    )


def runs_timeline_chart(runs: pd.DataFrame) -> alt.LayerChart:
    """When each run wrote its rows (first to last row), one bar per dataset · run."""
    df = clean(runs.assign(label=runs["dataset"] + " · " + runs["run_id"]))
    df["end"] = df["last_row"].where(df["last_row"] > df["started"], df["started"] + pd.Timedelta(seconds=1))
    labels = list(df.sort_values("started")["label"])
    span_s = (df["end"].max() - df["started"].min()).total_seconds() if len(df) else 0
    fmt = "%H:%M:%S" if span_s < 1800 else "%H:%M" if span_s < 86400 else "%b %d %H:%M"
    tips = [
        nominal("dataset", "dataset"),
        nominal("run_id", "run id"),
        tip("started", "first row", type_="temporal"),
        tip("last_row", "last row", type_="temporal"),
        tip("duration_s", "span (s)", ".0f"),
        tip("rows", "rows", "d"),
        tip("ok", "ok", "d"),
        tip("not_ok", "not ok", "d"),
        tip("gpus", "GPUs", "d"),
        nominal("gpu_models", "GPU models"),
        nominal("git_commit", "commit"),
    ]
    tips = never_null(df, tips)
    return (
        alt.Chart(df)
        .mark_bar(height={"band": 0.7})
        .encode(
            x=alt.X(
                "started:T",
                title="time (UTC)",
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(labelAngle=0, format=fmt, labelOverlap=True),
            ),
            x2="end:T",
            y=alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=220)),
            color=alt.Color(
                "dataset:N",
                title="dataset",
                scale=alt.Scale(range=marks.MEASURED_COLORS),
                legend=alt.Legend(orient="top", columns=3, labelLimit=180),
            ),
            tooltip=tips,
        )
        .properties(height=max(60, 26 * len(df)), width="container")
    )  # as wide as the page, whatever it is


# ---------------------------------------------------------------- the page

CAPTION = (
    "GEMM kernel stages compiled, verified against cuBLAS and timed on every GPU of the farm. "
    "All pages follow the sidebar filters and refresh while a sweep writes."
)


def body(L, rows, _) -> None:
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

    live = sweeps_in_progress(rows, now, window_s=60)
    st.subheader("Sweep in progress")
    if live.empty:
        st.caption(f"No run wrote rows in the last minute (newest row {ui.freshness(newest, now)}).")
    for r in live.itertuples():
        st.markdown(
            f"**{r.run_id}** · {r.dataset} · {r.gpus} GPU(s), {r.mode} · "
            f"{r.rows_last_window} rows in the last minute ({r.rows_per_min:.0f}/min) · last row {ui.freshness(r.last_row, now)}"
        )
        st.progress(
            float(r.progress or 0.0),
            text=f"{r.rows} of {r.expected} cells of the plan"
            if r.planned
            else f"{r.rows} of ≈{r.expected} cells (rows without the plan's size: the stage × shape × repeat grid "
            "seen so far, an estimate that grows as new stages or sizes appear)",
        )
        st.caption(f"Latest cell per GPU: {r.now_running}")

    runs = runs_table(rows)
    st.subheader("Runs")
    ui.chart(runs_timeline_chart(runs), key="runs_timeline", stretch=True)
    st.dataframe(
        runs,
        hide_index=True,
        column_config={
            "started": st.column_config.DatetimeColumn("first row (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "last_row": st.column_config.DatetimeColumn("last row (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "duration_s": st.column_config.NumberColumn("span (s)", format="%.0f"),
            "not_ok": st.column_config.NumberColumn("not ok", help="failed verification, skipped, error or timeout"),
            "throttled": st.column_config.NumberColumn("throttled rows", help="rows with throttled_fraction > 0"),
        },
    )

    overheads = run_overheads(data.runs([s for s in L.sources if s.name in set(rows["dataset"])]))
    st.subheader("What each run cost")
    if overheads.empty:
        st.caption("No runs table in these datasets (written by sweeps since the runs table exists).")
    else:
        st.caption(
            "One row per sweep command (a resumed run has one per part). Overhead: the farm's GPU-seconds, "
            "start-up left out, per GPU-second inside timed windows; the cells' own untimed work (inputs, "
            "verification, warm-up) keeps it above 1 even with a perfect driver."
        )
        st.dataframe(
            overheads,
            hide_index=True,
            column_config={
                "started_at": st.column_config.DatetimeColumn("started (UTC)", format="YYYY-MM-DD HH:mm:ss"),
                "startup_s": st.column_config.NumberColumn("start-up (s)", format="%.1f"),
                "first_row_s": st.column_config.NumberColumn("first row (s)", format="%.1f"),
                "wall_s": st.column_config.NumberColumn("wall (s)", format="%.1f"),
                "timed_gpu_s": st.column_config.NumberColumn("timed GPU (s)", format="%.1f"),
                "overhead": st.column_config.NumberColumn("overhead", format="%.2fx"),
            },
        )

    left, right = st.columns([2, 3])
    gpus = gpus_table(rows)
    with left:
        st.subheader("GPUs by model")
        ui.chart(gpus_by_model_chart(gpus), key="gpus_by_model")
    with right:
        st.subheader("Datasets")
        st.dataframe(
            datasets_table(rows, [s for s in L.sources if s.name in set(rows["dataset"])], L.files),
            hide_index=True,
            column_config={"newest": st.column_config.DatetimeColumn("newest row (UTC)", format="YYYY-MM-DD HH:mm:ss")},
        )
    st.subheader("GPUs")
    st.dataframe(
        gpus,
        hide_index=True,
        column_config={
            "memory_gib": st.column_config.NumberColumn("memory (GiB)", format="%.0f"),
            "last_seen": st.column_config.DatetimeColumn("last row (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        },
    )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("gemm-farm · Overview", CAPTION, body, missing_sources=True)
