"""Altair chart builders: pure functions of DataFrames (from dashboard.analysis), no Streamlit.

Every chart carries tooltips with the exact values and the run ids behind them, and
units on every axis.
"""
from __future__ import annotations

import altair as alt
import pandas as pd

alt.data_transformers.disable_max_rows()  # the pages bound their own data (telemetry is thinned)

MEASURED_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#eeca3b"]
PUBLISHED_COLORS = ["#9e9e9e", "#c7c7c7", "#6f6f6f", "#b0b0b0"]
TABLEAU10 = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
TABLEAU20 = ["#4e79a7", "#a0cbe8", "#f28e2b", "#ffbe7d", "#59a14f", "#8cd17d", "#b6992d", "#f1ce63", "#499894", "#86bcb6",
             "#e15759", "#ff9d9a", "#79706e", "#bab0ac", "#d37295", "#fabfd2", "#b07aa1", "#d4a6c8", "#9d7660", "#d7b5a6"]
VERDICT_COLORS = {"SAME": "#54a24b", "FASTER": "#4c78a8", "SLOWER": "#e45756", "UNCLEAR": "#9e9e9e"}
ISSUE_COLORS = {"unverified": "#e45756", "throttled": "#f58518", "noisy": "#eeca3b", "ok": "#4c78a8"}


def pad(chart):
    """Sizes are the plotting area's; axes, legends and titles come on top (Streamlit's default 'fit' squeezes them in)."""
    # A little room on the left: Vega measures axis labels with a fallback font and can clip the longest.
    return chart.properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"),
                            padding={"left": 16, "top": 5, "right": 10, "bottom": 5})


def _tip(field: str, title: str, fmt: str | None = None, type_: str = "quantitative") -> alt.Tooltip:
    kw = {"format": fmt} if fmt else {}
    if type_ == "temporal":
        kw = {"format": fmt or "%Y-%m-%d %H:%M:%S.%L UTC", "formatType": "utc"}
    return alt.Tooltip(field, type=type_, title=title, **kw)


def _n(field: str, title: str) -> alt.Tooltip:
    return alt.Tooltip(field, type="nominal", title=title)


PROVENANCE_TIPS = {"pooled": "pooled", "cards": "GPU cards", "driver": "driver", "cuda_nvrtc": "CUDA runtime / NVRTC",
                   "commits": "commit", "sm_clock": "SM clock", "power_thermal": "power / thermal", "flag": "launch flag"}
ROW_PROVENANCE_TIPS = {"driver_version": "driver", "cuda_runtime_version": "CUDA runtime", "nvrtc_version": "NVRTC",
                       "git_commit": "commit", "launch_flag": "launch flag"}
FLAG_COLOR = "#d62728"


def _provenance(tips: list[alt.Tooltip], fields: dict[str, str] = PROVENANCE_TIPS) -> list[alt.Tooltip]:
    """`tips` and where the mark's numbers came from (analysis.PROVENANCE, or a row's own columns)."""
    return [*tips, *(_n(f, title) for f, title in fields.items())]


def _pyformat(value, tip: dict) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    if tip.get("type") == "temporal":
        return pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S UTC")
    fmt = tip.get("format") or "g"
    return format(float(value), ".0f" if fmt == "d" else "g" if "~" in fmt else fmt)


def _no_nulls(df: pd.DataFrame, tips: list[alt.Tooltip]) -> list[alt.Tooltip]:
    """Tooltips that never read 'null': a numeric or time field with gaps in `df` is shown as text ('—' where it is
    missing, the same format elsewhere); missing text becomes '—'; a field `df` lacks is left out."""
    out = []
    for tip in tips:
        d = tip.to_dict()
        field = d["field"]
        if field not in df.columns:
            continue
        if d.get("type") in ("quantitative", "temporal") and df[field].isna().any():
            df[f"{field}_text"] = [_pyformat(v, d) for v in df[field]]
            out.append(_n(f"{field}_text", d.get("title", field)))
            continue
        if d.get("type") == "nominal" and df[field].isna().any():
            df[field] = df[field].astype("object").where(df[field].notna(), "—")
        out.append(tip)
    return out


def _flag_marks(x: alt.X, y: alt.Y, tips: list[alt.Tooltip], field: str = "flag") -> alt.Chart:
    """A red ⚑ above each mark that pools a row whose % compares unlike launches (drawn only when the sidebar
    brings such rows back)."""
    return alt.Chart().transform_filter(f"datum.{field} && datum.{field} != '—'").mark_text(
        text="⚑", color=FLAG_COLOR, fontSize=13, dy=-11).encode(x=x, y=y, tooltip=tips)


def _stage_sort(df: pd.DataFrame, baselines_last: bool = False) -> list[str]:
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


def _fields(tips: list[alt.Tooltip]) -> list[str]:
    return [t.to_dict()["field"] for t in tips]


def _clean(df: pd.DataFrame, cols: list[str] | None = None) -> pd.DataFrame:
    """Only the columns a chart uses (the spec carries its data), list columns dropped."""
    out = df[[c for c in dict.fromkeys(cols) if c in df.columns]].copy() if cols else df.copy()
    for c in list(out.columns):
        first = out[c].dropna().head(1)
        if len(first) and isinstance(first.iloc[0], (list, tuple)) or (len(first) and hasattr(first.iloc[0], "__array__")
                                                                       and not isinstance(first.iloc[0], (str, bytes))
                                                                       and getattr(first.iloc[0], "ndim", 0) > 0):
            out = out.drop(columns=[c])
    for c in out.columns:
        if pd.api.types.is_object_dtype(out[c]) and all(isinstance(v, str) for v in out[c].dropna()):
            out[c] = out[c].astype("str")  # pandas' string dtype: no per-value type inference downstream
    return out


def _rules(values: list[float]) -> alt.Chart:
    """A chart of reference values (field v) for rules: inline values, no DataFrame conversion."""
    return alt.Chart(alt.Data(values=[{"v": v} for v in values]))


