"""Scaling across devices: TFLOP/s vs size per GPU, a device x stage heat map of % cuBLAS (in the cell or timed
alone)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames, ui
from dashboard.marks import (
    baseline_tips,
    clean,
    drawn,
    flag_marks,
    never_null,
    nominal,
    pct_labels,
    pct_tips,
    stage_order,
    stage_scale,
    tip,
    with_provenance,
)

# ---------------------------------------------------------------- queries

SCALING_KEYS = ["gpu_model", "family", "stage", "stage_group", "dtype", "order", "m", "n", "k", "size", "size_label"]


def scaling(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GPU model, stage and size: TFLOPS with spread, % of cuBLAS; `reference` marks the cuBLAS lines."""
    out = frames.cell_stats(rows, SCALING_KEYS)
    out["reference"] = np.where(out["family"] == "baseline", "cuBLAS (reference)", "kernel")
    return out


# ---------------------------------------------------------------- charts


def scaling_chart(sc: pd.DataFrame, columns: int = 2) -> alt.FacetChart:
    """TFLOP/s vs matrix size per GPU model (log-log), one line per stage, cuBLAS dashed; whiskers: spread."""
    df = clean(sc)
    square = bool((df["m"] == df["n"]).all() and (df["n"] == df["k"]).all())
    x_title = "matrix size N, M = N = K (log₂ scale)" if square else "size ∛(M·N·K) (log₂ scale)"
    stages = stage_order(df)
    sizes = sorted(df["size"].unique().tolist())
    x = alt.X("size:Q", title=x_title, scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=sizes, format="d"))
    y_title = "throughput (TFLOP/s, log scale)"
    y = alt.Y("tflops:Q", title=y_title, scale=alt.Scale(type="log"))
    color = alt.Color(
        "stage:N",
        sort=stages,
        title="stage",
        scale=stage_scale(df, stages),
        legend=alt.Legend(labelLimit=260, symbolLimit=60, symbolType="stroke", symbolStrokeWidth=3),
    )
    dash = alt.StrokeDash(
        "reference:N",
        title="line",
        scale=alt.Scale(domain=["kernel", "cuBLAS (reference)"], range=[[1, 0], [6, 4]]),
        legend=None,
    )  # the cuBLAS lines are named in the stage legend, in black and greys
    tips = [
        nominal("gpu_model", "GPU model"),
        nominal("stage", "stage"),
        nominal("dtype", "precision"),
        nominal("size_label", "size"),
        tip("tflops", "TFLOP/s (median)", ".3f"),
        tip("tflops_lo", "TFLOP/s low", ".3f"),
        tip("tflops_hi", "TFLOP/s high", ".3f"),
        tip("median_ms", "median time (ms)", ".4f"),
        *baseline_tips(),
        tip("rows", "rows pooled", "d"),
        nominal("spread", "spread shown"),
        nominal("runs", "run ids"),
        nominal("datasets", "datasets"),
    ]
    tips = never_null(df, with_provenance(tips))
    base = alt.Chart().encode(x=x, color=color)
    lines = base.mark_line(point=alt.OverlayMarkDef(size=40, filled=True)).encode(
        y=y, strokeDash=dash, detail="stage:N", tooltip=tips
    )
    whiskers = base.mark_rule(strokeWidth=1.5).encode(
        y=alt.Y("tflops_lo:Q", title=y_title), y2="tflops_hi:Q", tooltip=tips
    )
    layer = alt.layer(whiskers, lines, flag_marks(x, y, tips), data=df).properties(width=330, height=280)
    return layer.facet(
        facet=alt.Facet("gpu_model:N", title=None, header=alt.Header(labelFontSize=14, labelFontWeight="bold")),
        columns=columns,
    ).resolve_scale(y="shared")


