"""LLM shapes: per public LLM (farm.data.llm_shapes), the best stage's % of cuBLAS (in the cell or timed alone) and
of the faster vendor library at each layer shape of plans/llm.toml against the token count, and the model's headline
geometric means (in the cell as farm.analysis.report computes it, as `farm report --headline` prints it; and against
cuBLAS timed alone)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames, ui
from dashboard.marks import baseline_tips, clean, dtype_color, flag_marks, never_null, nominal, tip, with_provenance
from farm.analysis import report
from farm.data.llm_shapes import MODELS, TOKENS, plan_shapes

# ---------------------------------------------------------------- queries

CELL_KEYS = ["gpu_model", "family", "dtype", "m", "n", "k", "stage"]
HEAD_KEYS = ["gpu_model", "llm_model", "family", "dtype"]
PCT_COLUMNS = {frames.IN_CELL: "pct_of_cublas", frames.ALONE: "pct_of_alone_baseline"}  # the cells' column per basis
VENDOR_BEST = {"pct_of_vendor_best": "vendor best (cuBLAS or cuBLASLt)"}
PCT_TIPS = [*PCT_COLUMNS.values(), "partner_shift_pct", *VENDOR_BEST]  # every % a cell carries, for its tooltip
PLANS = {"fp8_e4m3": "plans/llm_fp8.toml"}  # the plan that sweeps a precision's LLM shapes, where not plans/llm.toml
COLUMNS = [
    "gpu_model",
    "llm_order",
    "llm_model",
    "shapes_total",
    "layer",
    "family",
    "dtype",
    "m",
    "n",
    "k",
    "shape",
    "stage",
    "pct_of_cublas",
    "pct_of_vendor_best",
    "pct_of_alone_baseline",
    "partner_shift_pct",
    "rows",
    "runs",
    *frames.PROVENANCE,
]


def records(rows: pd.DataFrame) -> list[dict]:
    """`rows` as the report reads them: one dict a row, None where a value is missing."""
    return rows.astype(object).where(rows.notna(), None).to_dict("records")


def llm_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GPU model, LLM model, family, precision and layer shape: report.llm_cells over the ok, verified kernel rows
    (report.kernel_rows), with the layer's name (LlmModel.layers), the best stage's median % of its baseline timed
    alone and partner shift (NaN where its run timed no baseline cell of its own), the rows it pools and where they
    came from. The best stage is the report's: the highest % in the cell."""
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    shapes = set(plan_shapes())
    at = rows[[s in shapes for s in zip(rows["m"], rows["n"], rows["k"])]]
    kernel = pd.DataFrame(report.kernel_rows(records(at)), columns=at.columns)
    cells = pd.DataFrame(report.llm_cells(records(kernel)))
    if cells.empty:
        return pd.DataFrame(columns=COLUMNS)
    layers = {(llm.name, n, k): layer for llm in MODELS for layer, (n, k) in llm.layers().items()}
    cells["layer"] = [layers[key] for key in zip(cells["llm_model"], cells["n"], cells["k"])]
    cells["shape"] = [f"{m}x{n}x{k}" for m, n, k in zip(cells["m"], cells["n"], cells["k"])]
    cells["pct_of_vendor_best"] = cells["pct_of_vendor_best"].astype("float64")
    best = kernel.merge(cells[CELL_KEYS].drop_duplicates(), on=CELL_KEYS)
    best = best.assign(  # the records' columns come back as objects
        _alone=frames.alone_pct(best), _shift=pd.to_numeric(best["partner_shift_pct"], errors="coerce")
    )
    pooled = (
        best.groupby(CELL_KEYS, sort=False)
        .agg(
            rows=("stage", "size"),
            runs=("run_id", frames.distinct_text),
            pct_of_alone_baseline=("_alone", "median"),
            partner_shift_pct=("_shift", "median"),
        )
        .reset_index()
    )
    out = cells.merge(pooled, on=CELL_KEYS, how="left").merge(
        frames.provenance(best, CELL_KEYS), on=CELL_KEYS, how="left"
    )
    return out[COLUMNS]


def headlines(cells: pd.DataFrame) -> pd.DataFrame:
    """report.llm_headlines of `cells` (llm_cells): per GPU model, LLM model, family and precision, the geometric
    means over the shapes measured and the lowest cell; with geomean_pct_of_alone_baseline, the geometric mean of the
    best stages' % of their baseline timed alone (NaN unless every shape has one, as the report's vendor best)."""
    heads = pd.DataFrame(report.llm_headlines(records(cells)))
    if heads.empty:
        return heads
    alone = (
        cells.groupby(HEAD_KEYS)["pct_of_alone_baseline"].agg(geomean_of_all).rename("geomean_pct_of_alone_baseline")
    )
    heads = heads.merge(alone.reset_index(), on=HEAD_KEYS, how="left")
    order = list(heads.columns)
    order.insert(order.index("geomean_pct_of_cublas") + 1, order.pop())  # beside the in-cell one
    return heads[order]


def geomean_of_all(values: pd.Series) -> float:
    """The geometric mean of `values`, NaN where one is missing (a mean over fewer shapes is another mean)."""
    return report.geomean(values.tolist()) if values.notna().all() and len(values) else np.nan