def source_scale(sources: list[str], kinds: dict[str, str]) -> alt.Scale:
    """Measured sources in colour, published ones in greys."""
    measured = [s for s in sources if kinds.get(s) != "published"]
    published = [s for s in sources if kinds.get(s) == "published"]
    rng = [MEASURED_COLORS[i % len(MEASURED_COLORS)] for i in range(len(measured))]
    rng += [PUBLISHED_COLORS[i % len(PUBLISHED_COLORS)] for i in range(len(published))]
    return alt.Scale(domain=measured + published, range=rng)


# ---------------------------------------------------------------- ladder

def ladder_chart(lad: pd.DataFrame, size_label: str) -> alt.HConcatChart:
    """Three panels sharing the stage axis (ladder order, top to bottom): % of cuBLAS, TFLOP/s, step gain.

    Bars: median; black whiskers: spread (min-max over repeats/runs, or q1-q3 of one row).
    Published figures are grey bars labelled 'published (<device>)'.
    """
    df = _clean(lad)
    df["flag"] = df["flag"].fillna("") if "flag" in df else ""
    df["pct_label"] = [f"{p:.0f}{' ⚑' if f else ''}" if p == p else "" for p, f in zip(df["pct"], df["flag"])]
    stages = _stage_sort(df, baselines_last=True)
    sources = list(dict.fromkeys(df.sort_values(["kind", "source"])["source"]))
    kinds = dict(zip(df["source"], df["kind"]))
    color = alt.Color("source:N", title="measured on / published", scale=source_scale(sources, kinds),
                      legend=alt.Legend(orient="top", labelLimit=400, columns=4))
    yo = alt.YOffset("source:N", sort=sources)
    common_tips = [_n("source", "source"), _n("stage", "stage"), _n("size_label", "size"),
                   _tip("pct", "% of cuBLAS (median)", ".1f"), _tip("pct_lo", "% low", ".1f"), _tip("pct_hi", "% high", ".1f"),
                   _tip("tflops", "TFLOP/s (median)", ".2f"), _tip("median_ms", "median time (ms)", ".4f"),
                   _tip("gain", "× over previous stage", ".3f"), _n("prev_stage", "previous stage"),
                   _tip("rows", "rows pooled", "d"), _n("spread", "spread shown"), _n("runs", "run ids"),
                   _n("citation", "published in"), _n("what_changed", "what changed")]
    common_tips = _no_nulls(df, _provenance(common_tips))
    height = max(120, 14 * len(stages) * max(1, len(sources)) + 20)

    def panel(field: str, lo: str | None, hi: str | None, title: str, scale: alt.Scale, rule_at: float | None,
              x2_datum: float | None = None, labels: bool = False, width: int = 230, text: str | None = None,
              label: str | None = None) -> alt.LayerChart:
        y = alt.Y("stage:N", sort=stages, title=None, axis=alt.Axis(labelLimit=260) if labels else None)
        base = alt.Chart().encode(y=y, yOffset=yo)
        bar_kw = {"x2": alt.X2(datum=x2_datum)} if x2_datum is not None else {}
        bars = base.mark_bar(height={"band": 0.9}).encode(
            x=alt.X(f"{field}:Q", title=title, scale=scale), color=color, tooltip=common_tips,
            opacity=alt.condition("datum.flag", alt.value(0.4), alt.value(1.0)), **bar_kw)  # ⚑: pools unlike launches
        layers = [bars]
        if lo and hi:
            layers.append(base.mark_rule(color="black", strokeWidth=1.2).encode(
                x=alt.X(f"{lo}:Q", title=title), x2=f"{hi}:Q", tooltip=common_tips))
        if text:  # the value, just right of the bar's end (or of the 1x line, for a bar that goes left)
            at = alt.X(f"{hi or field}:Q", title=title) if x2_datum is None else alt.X("_text_x:Q", title=title)
            layer = base.transform_filter(f"isValid(datum.{field})")
            layer = layer.transform_calculate(_text_x=f"max(datum.{field}, {x2_datum})") if x2_datum is not None else layer
            value = alt.Text(f"{label}:N") if label else alt.Text(f"{field}:Q", format=text)
            layers.append(layer.mark_text(align="left", dx=4, fontSize=10, color="#333").encode(
                x=at, text=value, tooltip=common_tips))
        if rule_at is not None:
            layers.append(_rules([rule_at]).mark_rule(strokeDash=[4, 3], color="#333").encode(x="v:Q"))
        return alt.layer(*layers).properties(width=width, height=height)

    pct = panel("pct", "pct_lo", "pct_hi", "% of same-precision cuBLAS", alt.Scale(domain=[0, max(110.0, float(df["pct_hi"].max()) + 15)]),
                100.0, labels=True, text=".0f", label="pct_label")
    tfl = panel("tflops", "tflops_lo", "tflops_hi", "throughput (TFLOP/s)", alt.Scale(domainMin=0), None)
    gmax = float(df["gain"].max()) if df["gain"].notna().any() else 2.0
    gmin = float(df["gain"].min()) if df["gain"].notna().any() else 1.0
    gain = panel("gain", None, None, "× over previous stage (log)", alt.Scale(type="log", domain=[min(0.8, gmin * 0.9), max(1.5, gmax * 1.15)], nice=False),
                 1.0, x2_datum=1.0, width=170, text=".2f")
    return alt.hconcat(pct, tfl, gain, spacing=8, data=df).resolve_scale(y="shared").properties(
        title=alt.TitleParams(f"Ladder at {size_label}", subtitle="bars: median, whiskers: spread; dashed: cuBLAS = 100 % and 1×; "
                              "grey bars: published figures, not measured here", anchor="start"))


# ---------------------------------------------------------------- scaling

