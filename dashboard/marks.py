"""The Altair pieces every chart shares (no Streamlit): tooltips that say where a mark's numbers came from and never
read null, the ⚑ on marks that pool unlike launches, stage colours, and the chart's own copy of its data.

Every chart carries tooltips with the exact values and the run ids behind them, and units on every axis.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboard import frames

alt.data_transformers.disable_max_rows()  # the pages bound their own data (telemetry is thinned)

MEASURED_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#eeca3b"]
TABLEAU10 = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]
TABLEAU20 = [
    "#4e79a7",
    "#a0cbe8",
    "#f28e2b",
    "#ffbe7d",
    "#59a14f",
    "#8cd17d",
    "#b6992d",
    "#f1ce63",
    "#499894",
    "#86bcb6",
    "#e15759",
    "#ff9d9a",
    "#79706e",
    "#bab0ac",
    "#d37295",
    "#fabfd2",
    "#b07aa1",
    "#d4a6c8",
    "#9d7660",
    "#d7b5a6",
]


def pad(chart):
    """Sizes are the plotting area's; axes, legends and titles come on top (Streamlit's default 'fit' squeezes them in)."""
    # A little room on the left: Vega measures axis labels with a fallback font and can clip the longest.
    return chart.properties(
        autosize=alt.AutoSizeParams(type="pad", contains="padding"),
        padding={"left": 16, "top": 5, "right": 10, "bottom": 5},
    )


def tip(field: str, title: str, fmt: str | None = None, type_: str = "quantitative") -> alt.Tooltip:
    """A number's (or, with type_='temporal', a UTC time's) tooltip, in `fmt`."""
    kw = {"format": fmt} if fmt else {}
    if type_ == "temporal":
        kw = {"format": fmt or "%Y-%m-%d %H:%M:%S.%L UTC", "formatType": "utc"}
    return alt.Tooltip(field, type=type_, title=title, **kw)


def nominal(field: str, title: str) -> alt.Tooltip:
    """A text tooltip."""
    return alt.Tooltip(field, type="nominal", title=title)


def baseline_tips(
    in_cell: str = "pct", alone: str = "pct_alone", shift: str = "partner_shift", of: str = "cuBLAS"
) -> list[alt.Tooltip]:
    """Both % of the baseline, whichever a chart plots, and the partner shift that sets them apart (docs/verdicts.md,
    "At the power cap"); by default frames.cell_stats' columns."""
    return [
        tip(in_cell, f"% of {of} in the cell (median)", ".1f"),
        tip(alone, f"% of {of} timed alone (median)", ".1f"),
        tip(shift, f"partner shift: {of} beside it slower than alone by (%)", "+.1f"),
    ]


def pct_tips(basis: frames.PctBasis) -> list[alt.Tooltip]:
    """baseline_tips, then the spread of the % `basis` plots."""
    pct = basis.cell_column
    return [
        *baseline_tips(),
        tip(f"{pct}_lo", f"% {basis.short}, low", ".1f"),
        tip(f"{pct}_hi", f"% {basis.short}, high", ".1f"),
    ]


def drawn(field: str) -> alt.Chart:
    """A chart that draws no mark where `field` is missing: a % without its baseline is no mark, never a 0."""
    return alt.Chart().transform_filter(f"isValid(datum.{field})")


def pct_labels(df: pd.DataFrame, field: str) -> list[str]:
    """Each mark's % as text, ⚑ where it pools unlike launches; blank where the % is missing."""
    flags = df["flag"].fillna("") if "flag" in df else [""] * len(df)
    return [f"{p:.0f}{' ⚑' if f and f != '—' else ''}" if p == p else "" for p, f in zip(df[field], flags)]


PROVENANCE_TIPS = {
    "pooled": "pooled",
    "cards": "GPU cards",
    "driver": "driver",
    "cuda_nvrtc": "CUDA runtime / NVRTC",
    "commits": "commit",
    "sm_clock": "SM clock",
    "power_thermal": "power / thermal",
    "flag": "launch flag",
}
ROW_PROVENANCE_TIPS = {
    "driver_version": "driver",
    "cuda_runtime_version": "CUDA runtime",
    "nvrtc_version": "NVRTC",
    "git_commit": "commit",
    "launch_flag": "launch flag",
}
FLAG_COLOR = "#d62728"


def with_provenance(tips: list[alt.Tooltip], fields: dict[str, str] = PROVENANCE_TIPS) -> list[alt.Tooltip]:
    """`tips` and where the mark's numbers came from (frames.PROVENANCE, or a row's own columns)."""
    return [*tips, *(nominal(f, title) for f, title in fields.items())]