# ---------------------------------------------------------------- charts


def plan_for(dtype: str) -> str:
    return PLANS.get(dtype, "plans/llm.toml")


def against(basis: frames.PctBasis) -> dict[str, str]:
    """The cells' columns llm_chart draws, solid then dashed, and what each is a % of."""
    return {PCT_COLUMNS[basis]: f"its baseline {basis.short} (cuBLAS; FP8: cuBLASLt)", **VENDOR_BEST}


def llm_chart(cells: pd.DataFrame, layers: list[str], basis: frames.PctBasis = frames.IN_CELL) -> alt.FacetChart:
    """Token count M (log) against the best stage's % of its baseline (cuBLAS; FP8: cuBLASLt), in the cell or timed
    alone as `basis` says (solid; a cell without it is a gap, never 0), and of the faster vendor library (dashed), one
    panel per layer (columns, in `layers` order) and GPU model (rows), coloured by precision; the rule: parity."""
    lines_of = against(basis)
    long = cells.melt(
        id_vars=[c for c in cells.columns if c not in PCT_TIPS],
        value_vars=list(lines_of),
        var_name="against_field",
        value_name="pct",
    )
    long = long.assign(against=long["against_field"].map(lines_of))
    df = clean(long.drop(columns=["against_field"]).merge(cells[[*CELL_KEYS, *PCT_TIPS]], on=CELL_KEYS))
    x = alt.X(
        "m:Q",
        title="tokens M (log₂ scale)",
        scale=alt.Scale(type="log", base=2, domain=[TOKENS[0], TOKENS[-1]]),  # every token count, measured or not
        axis=alt.Axis(values=list(TOKENS), format="d"),
    )
    y_title = f"best stage's % of the library, {basis.short} (median)"
    y = alt.Y("pct:Q", title=y_title, scale=alt.Scale(zero=False))
    tips = [
        nominal("gpu_model", "GPU model"),
        nominal("llm_model", "LLM model"),
        nominal("layer", "layer"),
        nominal("shape", "shape M×N×K"),
        nominal("dtype", "precision"),
        nominal("stage", "best stage"),
        *baseline_tips("pct_of_cublas", "pct_of_alone_baseline", "partner_shift_pct", of="its baseline"),
        tip("pct_of_vendor_best", "% of vendor best (median)", ".1f"),
        tip("rows", "rows pooled", "d"),
        nominal("runs", "run ids"),
    ]
    tips = never_null(df, with_provenance(tips))
    base = alt.Chart().encode(x=x, color=dtype_color(set(df["dtype"])))
    # A missing % breaks its line (and is left out of the axis): never drawn as 0.
    lines = base.mark_line(point=alt.OverlayMarkDef(size=50, filled=True), invalid="break-paths-filter-domains").encode(
        y=y,
        strokeDash=alt.StrokeDash(
            "against:N",
            title="% of",
            scale=alt.Scale(domain=list(lines_of.values()), range=[[1, 0], [5, 3]]),
            legend=None,  # the caption says which is which (a dash legend without a colour drew no symbols)
        ),
        detail="against:N",
        tooltip=tips,
    )
    parity = alt.Chart().mark_rule(color="#888", strokeDash=[2, 2]).encode(y=alt.datum(100))
    layer = alt.layer(parity, lines, flag_marks(x, y, tips), data=df).properties(width=165, height=220)
    return layer.facet(
        column=alt.Column(
            "layer:N", sort=layers, title=None, header=alt.Header(labelFontSize=13, labelFontWeight="bold")
        ),
        row=alt.Row("gpu_model:N", title=None, header=alt.Header(labelFontSize=13, labelFontWeight="bold")),
    ).resolve_scale(y="shared")


# ---------------------------------------------------------------- the page

CAPTION = (
    "The GEMMs LLMs run: each decoder layer's projections and MLP (farm/data/llm_shapes.py, from the models' "
    "config.json) at token counts 1 and 16 (decoding) to 8192 (prefill), as `plans/llm.toml` (FP8: "
    "`plans/llm_fp8.toml`) sweeps them. Per cell, the best stage of the family (highest median % of its baseline: "
    "the same-precision cuBLAS, cuBLASLt for FP8); per model, the geometric mean of those, as `farm report "
    "--headline` prints it."
)
EMPTY = (
    "No LLM-shape rows in the loaded data: no ok, verified kernel row has a layer shape of "
    + ", ".join(llm.name for llm in MODELS)
    + " (farm/data/llm_shapes.py). Run the plan on an H100 or H200 (`python farm/sweep.py --plan plans/llm.toml`; "
    "FP8: `plans/llm_fp8.toml`) and point the dashboard at its output."
)