def scaling_chart(sc: pd.DataFrame, columns: int = 2) -> alt.FacetChart:
    """TFLOP/s vs matrix size per GPU model (log-log), one line per stage, cuBLAS dashed; whiskers: spread."""
    df = _clean(sc)
    square = bool((df["m"] == df["n"]).all() and (df["n"] == df["k"]).all())
    x_title = "matrix size N, M = N = K (log₂ scale)" if square else "size ∛(M·N·K) (log₂ scale)"
    stages = _stage_sort(df)
    sizes = sorted(df["size"].unique().tolist())
    x = alt.X("size:Q", title=x_title, scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=sizes, format="d"))
    y_title = "throughput (TFLOP/s, log scale)"
    y = alt.Y("tflops:Q", title=y_title, scale=alt.Scale(type="log"))
    color = alt.Color("stage:N", sort=stages, title="stage", scale=stage_scale(df, stages),
                      legend=alt.Legend(labelLimit=260, symbolLimit=60, symbolType="stroke", symbolStrokeWidth=3))
    dash = alt.StrokeDash("reference:N", title="line", scale=alt.Scale(domain=["kernel", "cuBLAS (reference)"], range=[[1, 0], [6, 4]]),
                          legend=None)  # the cuBLAS lines are named in the stage legend, in black and greys
    tips = [_n("gpu_model", "GPU model"), _n("stage", "stage"), _n("dtype", "precision"), _n("size_label", "size"),
            _tip("tflops", "TFLOP/s (median)", ".3f"), _tip("tflops_lo", "TFLOP/s low", ".3f"),
            _tip("tflops_hi", "TFLOP/s high", ".3f"), _tip("median_ms", "median time (ms)", ".4f"),
            _tip("pct", "% of cuBLAS", ".1f"), _tip("rows", "rows pooled", "d"), _n("spread", "spread shown"),
            _n("runs", "run ids"), _n("datasets", "datasets")]
    tips = _no_nulls(df, _provenance(tips))
    base = alt.Chart().encode(x=x, color=color)
    lines = base.mark_line(point=alt.OverlayMarkDef(size=40, filled=True)).encode(y=y, strokeDash=dash, detail="stage:N", tooltip=tips)
    whiskers = base.mark_rule(strokeWidth=1.5).encode(y=alt.Y("tflops_lo:Q", title=y_title), y2="tflops_hi:Q", tooltip=tips)
    layer = alt.layer(whiskers, lines, _flag_marks(x, y, tips), data=df).properties(width=330, height=280)
    return layer.facet(facet=alt.Facet("gpu_model:N", title=None, header=alt.Header(labelFontSize=14, labelFontWeight="bold")),
                       columns=columns).resolve_scale(y="shared")


def heatmap_chart(sc: pd.DataFrame, size_label: str) -> alt.LayerChart:
    """Device x stage heat map of % of same-precision cuBLAS at one size, value written in each cell."""
    df = _clean(sc[sc["family"] != "baseline"])
    stages = _stage_sort(df)
    devices = sorted(df["gpu_model"].unique().tolist())
    base = alt.Chart().encode(
        x=alt.X("gpu_model:N", title="GPU model", sort=devices, axis=alt.Axis(labelAngle=0, orient="top", labelLimit=200)),
        y=alt.Y("stage:N", sort=stages, title=None, axis=alt.Axis(labelLimit=260)))
    tips = [_n("gpu_model", "GPU model"), _n("stage", "stage"), _n("family", "family"), _n("dtype", "precision"),
            _n("size_label", "size"), _tip("pct", "% of cuBLAS (median)", ".2f"), _tip("pct_lo", "% low", ".2f"),
            _tip("pct_hi", "% high", ".2f"), _tip("tflops", "TFLOP/s", ".3f"), _tip("rows", "rows pooled", "d"), _n("runs", "run ids")]
    tips = _no_nulls(df, _provenance(tips))
    df["pct_label"] = [f"{p:.0f}{'⚑' if f and f != '—' else ''}" for p, f in zip(df["pct"], df.get("flag", [""] * len(df)))]
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("pct:Q", title="% of cuBLAS", scale=alt.Scale(scheme="viridis", domain=[0, 100], clamp=True)),
        tooltip=tips)
    text = base.mark_text(fontSize=12).encode(
        text=alt.Text("pct_label:N"),
        color=alt.condition("datum.pct > 60", alt.value("black"), alt.value("white")), tooltip=tips)
    width = max(160, len(devices) * max(90, 9 * max(len(d) for d in devices) + 24))
    return alt.layer(rect, text, data=df).properties(width=width, height=max(80, 22 * len(stages)))