def _pyformat(value, spec: dict) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    if spec.get("type") == "temporal":
        return pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S UTC")
    fmt = spec.get("format") or "g"
    return format(float(value), ".0f" if fmt == "d" else "g" if "~" in fmt else fmt)


def never_null(df: pd.DataFrame, tips: list[alt.Tooltip]) -> list[alt.Tooltip]:
    """Tooltips that never read 'null': a numeric or time field with gaps in `df` is shown as text ('—' where it is
    missing, the same format elsewhere); missing text becomes '—'; a field `df` lacks is left out."""
    out = []
    for t in tips:
        d = t.to_dict()
        field = d["field"]
        if field not in df.columns:
            continue
        if d.get("type") in ("quantitative", "temporal") and df[field].isna().any():
            df[f"{field}_text"] = [_pyformat(v, d) for v in df[field]]
            out.append(nominal(f"{field}_text", d.get("title", field)))
            continue
        if d.get("type") == "nominal" and df[field].isna().any():
            df[field] = df[field].astype("object").where(df[field].notna(), "—")
        out.append(t)
    return out


def flag_marks(x: alt.X, y: alt.Y, tips: list[alt.Tooltip], field: str = "flag") -> alt.Chart:
    """A red ⚑ above each mark that pools a row whose % compares unlike launches (drawn only when the sidebar
    brings such rows back)."""
    return (
        alt.Chart()
        .transform_filter(f"datum.{field} && datum.{field} != '—'")
        .mark_text(text="⚑", color=FLAG_COLOR, fontSize=13, dy=-11)
        .encode(x=x, y=y, tooltip=tips)
    )


def stage_order(df: pd.DataFrame, baselines_last: bool = False) -> list[str]:
    """The stages of `df` in ladder order (with `baselines_last`, the baselines after every kernel)."""
    key = df["order"] + (1e9 * (df["family"] == "baseline") if baselines_last and "family" in df else 0)
    return list(dict.fromkeys(df.assign(_k=key).sort_values(["_k", "stage"])["stage"]))


def stage_scale(df: pd.DataFrame, stages: list[str]) -> alt.Scale:
    """cuBLAS baselines in black and greys, kernels in distinct colours (tableau10, tableau20 past ten)."""
    base = set(df.loc[df["family"] == "baseline", "stage"]) if "family" in df else set()
    kernels = [s for s in stages if s not in base]
    palette = TABLEAU10 if len(kernels) <= 10 else TABLEAU20
    greys = ["#000000", "#555555", "#888888", "#aaaaaa"]
    rng, k, g = [], 0, 0
    for s in stages:
        if s in base:
            rng.append(greys[g % len(greys)])
            g += 1
        else:
            rng.append(palette[k % len(palette)])
            k += 1
    return alt.Scale(domain=stages, range=rng)


DTYPE_COLORS = {
    "fp32": "#4c78a8",
    "tf32": "#f58518",
    "fp16": "#54a24b",
    "bf16": "#b279a2",
    "fp8_e4m3": "#e45756",
    "fp8_e4m3_e5m2": "#ff9da6",
}


def dtype_color(dtypes: set[str]) -> alt.Color:
    """Colour by precision, each precision the same colour on every chart, the legend on top."""
    domain = [d for d in DTYPE_COLORS if d in dtypes]
    return alt.Color(
        "dtype:N",
        title="precision",
        scale=alt.Scale(domain=domain, range=[DTYPE_COLORS[d] for d in domain]),
        legend=alt.Legend(orient="top"),
    )


def fields_of(tips: list[alt.Tooltip]) -> list[str]:
    return [t.to_dict()["field"] for t in tips]


def clean(df: pd.DataFrame, cols: list[str] | None = None) -> pd.DataFrame:
    """Only the columns a chart uses (the spec carries its data), list columns dropped."""
    out = df[[c for c in dict.fromkeys(cols) if c in df.columns]].copy() if cols else df.copy()
    for c in list(out.columns):
        first = out[c].dropna().head(1)
        if (
            len(first)
            and isinstance(first.iloc[0], (list, tuple))
            or (
                len(first)
                and hasattr(first.iloc[0], "__array__")
                and not isinstance(first.iloc[0], (str, bytes))
                and getattr(first.iloc[0], "ndim", 0) > 0
            )
        ):
            out = out.drop(columns=[c])
    for c in out.columns:
        if pd.api.types.is_object_dtype(out[c]) and all(isinstance(v, str) for v in out[c].dropna()):
            out[c] = out[c].astype("str")  # pandas' string dtype: no per-value type inference downstream
    return out


def rules_at(values: list[float]) -> alt.Chart:
    """A chart of reference values (field v) for rules: inline values, no DataFrame conversion."""
    return alt.Chart(alt.Data(values=[{"v": v} for v in values]))