def body(L, rows, _) -> None:
    cells = llm_cells(rows)
    if cells.empty:
        st.info(EMPTY)
        return
    present = [llm for llm in MODELS if llm.name in set(cells["llm_model"])]
    c1, c2 = st.columns(2)
    llm = c1.selectbox("LLM model", present, format_func=lambda m: m.name, key="llm_model")
    mine = cells[cells["llm_model"] == llm.name]
    families = frames.options(mine, "family")
    family = c2.selectbox(
        "Family", families, index=families.index("hopper_d") if "hopper_d" in families else 0, key="llm_family"
    )
    mine = mine[mine["family"] == family]
    missing = [m.name for m in MODELS if m not in present]
    if missing:
        st.caption(f"No rows at the shapes of {', '.join(missing)}.")
    basis = ui.pct_basis("llm_pct_basis", mine["pct_of_alone_baseline"])

    st.subheader(f"{llm.name}: geometric mean over its layer shapes")
    heads = headlines(mine)
    partial = heads[heads["shapes_measured"] < heads["shapes_total"]]
    if not partial.empty:
        st.warning(
            f"Only {', '.join(sorted(set(partial['shapes_measured'].astype(str))))} of {len(llm.shapes())} shapes "
            f"of {llm.name} measured ({', '.join(sorted(set(mine['shape'])))}): shapes other sweeps share with the "
            "model, not its plan. A geometric mean covers the shapes measured only; all of them: "
            + ", ".join(f"`python farm/sweep.py --plan {p}`" for p in sorted({plan_for(d) for d in partial["dtype"]}))
            + "."
        )
    headline_metrics(heads, rows, family)
    st.dataframe(
        heads,
        hide_index=True,
        column_config={
            "gpu_model": "GPU model",
            "llm_model": "LLM model",
            "dtype": "precision",
            "shapes_measured": "shapes measured",
            "shapes_total": "of shapes",
            "geomean_pct_of_cublas": st.column_config.NumberColumn(
                "geo-mean % of its baseline in the cell", format="%.1f"
            ),
            "geomean_pct_of_alone_baseline": st.column_config.NumberColumn(
                "geo-mean % of its baseline timed alone",
                format="%.1f",
                help="blank unless every shape has an alone baseline",
            ),
            "geomean_pct_of_vendor_best": st.column_config.NumberColumn(
                "geo-mean % of vendor best",
                format="%.1f",
                help="of the faster of cuBLAS and cuBLASLt; blank unless every shape has one",
            ),
            "lowest_pct": st.column_config.NumberColumn("lowest % of its baseline", format="%.1f"),
            "lowest_shape": "lowest at",
        },
    )

    layers = llm.layers()
    st.subheader("Per layer, against the token count")
    st.caption(
        f"{llm.name} ([config.json]({llm.source})): hidden {llm.hidden}, intermediate {llm.intermediate}, "
        f"{llm.heads} heads, {llm.kv_heads} KV heads. Layers (N × K): "
        + "; ".join(f"{name} {n} × {k}" for name, (n, k) in layers.items())
        + f". Solid: % of its baseline (cuBLAS; FP8: cuBLASLt) {basis.short}; dashed: % of the faster of cuBLAS and "
        "cuBLASLt (the same either way); grey rule: parity."
    )
    ui.chart(llm_chart(mine, list(layers), basis), key="llm_chart")

    st.subheader("Cells")
    st.dataframe(
        mine.drop(columns=["llm_order", "llm_model", "shapes_total", "family"]).sort_values(
            ["gpu_model", "layer", "dtype", "m"]
        ),
        hide_index=True,
        column_config={
            "gpu_model": "GPU model",
            "dtype": "precision",
            "stage": "best stage",
            "pct_of_cublas": st.column_config.NumberColumn("% of its baseline in the cell", format="%.1f"),
            "pct_of_vendor_best": st.column_config.NumberColumn("% of vendor best", format="%.1f"),
            "pct_of_alone_baseline": st.column_config.NumberColumn(
                "% of its baseline timed alone", format="%.1f", help="blank: its run timed no baseline cell of its own"
            ),
            "partner_shift_pct": st.column_config.NumberColumn(
                "partner shift (%)",
                format="%+.1f",
                help="how much slower the baseline ran beside the kernel than alone",
            ),
            "rows": st.column_config.NumberColumn("rows pooled", format="%d"),
        },
    )


def headline_metrics(heads: pd.DataFrame, rows: pd.DataFrame, family: str) -> None:
    """Per GPU model and precision, both geometric means: against the baseline in the cell and timed alone."""
    baselines = dict(zip(zip(rows["family"], rows["dtype"]), rows["baseline"]))  # each kernel precision's reference
    for col, h in zip(st.columns(len(heads)), heads.itertuples()):
        of = baselines.get((family, h.dtype), "cuBLAS")
        shapes = f"{h.shapes_measured} of {h.shapes_total} shapes"
        col.metric(
            f"{h.gpu_model} · {h.dtype} · in the cell",
            f"{h.geomean_pct_of_cublas:.1f} % of {of}",
            help=f"{shapes}; lowest {h.lowest_pct:.1f} % at {h.lowest_shape}",
        )
        alone = h.geomean_pct_of_alone_baseline
        col.metric(
            f"{h.gpu_model} · {h.dtype} · timed alone",
            f"{alone:.1f} % of {of}" if alone == alone else "—",
            help=shapes if alone == alone else f"not every one of the {shapes} has an alone baseline",
        )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("LLM shapes", CAPTION, body)