def peak_chart(cells: pd.DataFrame, size_label: str) -> alt.LayerChart:
    """Every stage as % of its GPU's dense peak for its own precision at one size; whiskers: spread;
    cuBLAS and the other baselines last, in grey."""
    df = _clean(cells)
    df["label"] = df["stage"] + " · " + df["dtype"]
    labels = list(dict.fromkeys(df.set_index("stage").loc[_stage_sort(df, baselines_last=True), "label"]))
    devices = sorted(df["gpu_model"].unique().tolist())
    title = "% of the GPU's dense peak for the stage's precision"
    y = alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=300))
    tips = [_n("gpu_model", "GPU model"), _n("stage", "stage"), _n("dtype", "precision"), _n("size_label", "size"),
            _tip("pct_of_peak", "% of peak (median)", ".1f"), _tip("pct_of_peak_lo", "% low", ".1f"),
            _tip("pct_of_peak_hi", "% high", ".1f"), _tip("tflops", "TFLOP/s (median)", ".1f"),
            _tip("peak_tflops", "peak (TFLOP/s)", ".1f"), _tip("pct", "% of cuBLAS", ".1f"), _tip("rows", "rows pooled", "d"),
            _n("runs", "run ids")]
    tips = _no_nulls(df, _provenance(tips))
    df["pct_label"] = [f"{p:.0f}{' ⚑' if f and f != '—' else ''}" for p, f in zip(df["pct_of_peak"], df.get("flag", [""] * len(df)))]
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("gpu_model:N", sort=devices))
    bars = base.mark_bar(height={"band": 0.9}).encode(
        x=alt.X("pct_of_peak:Q", title=title, scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("gpu_model:N", title="GPU model", sort=devices, scale=alt.Scale(range=MEASURED_COLORS),
                        legend=alt.Legend(orient="top")),
        opacity=alt.condition("datum.kind == 'baseline'", alt.value(0.55), alt.value(1.0)), tooltip=tips)
    rules = base.mark_rule(color="black").encode(x=alt.X("pct_of_peak_lo:Q", title=title), x2="pct_of_peak_hi:Q", tooltip=tips)
    text = base.mark_text(align="left", dx=4, fontSize=10, color="#333").encode(
        x=alt.X("pct_of_peak_hi:Q", title=title), text=alt.Text("pct_label:N"), tooltip=tips)
    return alt.layer(bars, rules, text, data=df).properties(
        width=420, height=max(80, 16 * len(labels) * max(1, len(devices))),
        title=alt.TitleParams(f"% of peak at {size_label}", subtitle="bars: median, whiskers: spread; faded: baselines", anchor="start"))


DTYPE_COLORS = {"fp32": "#4c78a8", "tf32": "#f58518", "fp16": "#54a24b", "bf16": "#b279a2"}


def roofline_chart(points: pd.DataFrame, roofs: pd.DataFrame, gpu_model: str) -> alt.LayerChart:
    """Arithmetic intensity against TFLOP/s (log-log) on one GPU model: a roof per precision, min(peak,
    bandwidth × intensity), and every stage and baseline at every size a point, coloured by precision."""
    dtypes = [d for d in DTYPE_COLORS if d in set(points["dtype"]) | set(roofs["dtype"])]
    color = alt.Color("dtype:N", title="precision", scale=alt.Scale(domain=dtypes, range=[DTYPE_COLORS[d] for d in dtypes]),
                      legend=alt.Legend(orient="top"))
    x = alt.X("intensity:Q", title="arithmetic intensity (FLOP per compulsory DRAM byte, log)", scale=alt.Scale(type="log"))
    y_title = "throughput (TFLOP/s, log)"
    y = alt.Y("tflops:Q", title=y_title, scale=alt.Scale(type="log"))
    rtips = [_n("dtype", "precision"), _tip("peak_tflops", "peak (TFLOP/s)", ".1f"), _tip("bandwidth_tbs", "memory bandwidth (TB/s)", ".2f")]
    roof = alt.Chart(_clean(roofs)).mark_line(strokeDash=[6, 3], strokeWidth=2).encode(x=x, y=y, color=color, tooltip=rtips)
    ends = roofs.sort_values("intensity").groupby("peak_tflops", as_index=False).agg(
        intensity=("intensity", "last"), tflops=("tflops", "last"), dtype=("dtype", "first"),
        names=("dtype", lambda d: " = ".join(dict.fromkeys(d))))
    ends["text"] = ends["names"] + " peak " + ends["tflops"].round(0).astype(int).astype(str) + " TFLOP/s"
    # Each roof's name just above its right end, on a white halo so that points and other roofs do not cover it.
    text = alt.Chart(_clean(ends)).encode(x=x, y=y, text="text:N")
    label = alt.layer(text.mark_text(align="right", dy=-9, fontSize=13, fontWeight="bold", stroke="white", strokeWidth=4),
                      text.mark_text(align="right", dy=-9, fontSize=13, fontWeight="bold").encode(color=color))
    tips = [_n("stage", "stage"), _n("family", "family"), _n("dtype", "precision"), _n("size_label", "size"),
            _tip("intensity", "FLOP/byte", ".0f"), _tip("tflops", "TFLOP/s (median)", ".1f"),
            _tip("pct_of_peak", "% of peak", ".1f"), _tip("peak_tflops", "peak (TFLOP/s)", ".1f"), _n("runs", "run ids")]
    tips = _provenance(tips)
    pdf = _clean(points, [*_fields(tips), "kind"])
    tips = _no_nulls(pdf, tips)
    pts = alt.Chart(pdf).mark_point(filled=True, size=60, opacity=0.85).encode(
        x=x, y=y, color=color, tooltip=tips,
        shape=alt.Shape("kind:N", title="", scale=alt.Scale(domain=["kernel", "baseline"], range=["circle", "diamond"]),
                        legend=alt.Legend(orient="top")))
    flags = _flag_marks(x, y, tips).properties(data=pdf)
    return alt.layer(roof, pts, flags, label).properties(width=640, height=400, title=alt.TitleParams(
        f"Roofline · {gpu_model}", subtitle="dashed: roofs, min(peak, bandwidth × intensity); points: median per stage and size",
        anchor="start"))


HISTORY_COLORS = {"first run": "#000000", **VERDICT_COLORS}


def history_chart(hist: pd.DataFrame) -> alt.FacetChart:
    """Median time per run against the run's start (UTC), one panel per stage (own y scale); whiskers: ~95 % band of the
    estimate; colour: verdict against the previous run, large rings: the changes outside the noise."""
    tips = [_n("stage", "stage"), _n("gpu_model", "GPU model"), _n("size_label", "size"), _n("run", "run"), _n("commit", "commit"),
            _tip("started", "started", type_="temporal"), _tip("median_ms", "median (ms)", ".5f"), _tip("ms_lo", "band low (ms)", ".5f"),
            _tip("ms_hi", "band high (ms)", ".5f"), _tip("tflops", "TFLOP/s", ".2f"), _tip("rows", "rows", "d"), _n("prev_run", "previous run"),
            _tip("diff_pct", "vs previous (%)", "+.2f"), _tip("band_pct", "± band (%)", ".2f"), _n("verdict", "verdict")]
    df = _clean(hist, [*_fields(tips), "change", "order"])
    tips = _no_nulls(df, tips)
    df["verdict"] = df["verdict"].replace("", "first run")
    stages = _stage_sort(df)
    x = alt.X("started:T", title="run started (UTC)", scale=alt.Scale(type="utc"), axis=alt.Axis(format="%m-%d %H:%M", labelAngle=-30))
    y_title = "median time (ms)"
    color = alt.Color("verdict:N", title="against the previous run",
                      scale=alt.Scale(domain=list(HISTORY_COLORS), range=list(HISTORY_COLORS.values())), legend=alt.Legend(orient="top"))
    base = alt.Chart().encode(x=x)
    layers = [base.mark_line(color="#999").encode(y=alt.Y("median_ms:Q", title=y_title, scale=alt.Scale(zero=False))),
              base.mark_rule(strokeWidth=1.5).encode(y=alt.Y("ms_lo:Q", title=y_title), y2="ms_hi:Q", color=color, tooltip=tips),
              base.mark_point(filled=True, size=50, opacity=1).encode(y=alt.Y("median_ms:Q", title=y_title), color=color, tooltip=tips),
              base.transform_filter("datum.change").mark_point(size=260, strokeWidth=2.5, filled=False).encode(
                  y=alt.Y("median_ms:Q", title=y_title), color=color, tooltip=tips)]
    return alt.layer(*layers, data=df).properties(width=290, height=180).facet(  # two panels fit 800 px
        facet=alt.Facet("stage:N", sort=stages, title=None, header=alt.Header(labelFontSize=13, labelFontWeight="bold")),
        columns=2).resolve_scale(y="independent")


# ---------------------------------------------------------------- reproducibility

def spread_chart(per_row: pd.DataFrame, cv_limit_pct: float) -> alt.HConcatChart:
    """Each timed row's CV and IQR/median (%, log scale) by stage; dashed: the noise threshold."""
    tips = [_n("dataset", "dataset"), _n("run_id", "run id"), _n("gpu", "GPU"), _n("stage", "stage"), _n("size_label", "size"),
            _tip("repeat", "repeat", "d"), _tip("cv_pct", "CV (%)", ".3f"), _tip("iqr_pct", "IQR / median (%)", ".3f"),
            _tip("median_ms", "median time (ms)", ".4f"), _tip("batches", "samples (batches)", "d")]
    df = _clean(per_row, [*_fields(tips), "order", "size"])
    tips = _no_nulls(df, tips)
    df["cv_pct"] = df["cv_pct"].clip(lower=1e-3)
    df["iqr_pct"] = df["iqr_pct"].clip(lower=1e-3)
    stages = _stage_sort(df)
    sizes = list(dict.fromkeys(df.sort_values("size")["size_label"]))
    color = alt.Color("size_label:N", sort=sizes, title="size", scale=alt.Scale(scheme="viridis"), legend=alt.Legend(orient="top"))
    rule = _rules([cv_limit_pct]).mark_rule(strokeDash=[4, 3], color="#e45756").encode(x="v:Q")
    height = max(100, 10 * len(stages) * max(1, len(sizes)) + 10)
    lo = min(float(df[["cv_pct", "iqr_pct"]].min().min()), cv_limit_pct)
    hi = max(float(df[["cv_pct", "iqr_pct"]].max().max()), cv_limit_pct)
    ticks = [v for v in (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100) if lo / 3 <= v <= hi * 3]

    def panel(field: str, title: str, labels: bool) -> alt.LayerChart:
        y = alt.Y("stage:N", sort=stages, title=None, axis=alt.Axis(labelLimit=260, grid=True) if labels else None)
        orient = "top"  # the axis where one starts reading
        pts = alt.Chart().mark_tick(thickness=1.5, size=8, opacity=0.7, orient="vertical").encode(
            x=alt.X(f"{field}:Q", title=title, scale=alt.Scale(type="log"), axis=alt.Axis(values=ticks, format="~g", orient=orient)),
            y=y, yOffset=alt.YOffset("size_label:N", sort=sizes), color=color, tooltip=tips)
        return (pts + rule).properties(width=310, height=height)

    return alt.hconcat(panel("cv_pct", "CV of samples (%, log scale)", True),
                       panel("iqr_pct", "IQR / median of samples (%, log scale)", False), spacing=8, data=df).resolve_scale(y="shared")


def comparison_chart(cmp: pd.DataFrame, tol_pct: float, title: str) -> alt.LayerChart:
    """Relative difference B vs A per cell (%), whiskers: the ~95 % band; dashed: ±tolerance; colour: verdict."""
    df = _clean(cmp)
    cells = list(dict.fromkeys(df["cell"]))
    pairs = list(dict.fromkeys(df["pair"]))
    tips = [_n(c, c.replace("_", " ")) for c in ("gpu_model", "gpu_uuid") if c in df.columns]
    tips += [_n("stage", "stage"), _n("size_label", "size"), _n("pair", "A~B"), _tip("a_ms", "A median (ms)", ".5f"),
             _tip("b_ms", "B median (ms)", ".5f"), _tip("diff_pct", "B vs A (%)", "+.3f"), _tip("band_pct", "± band (%)", ".3f"),
             _n("verdict", "verdict"), _tip("a_rows", "rows A", "d"), _tip("b_rows", "rows B", "d")]
    tips = _no_nulls(df, tips)
    y = alt.Y("cell:N", sort=cells, title=None, axis=alt.Axis(labelLimit=300))
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("pair:N", sort=pairs))
    color = alt.Color("verdict:N", title="verdict", scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
                      legend=alt.Legend(orient="top"))
    x_title = "time of B relative to A (%; + is slower); whiskers: ~95 % band"
    rules = base.mark_rule(strokeWidth=1.5).encode(x=alt.X("lo_pct:Q", title=x_title), x2="hi_pct:Q", color=color, tooltip=tips)
    pts = base.mark_point(filled=True, size=30).encode(x=alt.X("diff_pct:Q", title=x_title), color=color, tooltip=tips)
    tol = _rules([-tol_pct, tol_pct]).mark_rule(strokeDash=[4, 3], color="#333").encode(x="v:Q")
    zero = _rules([0.0]).mark_rule(color="#999").encode(x="v:Q")
    height = max(100, len(cells) * max(20, 7 * len(pairs)))
    return alt.layer(zero, tol, rules, pts, data=df).properties(width=620, height=height, title=alt.TitleParams(title, anchor="start"))


