"""Peak & roofline: every stage and baseline against the chip's dense peak for its precision, and a roofline per GPU
(the ceilings are farm.data.peak's)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames, marks, ui
from dashboard.marks import (
    clean,
    dtype_color,
    fields_of,
    flag_marks,
    never_null,
    nominal,
    stage_order,
    tip,
    with_provenance,
)
from farm.data import peak as fpeak

# ---------------------------------------------------------------- queries

DEVICE = ["arch", "compute_capability", "dtype", "sm_count", "max_sm_clock_mhz", "gpu_name"]
PEAK_FORMULA = "peak = dense FLOP per clock per SM (per architecture and precision) × SMs × max SM clock (NVML)"


def with_peak(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` plus peak_tflops (the row's GPU, its precision), pct_of_peak (of flops / median_ms), intensity
    (FLOP per compulsory DRAM byte) and bandwidth_tbs (data-sheet memory bandwidth, TB/s)."""
    out = rows.copy()
    if out.empty:
        for c in ("peak_tflops", "pct_of_peak", "intensity", "bandwidth_tbs"):
            out[c] = pd.Series(dtype="float64")
        return out
    keys = out[DEVICE].astype("object").where(out[DEVICE].notna(), None)
    peaks = {
        k: fpeak.peak_tflops(fpeak.arch_of(k[0], k[1]), k[2] or "", k[3], k[4], k[5])
        for k in set(map(tuple, keys.to_numpy()))
    }
    out["peak_tflops"] = [peaks[tuple(k)] for k in keys.to_numpy()]
    out["peak_tflops"] = out["peak_tflops"].astype("float64")
    out["pct_of_peak"] = 100 * out["flops"] / out["median_ms"] / 1e9 / out["peak_tflops"]
    out["intensity"] = [
        fpeak.intensity(m, n, k, d) if d in fpeak.OPERAND_BYTES else np.nan
        for m, n, k, d in zip(out["m"], out["n"], out["k"], out["dtype"])
    ]
    out["bandwidth_tbs"] = out["gpu_name"].map(fpeak.bandwidth_tbs).astype("float64")
    return out


CELL_KEYS = ["gpu_model", "family", "stage", "stage_group", "dtype", "order", "m", "n", "k", "size", "size_label"]


def peak_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per GPU model, stage and shape (repeats, runs and same-model GPUs pooled as frames.cell_stats does)
    with its % of peak (median and spread), the peak it is measured against and its arithmetic intensity."""
    t = with_peak(frames.timed(rows))
    t = t[t["peak_tflops"].notna()] if not t.empty else t
    cells = frames.cell_stats(t, CELL_KEYS)
    extra = ["peak_tflops", "pct_of_peak", "pct_of_peak_lo", "pct_of_peak_hi", "intensity", "kind"]
    if cells.empty:
        return cells.assign(**{c: pd.Series(dtype="float64") for c in extra})
    attrs = (
        t.groupby(CELL_KEYS, dropna=False, sort=False)
        .agg(peak_tflops=("peak_tflops", "median"), intensity=("intensity", "first"))
        .reset_index()
    )
    out = cells.merge(attrs, on=CELL_KEYS, how="left")
    for suffix in ("", "_lo", "_hi"):
        out[f"pct_of_peak{suffix}"] = 100 * out[f"tflops{suffix}"] / out["peak_tflops"]
    out["kind"] = np.where(out["family"] == "baseline", "baseline", "kernel")
    return out


def peak_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GPU model and precision seen: the peak, how it is made (FLOP/clock/SM, SMs, clock), the memory bandwidth,
    and where each number comes from."""
    cols = [
        "gpu_model",
        "gpu_name",
        "arch",
        "dtype",
        "unit",
        "flop_per_clock_per_sm",
        "sm_count",
        "max_sm_clock_mhz",
        "peak_tflops",
        "bandwidth_tbs",
        "ridge_flop_per_byte",
        "source",
        "bandwidth_source",
    ]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    g = (
        rows.groupby(["gpu_model", "dtype"], sort=True)
        .agg(
            gpu_name=("gpu_name", "first"),
            arch=("arch", "first"),
            cc=("compute_capability", "first"),
            sm_count=("sm_count", "max"),
            max_sm_clock_mhz=("max_sm_clock_mhz", "max"),
        )
        .reset_index()
    )
    recs = []
    for r in g.itertuples():
        arch = fpeak.arch_of(r.arch, r.cc)
        rate = fpeak.rate(arch, r.dtype)
        peak = fpeak.peak_tflops(arch, r.dtype, r.sm_count, r.max_sm_clock_mhz, r.gpu_name)
        bw = fpeak.BANDWIDTH_TBS.get(r.gpu_name or "")
        source = (
            f"no entry for {arch} {r.dtype}: no peak"
            if rate is None
            else rate.source
            if peak
            else f"no max SM clock recorded (telemetry off): no peak. {rate.source}"
        )
        recs.append(
            {
                "gpu_model": r.gpu_model,
                "gpu_name": r.gpu_name,
                "arch": arch,
                "dtype": r.dtype,
                "unit": fpeak.UNIT.get(r.dtype, ""),
                "flop_per_clock_per_sm": fpeak.flop_per_clock(arch, r.dtype, r.gpu_name),
                "sm_count": r.sm_count,
                "max_sm_clock_mhz": r.max_sm_clock_mhz,
                "peak_tflops": peak,
                "bandwidth_tbs": bw[0] if bw else None,
                "ridge_flop_per_byte": peak / bw[0] if peak and bw else None,
                "source": source,
                "bandwidth_source": bw[1] if bw else "no data-sheet entry for this device",
            }
        )
    out = pd.DataFrame(recs, columns=cols)
    for c in ("flop_per_clock_per_sm", "peak_tflops", "bandwidth_tbs", "ridge_flop_per_byte"):
        out[c] = out[c].astype("float64")
    return out