def heatmap_chart(sc: pd.DataFrame, size_label: str, basis: frames.PctBasis = frames.IN_CELL) -> alt.LayerChart:
    """Device x stage heat map of % of same-precision cuBLAS at one size, in the cell or timed alone as `basis` says,
    value written in each cell; a cell without that % is left blank."""
    df = clean(sc[sc["family"] != "baseline"])
    pct = basis.cell_column
    stages = stage_order(df)
    devices = sorted(df["gpu_model"].unique().tolist())
    top = alt.Axis(labelAngle=0, orient="top", labelLimit=200)
    base = drawn(pct).encode(  # scale domains: a device or stage with no % drawn keeps its blank column or row
        x=alt.X("gpu_model:N", title="GPU model", scale=alt.Scale(domain=devices), axis=top),
        y=alt.Y("stage:N", scale=alt.Scale(domain=stages), title=None, axis=alt.Axis(labelLimit=260)),
    )
    tips = [
        nominal("gpu_model", "GPU model"),
        nominal("stage", "stage"),
        nominal("family", "family"),
        nominal("dtype", "precision"),
        nominal("size_label", "size"),
        *pct_tips(basis),
        tip("tflops", "TFLOP/s", ".3f"),
        tip("rows", "rows pooled", "d"),
        nominal("runs", "run ids"),
    ]
    tips = never_null(df, with_provenance(tips))
    df["pct_label"] = pct_labels(df, pct)
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            f"{pct}:Q",
            title=f"% of cuBLAS {basis.short}",
            scale=alt.Scale(scheme="viridis", domain=[0, 100], clamp=True),
        ),
        tooltip=tips,
    )
    text = base.mark_text(fontSize=12).encode(
        text=alt.Text("pct_label:N"),
        color=alt.condition(f"datum.{pct} > 60", alt.value("black"), alt.value("white")),
        tooltip=tips,
    )
    width = max(160, len(devices) * max(90, 9 * max(len(d) for d in devices) + 24))
    return alt.layer(rect, text, data=df).properties(width=width, height=max(80, 22 * len(stages)))


# ---------------------------------------------------------------- the page

CAPTION = (
    "How each stage scales with the matrix size on each GPU model, against cuBLAS of the same precision "
    "(dashed). Family, precision, size and GPU-model filters are in the sidebar."
)


def body(L, rows, _) -> None:
    t = ui.stage_groups(frames.timed(rows), "scaling_groups")
    if t.empty:
        st.info("No timed rows under the current filters.")
        return
    sc = scaling(t)

    st.subheader("Throughput vs size")
    st.caption(
        "One chart per family, one panel per GPU model. Median TFLOP/s over repeats, runs and same-model GPUs; "
        "whiskers: min–max over those rows (q1–q3 of the samples where a cell has one row). Dashed, in black "
        "and greys: cuBLAS of the family's precisions."
    )
    families = [f for f in frames.options(t.sort_values("order"), "family") if f != "baseline"]
    families.sort(key=lambda f: t.loc[t["family"] == f, "order"].min())
    for family in families or ["baseline"]:
        dtypes = set(t.loc[t["family"] == family, "dtype"])
        part = sc[(sc["family"] == family) | ((sc["family"] == "baseline") & sc["dtype"].isin(dtypes))]
        st.markdown(f"**{family}** · {', '.join(sorted(dtypes))}")
        ui.chart(scaling_chart(part), key=f"scaling_chart_{family}")

    sizes = frames.options(t, "size_label")
    size = st.selectbox("Size for the heat map", sizes, index=len(sizes) - 1, key="scaling_size")
    at = sc[sc["size_label"] == size]
    st.subheader(f"% of cuBLAS at {size}")
    st.caption(
        "Device × stage, median over repeats, runs and same-model GPUs; each stage against the cuBLAS of its "
        "own precision. Against the chip's own peak instead: the Peak & roofline page."
    )
    kernels = at[at["family"] != "baseline"]
    if kernels.empty:
        st.info(f"No kernel rows at {size}.")
    else:
        basis = ui.pct_basis("scaling_pct_basis", kernels["pct_alone"])
        ui.chart(heatmap_chart(at, size, basis), key="heatmap")


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Scaling across devices", CAPTION, body)