# ---------------------------------------------------------------- telemetry

def telemetry_chart(tl: pd.DataFrame, windows: pd.DataFrame) -> alt.VConcatChart:
    """SM clock, temperature and power against wall-clock time (UTC), one line per GPU; red bands: throttled windows."""
    tips = [_tip("time", "time", type_="temporal"), _n("gpu", "GPU"), _n("run_id", "run id"), _n("stage", "stage"),
            _n("size_label", "size"), _tip("repeat", "repeat", "d"), _n("series", "series"), _tip("t_ms", "t in cell (ms)", ".1f"),
            _tip("sm_clock_mhz", "SM clock (MHz)", "d"), _tip("temp_c", "temperature (°C)", "d"), _tip("power_w", "power (W)", ".1f"),
            _n("reason_names", "clock-event reasons"), _n("throttled", "throttled")]
    df = _clean(tl, [*_fields(tips), "cell"])
    tips = _no_nulls(df, tips)
    gpus = sorted(df["gpu"].unique().tolist())
    def time_x(field: str, labelled: bool) -> alt.X:
        if labelled:
            return alt.X(f"{field}:T", title="time (UTC)", scale=alt.Scale(type="utc"), axis=alt.Axis(format="%H:%M:%S", labelAngle=0))
        return alt.X(f"{field}:T", title=None, scale=alt.Scale(type="utc"), axis=alt.Axis(labels=False, ticks=False, domain=False))

    bottom, inner = time_x("time", True), time_x("time", False)
    color = alt.Color("gpu:N", title="GPU", sort=gpus, scale=alt.Scale(range=MEASURED_COLORS), legend=alt.Legend(orient="top", labelLimit=300))
    wtips = [_n("gpu", "GPU"), _tip("start", "from", type_="temporal"), _tip("end", "to", type_="temporal"),
             _tip("samples", "samples", "d"), _n("reasons", "reasons"), _n("stages", "cells"), _tip("min_clock_mhz", "lowest SM clock (MHz)", "d")]
    wdf = _clean(windows, _fields(wtips))
    wtips = _no_nulls(wdf, wtips)
    zoom = alt.selection_interval(encodings=["x"], bind="scales")

    def panel(field: str, title: str, extra=None, x=inner, scale: alt.Scale | None = None, fmt: str = "~s") -> alt.LayerChart:
        layers = []
        if not wdf.empty:
            layers.append(alt.Chart(wdf).mark_rect(color="#e45756", opacity=0.25).encode(
                x=time_x("start", x is bottom), x2="end:T", tooltip=wtips))
        line = alt.Chart().mark_line(strokeWidth=1.2, interpolate="step-after").encode(
            x=x, y=alt.Y(f"{field}:Q", title=title, scale=scale or alt.Scale(zero=False), axis=alt.Axis(format=fmt)),
            color=color, detail="cell:N")  # one line per cell: the gaps between cells stay gaps
        pts = alt.Chart().mark_circle(size=8, opacity=0.5).encode(x=x, y=alt.Y(f"{field}:Q", title=title), color=color, tooltip=tips)
        layers += [line, pts]
        if extra is not None:
            layers.append(extra)
        return alt.layer(*layers).properties(width=700, height=170)

    clock_ref = None
    top = float(df["sm_clock_mhz"].max())
    if "max_sm_clock_mhz" in tl and tl["max_sm_clock_mhz"].notna().any():
        ref = _clean(tl.groupby("gpu", as_index=False)["max_sm_clock_mhz"].max())
        top = max(top, float(ref["max_sm_clock_mhz"].max()))
        clock_ref = alt.Chart(ref).mark_rule(strokeDash=[6, 4], color="#333").encode(
            y=alt.Y("max_sm_clock_mhz:Q", title="SM clock (MHz; dashed: max)"),
            tooltip=[_n("gpu", "GPU"), _tip("max_sm_clock_mhz", "max SM clock (MHz)", "d")])
    # From half the max clock (or lower, if the clock went lower) to just above the max: a drop reads in proportion.
    clock_scale = alt.Scale(domain=[min(float(df["sm_clock_mhz"].min()) - 50, 0.5 * top), top * 1.04], nice=False)
    clock = panel("sm_clock_mhz", "SM clock (MHz; dashed: max)", clock_ref, scale=clock_scale, fmt="d").add_params(zoom)
    return alt.vconcat(clock, panel("temp_c", "temperature (°C)", fmt="d"), panel("power_w", "board power (W)", x=bottom, fmt="d"),
                       spacing=14, data=df).resolve_scale(x="shared")


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
    tips = [_n("dataset", "dataset"), _n("run_id", "run id"), _n("gpu", "GPU"), _n("family", "family"), _n("stage", "stage"),
            _n("size_label", "size"), _tip("repeat", "repeat", "d"), _tip("sm_clock_median_mhz", "median SM clock (MHz)", ".0f"),
            _tip("sm_clock_min_mhz", "lowest SM clock (MHz)", ".0f"), _tip("median_ms", "median time (ms)", ".5f"),
            _tip("clock_pct", "median SM clock (% of max)", ".2f"), _tip("max_sm_clock_mhz", "max SM clock (MHz)", ".0f"),
            _tip("rel_pct", "vs cell median (%)", "+.3f"), _tip("throttled_fraction", "throttled fraction", ".3f"),
            _n("throttle_state", "power / thermal")]
    tips = _provenance(tips, ROW_PROVENANCE_TIPS)
    ct = ct.assign(throttle_state=[("power-capped" if p is True else "no power cap") + (", thermal slowdown" if t is True else "")
                                   for p, t in zip(ct.get("throttle_power", [None] * len(ct)), ct.get("throttle_thermal", [None] * len(ct)))])
    df = _clean(ct, [*_fields(tips), "order", "family", "size"])
    tips = _no_nulls(df, tips)
    domain = robust_domain(df["rel_pct"])
    df["beyond"] = (df["rel_pct"] < domain[0]) | (df["rel_pct"] > domain[1])
    stages = _stage_sort(df)
    sizes = list(dict.fromkeys(df.sort_values("size")["size_label"]))
    lo, hi = float(df["clock_pct"].min()), float(df["clock_pct"].max())
    pad = max(2.0, 0.05 * (hi - lo))
    if len(stages) <= 20:
        color = alt.Color("stage:N", sort=stages, title="stage", scale=stage_scale(df, stages), legend=BELOW)
    else:  # too many stages for a legend one can read: colour by family, the stage is in the tooltip
        fams = list(dict.fromkeys(df.sort_values("order")["family"]))
        color = alt.Color("family:N", sort=fams, title="family", scale=alt.Scale(range=TABLEAU10), legend=BELOW)
    x = alt.X("clock_pct:Q", title="median SM clock during the cell (% of the GPU's max)",
              scale=alt.Scale(domain=[lo - pad, min(hi + pad, max(hi, 100.0) + 2)], nice=False))
    y = alt.Y("rel_pct:Q", title="time vs cell median (%)", scale=alt.Scale(domain=domain, clamp=True, nice=False))
    pts = alt.Chart().mark_point(filled=True, size=40, opacity=0.7).encode(
        x=x, y=y, color=color, shape=alt.Shape("size_label:N", title="size", sort=sizes, legend=BELOW), tooltip=tips)
    ringed = alt.Chart().transform_filter("datum.beyond").mark_point(size=160, strokeWidth=1.5, color="#000").encode(
        x=x, y=y, tooltip=tips)
    n = int(df["beyond"].sum())
    note = f"{n} row(s) beyond ±{domain[1]:.2g} % sit at the edge, ringed" if n else f"every row within ±{domain[1]:.2g} %"
    return alt.layer(pts, ringed, _flag_marks(x, y, tips, "launch_flag"), data=df).properties(
        width=640, height=360, title=alt.TitleParams("Time vs SM clock", subtitle=note, anchor="start"))