def roofs(table: pd.DataFrame, lo: float, hi: float, points: int = 60) -> pd.DataFrame:
    """The roofline of each GPU model and precision, min(peak, bandwidth × intensity), sampled on a log grid
    from `lo` to `hi` FLOP/byte (flat where no bandwidth is known)."""
    cols = ["gpu_model", "dtype", "intensity", "tflops", "peak_tflops", "bandwidth_tbs"]
    t = table[table["peak_tflops"].notna()] if not table.empty else table
    if t.empty:
        return pd.DataFrame(columns=cols)
    grid = np.geomspace(lo, hi, points)
    parts = []
    for r in t.itertuples():
        bw = r.bandwidth_tbs
        y = np.minimum(r.peak_tflops, bw * grid) if bw == bw and bw else np.full_like(grid, r.peak_tflops)
        parts.append(
            pd.DataFrame(
                {
                    "gpu_model": r.gpu_model,
                    "dtype": r.dtype,
                    "intensity": grid,
                    "tflops": y,
                    "peak_tflops": r.peak_tflops,
                    "bandwidth_tbs": bw,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[cols]


def best_vs_cublas(cells: pd.DataFrame, size_label: str) -> pd.DataFrame:
    """At one size, per GPU model, family and precision: the cuBLAS baseline of that precision and the family's
    best stage (highest median % of peak; tuning configurations left out, as `farm report --headline` does)."""
    cols = [
        "gpu_model",
        "family",
        "dtype",
        "peak_tflops",
        "cublas",
        "cublas_tflops",
        "cublas_pct_of_peak",
        "best_stage",
        "best_tflops",
        "best_pct_of_peak",
        "best_pct_lo",
        "best_pct_hi",
        "best_vs_cublas_pct",
    ]
    at = cells[(cells["size_label"] == size_label) & (cells["stage_group"] != "tuning")] if not cells.empty else cells
    kernels = at[at["family"] != "baseline"] if not at.empty else at
    if kernels.empty:
        return pd.DataFrame(columns=cols)
    cublas = at[at["stage"].str.startswith("cublas_") & ~at["stage"].str.startswith("cublaslt_")].set_index(
        ["gpu_model", "dtype"]
    )
    best = (
        kernels.sort_values("pct_of_peak", ascending=False)
        .groupby(["gpu_model", "family", "dtype"], sort=False)
        .head(1)
    )
    recs = []
    for r in best.itertuples():
        cb = cublas.loc[(r.gpu_model, r.dtype)] if (r.gpu_model, r.dtype) in cublas.index else None
        cb = cb.iloc[0] if isinstance(cb, pd.DataFrame) else cb
        recs.append(
            {
                "gpu_model": r.gpu_model,
                "family": r.family,
                "dtype": r.dtype,
                "peak_tflops": r.peak_tflops,
                "cublas": cb["stage"] if cb is not None else "",
                "cublas_tflops": cb["tflops"] if cb is not None else None,
                "cublas_pct_of_peak": cb["pct_of_peak"] if cb is not None else None,
                "best_stage": r.stage,
                "best_tflops": r.tflops,
                "best_pct_of_peak": r.pct_of_peak,
                "best_pct_lo": r.pct_of_peak_lo,
                "best_pct_hi": r.pct_of_peak_hi,
                "best_vs_cublas_pct": 100 * r.tflops / cb["tflops"] if cb is not None else None,
            }
        )
    out = pd.DataFrame(recs, columns=cols)
    return out.sort_values(["gpu_model", "family", "dtype"], kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- charts


def peak_chart(cells: pd.DataFrame, size_label: str) -> alt.LayerChart:
    """Every stage as % of its GPU's dense peak for its own precision at one size; whiskers: spread;
    cuBLAS and the other baselines last, in grey."""
    df = clean(cells)
    df["label"] = df["stage"] + " · " + df["dtype"]
    labels = list(dict.fromkeys(df.set_index("stage").loc[stage_order(df, baselines_last=True), "label"]))
    devices = sorted(df["gpu_model"].unique().tolist())
    title = "% of the GPU's dense peak for the stage's precision"
    y = alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=300))
    tips = [
        nominal("gpu_model", "GPU model"),
        nominal("stage", "stage"),
        nominal("dtype", "precision"),
        nominal("size_label", "size"),
        tip("pct_of_peak", "% of peak (median)", ".1f"),
        tip("pct_of_peak_lo", "% low", ".1f"),
        tip("pct_of_peak_hi", "% high", ".1f"),
        tip("tflops", "TFLOP/s (median)", ".1f"),
        tip("peak_tflops", "peak (TFLOP/s)", ".1f"),
        tip("pct", "% of cuBLAS", ".1f"),
        tip("rows", "rows pooled", "d"),
        nominal("runs", "run ids"),
    ]
    tips = never_null(df, with_provenance(tips))
    df["pct_label"] = [
        f"{p:.0f}{' ⚑' if f and f != '—' else ''}" for p, f in zip(df["pct_of_peak"], df.get("flag", [""] * len(df)))
    ]
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("gpu_model:N", sort=devices))
    bars = base.mark_bar(height={"band": 0.9}).encode(
        x=alt.X("pct_of_peak:Q", title=title, scale=alt.Scale(domain=[0, 100])),
        color=alt.Color(
            "gpu_model:N",
            title="GPU model",
            sort=devices,
            scale=alt.Scale(range=marks.MEASURED_COLORS),
            legend=alt.Legend(orient="top"),
        ),
        opacity=alt.condition("datum.kind == 'baseline'", alt.value(0.55), alt.value(1.0)),
        tooltip=tips,
    )
    rules = base.mark_rule(color="black").encode(
        x=alt.X("pct_of_peak_lo:Q", title=title), x2="pct_of_peak_hi:Q", tooltip=tips
    )
    text = base.mark_text(align="left", dx=4, fontSize=10, color="#333").encode(
        x=alt.X("pct_of_peak_hi:Q", title=title), text=alt.Text("pct_label:N"), tooltip=tips
    )
    return alt.layer(bars, rules, text, data=df).properties(
        width=420,
        height=max(80, 16 * len(labels) * max(1, len(devices))),
        title=alt.TitleParams(
            f"% of peak at {size_label}", subtitle="bars: median, whiskers: spread; faded: baselines", anchor="start"
        ),
    )


def roofline_chart(points: pd.DataFrame, roofs: pd.DataFrame, gpu_model: str) -> alt.LayerChart:
    """Arithmetic intensity against TFLOP/s (log-log) on one GPU model: a roof per precision, min(peak,
    bandwidth × intensity), and every stage and baseline at every size a point, coloured by precision."""
    color = dtype_color(set(points["dtype"]) | set(roofs["dtype"]))
    x = alt.X(
        "intensity:Q", title="arithmetic intensity (FLOP per compulsory DRAM byte, log)", scale=alt.Scale(type="log")
    )
    y_title = "throughput (TFLOP/s, log)"
    y = alt.Y("tflops:Q", title=y_title, scale=alt.Scale(type="log"))
    rtips = [
        nominal("dtype", "precision"),
        tip("peak_tflops", "peak (TFLOP/s)", ".1f"),
        tip("bandwidth_tbs", "memory bandwidth (TB/s)", ".2f"),
    ]
    roof = (
        alt.Chart(clean(roofs)).mark_line(strokeDash=[6, 3], strokeWidth=2).encode(x=x, y=y, color=color, tooltip=rtips)
    )
    ends = (
        roofs.sort_values("intensity")
        .groupby("peak_tflops", as_index=False)
        .agg(
            intensity=("intensity", "last"),
            tflops=("tflops", "last"),
            dtype=("dtype", "first"),
            names=("dtype", lambda d: " = ".join(dict.fromkeys(d))),
        )
    )
    ends["text"] = ends["names"] + " peak " + ends["tflops"].round(0).astype(int).astype(str) + " TFLOP/s"
    # Each roof's name just above its right end, on a white halo so that points and other roofs do not cover it.
    text = alt.Chart(clean(ends)).encode(x=x, y=y, text="text:N")
    label = alt.layer(
        text.mark_text(align="right", dy=-9, fontSize=13, fontWeight="bold", stroke="white", strokeWidth=4),
        text.mark_text(align="right", dy=-9, fontSize=13, fontWeight="bold").encode(color=color),
    )
    tips = [
        nominal("stage", "stage"),
        nominal("family", "family"),
        nominal("dtype", "precision"),
        nominal("size_label", "size"),
        tip("intensity", "FLOP/byte", ".0f"),
        tip("tflops", "TFLOP/s (median)", ".1f"),
        tip("pct_of_peak", "% of peak", ".1f"),
        tip("peak_tflops", "peak (TFLOP/s)", ".1f"),
        nominal("runs", "run ids"),
    ]
    tips = with_provenance(tips)
    pdf = clean(points, [*fields_of(tips), "kind"])
    tips = never_null(pdf, tips)
    pts = (
        alt.Chart(pdf)
        .mark_point(filled=True, size=60, opacity=0.85)
        .encode(
            x=x,
            y=y,
            color=color,
            tooltip=tips,
            shape=alt.Shape(
                "kind:N",
                title="",
                scale=alt.Scale(domain=["kernel", "baseline"], range=["circle", "diamond"]),
                legend=alt.Legend(orient="top"),
            ),
        )
    )
    flags = flag_marks(x, y, tips).properties(data=pdf)
    return alt.layer(roof, pts, flags, label).properties(
        width=640,
        height=400,
        title=alt.TitleParams(
            f"Roofline · {gpu_model}",
            subtitle="dashed: roofs, min(peak, bandwidth × intensity); points: median per stage and size",
            anchor="start",
        ),
    )


# ---------------------------------------------------------------- the page

CAPTION = (
    "How close to the metal? Every % elsewhere is of cuBLAS; here cuBLAS itself is measured against the chip: "
    f"{PEAK_FORMULA}. FP32 runs on the CUDA cores (FFMA = 2 FLOP); TF32, FP16 and BF16 on the tensor cores, "
    "dense, FP32 accumulate. SMs and max SM clock come from each row; FLOP per clock per SM from a per-architecture "
    "table citing its sources (below, and farm/data/peak.py)."
)


def body(L, rows, _) -> None:
    t = ui.stage_groups(frames.timed(rows), "peak_groups")
    cells = peak_cells(t)
    table = peak_table(rows)
    if cells.empty:
        st.info(
            "No timed rows with a known peak under the current filters: a peak needs the row's architecture in the "
            "table below and its max SM clock (recorded when telemetry is on)."
        )
    else:
        sizes = frames.options(cells, "size_label")
        size = st.selectbox(
            "Size", sizes, index=sizes.index("4096³") if "4096³" in sizes else len(sizes) - 1, key="peak_size"
        )
        st.subheader(f"cuBLAS and the best stage of each family at {size}")
        best = best_vs_cublas(cells, size)
        order = [
            "gpu_model",
            "family",
            "dtype",
            "cublas",
            "cublas_pct_of_peak",
            "best_stage",
            "best_pct_of_peak",
            "best_vs_cublas_pct",
            "peak_tflops",
            "cublas_tflops",
            "best_tflops",
            "best_pct_lo",
            "best_pct_hi",
        ]
        st.dataframe(
            best,
            hide_index=True,
            column_order=order,
            column_config={
                "gpu_model": "GPU model",
                "dtype": "precision",
                "cublas": "cuBLAS",
                "peak_tflops": st.column_config.NumberColumn("peak (TFLOP/s)", format="%.1f"),
                "cublas_tflops": st.column_config.NumberColumn("cuBLAS (TFLOP/s)", format="%.1f"),
                "cublas_pct_of_peak": st.column_config.NumberColumn("cuBLAS % of peak", format="%.1f"),
                "best_stage": "best stage",
                "best_tflops": st.column_config.NumberColumn("best (TFLOP/s)", format="%.1f"),
                "best_pct_of_peak": st.column_config.NumberColumn("best % of peak", format="%.1f"),
                "best_pct_lo": st.column_config.NumberColumn("best % of peak, low", format="%.1f"),
                "best_pct_hi": st.column_config.NumberColumn("best % of peak, high", format="%.1f"),
                "best_vs_cublas_pct": st.column_config.NumberColumn("best % of cuBLAS", format="%.1f"),
            },
        )
        at = cells[cells["size_label"] == size]
        ui.chart(peak_chart(at, size), key="peak_chart")

        st.subheader("Roofline")
        models = frames.options(cells, "gpu_model")
        model = st.selectbox("GPU model", models, key="peak_model")
        points = cells[cells["gpu_model"] == model]
        lo, hi = float(points["intensity"].min()) / 2, float(points["intensity"].max()) * 2
        ceilings = roofs(table[table["gpu_model"] == model], lo, hi)
        st.caption(
            "Arithmetic intensity = 2·M·N·K / compulsory DRAM bytes (A and B read once, C written once: FP32 out). "
            "Memory roof: the data sheet's bandwidth for the device (rows carry no memory bus width, so it is not "
            "measured); a device without an entry gets flat roofs. Hot timing keeps operands in L2 between launches, "
            "so small shapes can sit above the memory roof."
        )
        ui.chart(roofline_chart(points, ceilings, model), key="roofline_chart")

    st.subheader("The peaks and where they come from")
    st.caption(
        "NVML's max SM clock can exceed the clock NVIDIA quotes tensor peaks at (H100 SXM: 1980 MHz against "
        "1830 MHz for the data sheet's 989 TFLOPS BF16), so these peaks can sit above the data sheet's."
    )
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "gpu_model": "GPU model",
            "gpu_name": "device",
            "dtype": "precision",
            "unit": "units",
            "flop_per_clock_per_sm": st.column_config.NumberColumn("FLOP/clock/SM", format="%d"),
            "sm_count": "SMs",
            "max_sm_clock_mhz": st.column_config.NumberColumn("max SM clock (MHz)", format="%.0f"),
            "peak_tflops": st.column_config.NumberColumn("peak (TFLOP/s)", format="%.1f"),
            "bandwidth_tbs": st.column_config.NumberColumn("memory (TB/s)", format="%.2f"),
            "ridge_flop_per_byte": st.column_config.NumberColumn("ridge (FLOP/byte)", format="%.0f"),
            "source": st.column_config.TextColumn("peak source", width="large"),
            "bandwidth_source": st.column_config.TextColumn("bandwidth source", width="medium"),
        },
    )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Peak & roofline", CAPTION, body)