# ---------------------------------------------------------------- overview

def gpus_by_model_chart(gpus: pd.DataFrame) -> alt.Chart:
    df = _clean(gpus.groupby("gpu_model", as_index=False).agg(gpus=("gpu_uuid", "nunique"), rows=("rows", "sum"),
                                                              hosts=("host", lambda s: ", ".join(sorted(set(s.dropna())))),
                                                              uuids=("gpu", lambda s: ", ".join(s))))

    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("gpu_model:N", title=None, sort="-x", axis=alt.Axis(labelLimit=260)),
        x=alt.X("gpus:Q", title="GPUs (distinct UUIDs)", axis=alt.Axis(tickMinStep=1, format="d")),
        color=alt.Color("gpu_model:N", legend=None, scale=alt.Scale(range=MEASURED_COLORS)),
        tooltip=[_n("gpu_model", "GPU model"), _tip("gpus", "GPUs", "d"), _tip("rows", "rows", "d"), _n("hosts", "hosts"),
                 _n("uuids", "GPUs")]).properties(height=max(60, 32 * len(df)), width=240)


def runs_timeline_chart(runs: pd.DataFrame) -> alt.LayerChart:
    """When each run wrote its rows (first to last row), one bar per dataset · run."""
    df = _clean(runs.assign(label=runs["dataset"] + " · " + runs["run_id"]))
    df["end"] = df["last_row"].where(df["last_row"] > df["started"], df["started"] + pd.Timedelta(seconds=1))
    labels = list(df.sort_values("started")["label"])
    span_s = (df["end"].max() - df["started"].min()).total_seconds() if len(df) else 0
    fmt = "%H:%M:%S" if span_s < 1800 else "%H:%M" if span_s < 86400 else "%b %d %H:%M"
    tips = [_n("dataset", "dataset"), _n("run_id", "run id"), _tip("started", "first row", type_="temporal"),
            _tip("last_row", "last row", type_="temporal"), _tip("duration_s", "span (s)", ".0f"), _tip("rows", "rows", "d"),
            _tip("ok", "ok", "d"), _tip("not_ok", "not ok", "d"), _tip("gpus", "GPUs", "d"), _n("gpu_models", "GPU models"),
            _n("git_commit", "commit")]
    tips = _no_nulls(df, tips)
    return alt.Chart(df).mark_bar(height={"band": 0.7}).encode(
        x=alt.X("started:T", title="time (UTC)", scale=alt.Scale(type="utc"), axis=alt.Axis(labelAngle=0, format=fmt, labelOverlap=True)),
        x2="end:T", y=alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=220)),
        color=alt.Color("dataset:N", title="dataset", scale=alt.Scale(range=MEASURED_COLORS),
                        legend=alt.Legend(orient="top", columns=3, labelLimit=180)),
        tooltip=tips).properties(height=max(60, 26 * len(df)), width="container")  # as wide as the page, whatever it is


# ---------------------------------------------------------------- tuning

TUNING_METRICS = {  # field -> axis title
    "tflops": "throughput (TFLOP/s)",
    "pct": "% of same-precision cuBLAS (timed interleaved with each cell)",
}
OTHER_CONFIGS = "other configurations"


def _tuning_tips() -> list[alt.Tooltip]:
    return [_n("config", "configuration (BMxBNxBK_WMxWN_sSTAGES)"), _n("stage", "stage"), _n("role", "row kind"),
            _n("gpu_model", "GPU model"), _n("size_label", "size"), _tip("tflops", "TFLOP/s (median)", ".2f"),
            _tip("tflops_lo", "TFLOP/s low", ".2f"), _tip("tflops_hi", "TFLOP/s high", ".2f"),
            _tip("median_ms", "median time (ms)", ".4f"), _tip("gap_to_best_pct", "slower than the best (%)", ".2f"),
            _tip("rank", "rank (1 = fastest)", "d"), _tip("configs", "configurations measured", "d"),
            _tip("pct", "% of cuBLAS (median)", ".1f"), _tip("baseline_ms", "cuBLAS time, interleaved (ms)", ".4f"),
            _tip("registers", "registers / thread", "d"), _tip("local_bytes", "local memory / thread (bytes; > 0: spills)", "d"),
            _tip("threads_per_block", "threads / block", "d"), _tip("dynamic_smem_bytes", "dynamic shared memory (bytes)", "d"),
            _tip("rows", "rows pooled", "d"), _n("spread", "spread shown"), _n("runs", "run ids")] + \
        [_n(f, title) for f, title in PROVENANCE_TIPS.items()]


def _highlight_scale(groups: list[str]) -> alt.Scale:
    """Ladder stage black, the ladder configuration's tuning row dark grey, winners in colour, the rest light grey."""
    rng, k = [], 0
    for g in groups:
        if g.startswith("ladder stage"):
            rng.append("#000000")
        elif g == OTHER_CONFIGS:
            rng.append("#c8c8c8")
        elif g.endswith("as a tuning row"):
            rng.append("#777777")
        else:
            rng.append(TABLEAU10[k % len(TABLEAU10)])
            k += 1
    return alt.Scale(domain=groups, range=rng)


def _highlight_order(df: pd.DataFrame) -> list[str]:
    groups = list(dict.fromkeys(df.sort_values("size")["highlight"]))
    first = [g for g in groups if g.startswith("ladder stage")]
    last = [g for g in groups if g == OTHER_CONFIGS]
    return first + [g for g in groups if g not in first and g not in last] + last


def tuning_chart(lines: pd.DataFrame, metric: str = "tflops", log: bool = False) -> alt.LayerChart:
    """Every configuration of one kernel on one GPU model against size: thin grey lines, the configurations
    that win at some size in colour, the ladder stage in black; ringed points: the best at each size;
    whiskers (highlighted lines): spread; ⚑: pools rows whose % compares unlike launches. `log`: a log y axis
    (64³ and 8192³ differ by orders of magnitude in TFLOP/s)."""
    title = TUNING_METRICS[metric] + (" (log scale)" if log else "")
    tips = _tuning_tips()
    df = _clean(lines, [*_fields(tips), "size", "highlight", "best_here", "is_ladder_config", f"{metric}_lo", f"{metric}_hi"])
    tips = _no_nulls(df, tips)
    square = bool((df["m"] == df["n"]).all() and (df["n"] == df["k"]).all()) if {"m", "n", "k"} <= set(df) else True
    sizes = sorted(df["size"].unique().tolist())
    x = alt.X("size:Q", title="matrix size N, M = N = K (log₂ scale)" if square else "size ∛(M·N·K) (log₂ scale)",
              scale=alt.Scale(type="log", base=2, nice=False, padding=12), axis=alt.Axis(values=sizes, format="d"))
    y = alt.Y(f"{metric}:Q", title=title, scale=alt.Scale(type="log") if log else alt.Scale(zero=False))
    groups = _highlight_order(df)
    color = alt.Color("highlight:N", title="configuration", sort=groups, scale=_highlight_scale(groups),
                      legend=alt.Legend(orient="right", labelLimit=420, symbolType="stroke", symbolStrokeWidth=3))
    dash = alt.condition("datum.is_ladder_config", alt.value([5, 3]), alt.value([1, 0]))
    others = alt.Chart().transform_filter(f"datum.highlight == '{OTHER_CONFIGS}'").encode(x=x, y=y, color=color, detail="stage:N")
    shown = alt.Chart().transform_filter(f"datum.highlight != '{OTHER_CONFIGS}'").encode(x=x, color=color, detail="stage:N")
    layers = [
        others.mark_line(strokeWidth=0.8, opacity=0.7),
        others.mark_circle(size=18, opacity=0.7).encode(tooltip=tips),
        shown.mark_rule(strokeWidth=1.5).encode(y=alt.Y(f"{metric}_lo:Q", title=title), y2=f"{metric}_hi:Q", tooltip=tips),
        shown.mark_line(strokeWidth=2.4).encode(y=y, strokeDash=dash),
        shown.mark_circle(size=45, opacity=1).encode(y=y, tooltip=tips),
        alt.Chart().transform_filter("datum.best_here").mark_point(size=190, strokeWidth=2, color="#000", filled=False)
        .encode(x=x, y=y, tooltip=tips),
        _flag_marks(x, y, tips),
    ]
    return alt.layer(*layers, data=df).properties(width=560, height=360)


def tuning_rank_chart(lines: pd.DataFrame, size_label: str, metric: str = "tflops", log: bool = False) -> alt.LayerChart:
    """Every configuration at one size, fastest first: dots (median) with spread whiskers, each labelled with
    how much slower than the best it is; the ladder stage in black with a dashed rule across. Dots, not bars:
    the axis does not start at zero, so gaps of a few percent stay visible. Colours as in tuning_chart(lines)."""
    title = TUNING_METRICS[metric]
    tips = _tuning_tips()
    groups = _highlight_order(lines)
    full = _highlight_scale(groups)
    df = _clean(lines[lines["size_label"] == size_label],
                [*_fields(tips), "highlight", "is_ladder_config", f"{metric}_lo", f"{metric}_hi"])
    tips = _no_nulls(df, tips)
    title += " (log scale)" if log else ""
    ladder = df["role"] != "tuning"
    df["label"] = [f"ladder stage {c}".strip() if lad else c for lad, c in zip(ladder, df["config"])]
    df["gap_text"] = [("best" if r == 1 else f"+{g:.1f} %" if pd.notna(g) else "") + (" ⚑" if f and f != "—" else "")
                      for g, r, f in zip(df["gap_to_best_pct"], df["rank"], df.get("flag", [""] * len(df)))]
    order = list(df.assign(_r=df["rank"].fillna(0)).sort_values(["_r", "median_ms"])["label"])
    present = [g for g in groups if g in set(df["highlight"])]
    color = alt.Color("highlight:N", title=None, sort=present,
                      scale=alt.Scale(domain=present, range=[full.range[full.domain.index(g)] for g in present]),
                      legend=alt.Legend(orient="top", labelLimit=420, columns=2))
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=300, labelOverlap=False, labelFontSize=10))
    xs = alt.X(f"{metric}:Q", title=title, scale=alt.Scale(type="log", padding=30) if log else alt.Scale(zero=False, padding=30))
    base = alt.Chart().encode(y=y)
    layers = [
        base.mark_rule(color="#333").encode(x=alt.X(f"{metric}_lo:Q", title=title), x2=f"{metric}_hi:Q", tooltip=tips),
        base.mark_text(align="left", dx=6, fontSize=10, color="#333").encode(x=alt.X(f"{metric}_hi:Q", title=title),
                                                                             text="gap_text:N", tooltip=tips),
        base.mark_point(filled=True, size=70, opacity=1).encode(x=xs, color=color, tooltip=tips),
    ]
    if ladder.any():
        layers.insert(0, alt.Chart().transform_filter("datum.role != 'tuning'").mark_rule(strokeDash=[4, 3], color="#000")
                      .encode(x=alt.X(f"{metric}:Q", title=title)))
    return alt.layer(*layers, data=df).properties(width=560, height=max(100, 19 * len(df)))
