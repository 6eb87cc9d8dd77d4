"""Tuning: per GPU model and size, the best tile configuration autotuning found and what it bought over the ladder's."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import data, frames, marks, ui
from dashboard.marks import baseline_tips, clean, drawn, fields_of, flag_marks, never_null, nominal, tip
from kernels.tuning import split_name as tune_stage  # rows have no kernel column: a tuning stage's name carries it

# ---------------------------------------------------------------- queries

TUNE_KEYS = ["gpu_model", "kernel", "family", "dtype", "m", "n", "k", "size", "size_label"]
LADDER_ROLE, TUNING_ROLE = "ladder stage", "tuning"


def _verified(rows: pd.DataFrame) -> pd.DataFrame:
    t = frames.timed(rows)
    return t[t["verified"].eq(True)] if not t.empty else t


def tuning_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of stage group 'tuning' whose name parses, with kernel and config columns."""
    if rows.empty:
        return rows.assign(kernel=pd.Series(dtype="object"), config=pd.Series(dtype="object"))
    t = rows[rows["stage_group"] == "tuning"]
    parsed = [tune_stage(s) for s in t["stage"]]
    t = t.assign(kernel=[p[0] if p else None for p in parsed], config=[p[1] if p else None for p in parsed])
    return t[t["kernel"].notna()]


def tuning_cells(rows: pd.DataFrame, ladder_tags: dict[str, str] | None = None) -> pd.DataFrame:
    """One line per (GPU model, tuned kernel, size, configuration), plus the kernel's ladder stage at that size.

    Only ok and verified rows count; repeats, runs and same-model GPUs are pooled (frames.cell_stats, with both % of
    cuBLAS). The ladder stage's rows come from the runs that measured the tuning rows of the cell where there are any
    (same session, same GPUs: the fair reference), from any run otherwise (ladder_same_run False). `ladder_tags` maps a kernel to its ladder
    configuration's tag (data.ladder_configs): that tuning row is flagged is_ladder_config, a second
    measurement of the ladder stage. rank: 1 = fastest configuration of the cell (the ladder stage is not ranked).
    """
    tags = ladder_tags or {}
    extra = ["registers", "local_bytes", "threads_per_block", "dynamic_smem_bytes", "baseline_ms"]
    cols = [
        *TUNE_KEYS,
        "role",
        "stage",
        "config",
        "is_ladder_config",
        "rank",
        "configs",
        "gap_to_best_pct",
        "median_ms",
        "ms_lo",
        "ms_hi",
        "tflops",
        "tflops_lo",
        "tflops_hi",
        "pct",
        "pct_lo",
        "pct_hi",
        "pct_alone",
        "pct_alone_lo",
        "pct_alone_hi",
        "partner_shift",
        *extra,
        "rows",
        "spread",
        "runs",
        "datasets",
        "gpus",
        "ladder_same_run",
        *frames.PROVENANCE,
    ]
    tune = tuning_rows(_verified(rows))
    if tune.empty:
        return pd.DataFrame(columns=cols)
    t = _verified(rows)
    lad = t[t["stage"].isin(set(tune["kernel"])) & (t["stage_group"] != "tuning")]
    lad = lad.assign(kernel=lad["stage"], config=lad["stage"].map(lambda s: tags.get(s, "")))
    # Only GPU models that tuned the kernel: a reference run elsewhere has ladder rows but nothing to rank.
    lad = lad.merge(tune[["gpu_model", "kernel"]].drop_duplicates(), on=["gpu_model", "kernel"])
    cell = ["gpu_model", "kernel", "m", "n", "k"]
    if not lad.empty:  # prefer the ladder rows of the tuning rows' own runs, cell by cell
        runs = tune[["dataset", "run_id", *cell]].drop_duplicates()
        same = (
            lad.merge(runs.assign(_same=True), on=["dataset", "run_id", *cell], how="left")["_same"].eq(True).to_numpy()
        )
        lad = lad.assign(_same=same.astype("float64"))
        any_same = lad.groupby(cell)["_same"].transform("any")
        lad = lad[(lad["_same"] > 0) | (any_same == 0)]
    both = pd.concat([tune.assign(role=TUNING_ROLE, _same=0.0), lad.assign(role=LADDER_ROLE)], ignore_index=True)
    both["baseline_ms"] = both["baseline_median_ms"].astype("float64")
    keys = [*TUNE_KEYS, "role", "stage", "config"]
    out = frames.cell_stats(both, keys)
    attrs = (
        both.groupby(keys, dropna=False, sort=False)
        .agg(
            registers=("registers", "max"),
            local_bytes=("local_bytes", "max"),
            threads_per_block=("threads_per_block", "max"),
            dynamic_smem_bytes=("dynamic_smem_bytes", "max"),
            baseline_ms=("baseline_ms", "median"),
            ladder_same_run=("_same", "max"),
        )
        .reset_index()
    )
    out = out.merge(attrs, on=keys, how="left")
    out["ms_lo"] = out["flops"] / out["tflops_hi"] / 1e9
    out["ms_hi"] = out["flops"] / out["tflops_lo"] / 1e9
    out["is_ladder_config"] = (
        (out["role"] == TUNING_ROLE) & (out["config"] == out["kernel"].map(tags)) & out["config"].astype(bool)
    )
    group = ["gpu_model", "kernel", "m", "n", "k"]
    tuned = out["role"] == TUNING_ROLE
    out["rank"] = out[tuned].groupby(group)["median_ms"].rank(method="first")
    out["configs"] = out[tuned].groupby(group)["stage"].transform("size")
    best = out[tuned].groupby(group)["median_ms"].min().rename("_best")  # the ladder stage gets its gap too
    out = out.merge(best, left_on=group, right_index=True, how="left")
    out["gap_to_best_pct"] = 100 * (out["median_ms"] / out["_best"] - 1)
    out["ladder_same_run"] = np.where(out["role"] == LADDER_ROLE, out["ladder_same_run"] > 0, np.nan)
    return (
        out[cols]
        .sort_values(["gpu_model", "kernel", "size", "m", "n", "k", "role", "rank"], kind="stable")
        .reset_index(drop=True)
    )


def tuning_summary(cells: pd.DataFrame, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """One line per GPU model, tuned kernel and size: the best configuration and what tuning bought.

    bought = ladder stage's median time / the best configuration's (x). gap_pct: how much slower the runner-up
    is (%). ladder_aa_pct: the ladder configuration's tuning row against the ladder stage itself, the same
    kernel measured in two cells (%, + slower): the cell-to-cell noise any gap must beat. winner: 'clear' when
    the runner-up's spread lies wholly above the best's and its gap beats |ladder_aa_pct|, else 'within noise'.
    failed: configurations with rows in the cell but none ok and verified (from `rows`).
    """
    cols = [
        "gpu_model",
        "kernel",
        "dtype",
        "size_label",
        "m",
        "n",
        "k",
        "size",
        "ladder_config",
        "ladder_ms",
        "best_config",
        "best_stage",
        "best_ms",
        "best_ms_lo",
        "best_ms_hi",
        "best_spread",
        "best_tflops",
        "best_pct",
        "best_baseline_ms",
        "bought",
        "configs",
        "failed",
        "runner_up",
        "runner_up_ms",
        "gap_pct",
        "winner",
        "ladder_rank",
        "ladder_aa_pct",
        "best_local_bytes",
        "best_rows",
        "ladder_same_run",
        "runs",
    ]
    if cells.empty:
        return pd.DataFrame(columns=cols)
    group = ["gpu_model", "kernel", "m", "n", "k"]
    recs = []
    for key, g in cells.groupby(group, sort=False):
        tuned = g[g["role"] == TUNING_ROLE].sort_values("rank")
        ladder = g[g["role"] == LADDER_ROLE]
        if tuned.empty:
            continue
        b = tuned.iloc[0]
        r = tuned.iloc[1] if len(tuned) > 1 else None
        lad_ms = float(ladder["median_ms"].iloc[0]) if len(ladder) else np.nan
        as_tuning = tuned[tuned["is_ladder_config"]]
        aa_pct = (
            100 * (float(as_tuning["median_ms"].iloc[0]) / lad_ms - 1)
            if len(as_tuning) and pd.notna(lad_ms)
            else np.nan
        )
        gap = 100 * (r["median_ms"] / b["median_ms"] - 1) if r is not None else np.nan
        if r is None:
            winner = "only one configuration"
        else:
            apart = r["ms_lo"] > b["ms_hi"] and not (pd.notna(aa_pct) and gap <= abs(aa_pct))
            winner = "clear" if apart else "within noise"
        recs.append(
            {
                **dict(zip(group, key)),
                "dtype": b["dtype"],
                "size_label": b["size_label"],
                "size": b["size"],
                "ladder_config": ladder["config"].iloc[0] if len(ladder) else "",
                "ladder_ms": lad_ms,
                "best_config": b["config"],
                "best_stage": b["stage"],
                "best_ms": b["median_ms"],
                "best_ms_lo": b["ms_lo"],
                "best_ms_hi": b["ms_hi"],
                "best_spread": b["spread"],
                "best_tflops": b["tflops"],
                "best_pct": b["pct"],
                "best_baseline_ms": b["baseline_ms"],
                "bought": lad_ms / b["median_ms"],
                "configs": len(tuned),
                "runner_up": r["config"] if r is not None else "",
                "runner_up_ms": r["median_ms"] if r is not None else np.nan,
                "gap_pct": gap,
                "winner": winner,
                "ladder_rank": f"{int(as_tuning['rank'].iloc[0])} of {len(tuned)}" if len(as_tuning) else "",
                "ladder_aa_pct": aa_pct,
                "best_local_bytes": b["local_bytes"],
                "best_rows": b["rows"],
                "ladder_same_run": bool(ladder["ladder_same_run"].iloc[0]) if len(ladder) else False,
                "runs": b["runs"],
            }
        )
    out = pd.DataFrame(recs, columns=[c for c in cols if c != "failed"])
    out.insert(cols.index("failed"), "failed", _tuning_failed(rows, out) if rows is not None else 0)
    return out.sort_values(["gpu_model", "kernel", "size", "m", "n", "k"], kind="stable").reset_index(drop=True)


def _tuning_failed(rows: pd.DataFrame, summary: pd.DataFrame) -> list[int]:
    """Per summary line: configurations measured in the cell with no ok, verified row (failed, skipped, errored)."""
    tune = tuning_rows(rows)
    if tune.empty or summary.empty:
        return [0] * len(summary)
    group = ["gpu_model", "kernel", "m", "n", "k"]
    good = tune["status"].eq("ok") & tune["verified"].eq(True) & tune["median_ms"].gt(0)
    per = tune.assign(_good=good).groupby([*group, "stage"])["_good"].any()
    failed = (~per).groupby(level=group).sum().to_dict()
    return [int(failed.get(k, 0)) for k in zip(*(summary[c] for c in group))]


def tuning_lines(cells: pd.DataFrame) -> pd.DataFrame:
    """Cells of one GPU model and kernel with `highlight`, the chart's line groups: the ladder stage, the ladder
    configuration's tuning row, each configuration that is best at some size (named with those sizes), the rest."""
    if cells.empty:
        return cells.assign(highlight=pd.Series(dtype="object"), best_here=pd.Series(dtype="bool"))
    df = cells.copy()
    best = df[df["rank"] == 1].sort_values("size")
    wins = best.groupby("config", sort=False)["size_label"].agg(", ".join).to_dict()
    hl = []
    for role, config, ladder_cfg in zip(df["role"], df["config"], df["is_ladder_config"]):
        if role == LADDER_ROLE:
            hl.append(f"ladder stage ({config})" if config else "ladder stage")
        elif config in wins:
            hl.append(f"{config}: best at {wins[config]}")
        elif ladder_cfg:
            hl.append(f"{config}: ladder configuration, as a tuning row")
        else:
            hl.append("other configurations")
    df["highlight"] = hl
    df["best_here"] = df["rank"].eq(1)
    return df


@st.cache_data(show_spinner=False)
def ladder_configs() -> dict[str, str]:
    """Each tunable kernel's ladder configuration as a tuning tag ({'c_warptile': '128x128x16_64x64_s1', ...}):
    the configuration of its grid whose launch is the ladder stage's own. Empty without the kernels."""
    try:
        from kernels import tuning

        stages = {s.name: s for s in data.catalog()}
        return {
            k: c.tag
            for k, t in tuning.TUNABLES.items()
            if k in stages
            for c in t.space()
            if t.launch(c) == stages[k].launches[0]
        }
    except Exception:  # noqa: BLE001 - the page still ranks configurations without knowing the ladder's
        return {}


# ---------------------------------------------------------------- charts

TUNING_METRICS = {  # field -> axis title
    "tflops": "throughput (TFLOP/s)",
    **{b.cell_column: f"% of same-precision cuBLAS {b.short}" for b in frames.PCT_BASES},
}
MEASURES = {"tflops": "TFLOP/s", "pct": "% of cuBLAS"}  # a % then in the cell or timed alone
OTHER_CONFIGS = "other configurations"


def _tuning_tips() -> list[alt.Tooltip]:
    return [
        nominal("config", "configuration (BMxBNxBK_WMxWN_sSTAGES)"),
        nominal("stage", "stage"),
        nominal("role", "row kind"),
        nominal("gpu_model", "GPU model"),
        nominal("size_label", "size"),
        tip("tflops", "TFLOP/s (median)", ".2f"),
        tip("tflops_lo", "TFLOP/s low", ".2f"),
        tip("tflops_hi", "TFLOP/s high", ".2f"),
        tip("median_ms", "median time (ms)", ".4f"),
        tip("gap_to_best_pct", "slower than the best (%)", ".2f"),
        tip("rank", "rank (1 = fastest)", "d"),
        tip("configs", "configurations measured", "d"),
        *baseline_tips(),
        tip("baseline_ms", "cuBLAS time, interleaved (ms)", ".4f"),
        tip("registers", "registers / thread", "d"),
        tip("local_bytes", "local memory / thread (bytes; > 0: spills)", "d"),
        tip("threads_per_block", "threads / block", "d"),
        tip("dynamic_smem_bytes", "dynamic shared memory (bytes)", "d"),
        tip("rows", "rows pooled", "d"),
        nominal("spread", "spread shown"),
        nominal("runs", "run ids"),
    ] + [nominal(f, title) for f, title in marks.PROVENANCE_TIPS.items()]


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
            rng.append(marks.TABLEAU10[k % len(marks.TABLEAU10)])
            k += 1
    return alt.Scale(domain=groups, range=rng)


def _highlight_order(df: pd.DataFrame) -> list[str]:
    groups = list(dict.fromkeys(df.sort_values("size")["highlight"]))
    first = [g for g in groups if g.startswith("ladder stage")]
    last = [g for g in groups if g == OTHER_CONFIGS]
    return first + [g for g in groups if g not in first and g not in last] + last


def tuning_chart(lines: pd.DataFrame, metric: str = "tflops", log: bool = False) -> alt.LayerChart:
    """Every configuration of one kernel on one GPU model, `metric` (a TUNING_METRICS field; a missing % is no mark)
    against size: thin grey lines, the configurations that win at some size in colour, the ladder stage in black;
    ringed points: the best at each size; whiskers (highlighted lines): spread; ⚑: pools rows whose % compares unlike
    launches. `log`: a log y axis."""
    title = TUNING_METRICS[metric] + (" (log scale)" if log else "")
    tips = _tuning_tips()
    df = clean(
        lines, [*fields_of(tips), "size", "highlight", "best_here", "is_ladder_config", f"{metric}_lo", f"{metric}_hi"]
    )
    tips = never_null(df, tips)
    square = bool((df["m"] == df["n"]).all() and (df["n"] == df["k"]).all()) if {"m", "n", "k"} <= set(df) else True
    sizes = sorted(df["size"].unique().tolist())
    x = alt.X(
        "size:Q",
        title="matrix size N, M = N = K (log₂ scale)" if square else "size ∛(M·N·K) (log₂ scale)",
        scale=alt.Scale(type="log", base=2, nice=False, padding=12),
        axis=alt.Axis(values=sizes, format="d"),
    )
    y = alt.Y(f"{metric}:Q", title=title, scale=alt.Scale(type="log") if log else alt.Scale(zero=False))
    groups = _highlight_order(df)
    color = alt.Color(
        "highlight:N",
        title="configuration",
        sort=groups,
        scale=_highlight_scale(groups),
        legend=alt.Legend(orient="right", labelLimit=420, symbolType="stroke", symbolStrokeWidth=3),
    )
    dash = alt.condition("datum.is_ladder_config", alt.value([5, 3]), alt.value([1, 0]))
    others = (
        drawn(metric)
        .transform_filter(f"datum.highlight == '{OTHER_CONFIGS}'")
        .encode(x=x, y=y, color=color, detail="stage:N")
    )
    shown = (
        drawn(metric)
        .transform_filter(f"datum.highlight != '{OTHER_CONFIGS}'")
        .encode(x=x, color=color, detail="stage:N")
    )
    layers = [
        others.mark_line(strokeWidth=0.8, opacity=0.7),
        others.mark_circle(size=18, opacity=0.7).encode(tooltip=tips),
        shown.mark_rule(strokeWidth=1.5).encode(
            y=alt.Y(f"{metric}_lo:Q", title=title), y2=f"{metric}_hi:Q", tooltip=tips
        ),
        shown.mark_line(strokeWidth=2.4).encode(y=y, strokeDash=dash),
        shown.mark_circle(size=45, opacity=1).encode(y=y, tooltip=tips),
        drawn(metric)
        .transform_filter("datum.best_here")
        .mark_point(size=190, strokeWidth=2, color="#000", filled=False)
        .encode(x=x, y=y, tooltip=tips),
        flag_marks(x, y, tips),
    ]
    return alt.layer(*layers, data=df).properties(width=560, height=360)


def tuning_rank_chart(
    lines: pd.DataFrame, size_label: str, metric: str = "tflops", log: bool = False
) -> alt.LayerChart:
    """Every configuration at one size, fastest first: dots (median) with spread whiskers, each labelled with
    how much slower than the best it is; the ladder stage in black with a dashed rule across. Dots, not bars:
    the axis does not start at zero, so gaps of a few percent stay visible. Colours as in tuning_chart(lines)."""
    title = TUNING_METRICS[metric]
    tips = _tuning_tips()
    groups = _highlight_order(lines)
    full = _highlight_scale(groups)
    df = clean(
        lines[lines["size_label"] == size_label],
        [*fields_of(tips), "highlight", "is_ladder_config", f"{metric}_lo", f"{metric}_hi"],
    )
    tips = never_null(df, tips)
    title += " (log scale)" if log else ""
    ladder = df["role"] != "tuning"
    df["label"] = [f"ladder stage {c}".strip() if lad else c for lad, c in zip(ladder, df["config"])]
    df["gap_text"] = [
        ("best" if r == 1 else f"+{g:.1f} %" if pd.notna(g) else "") + (" ⚑" if f and f != "—" else "")
        for g, r, f in zip(df["gap_to_best_pct"], df["rank"], df.get("flag", [""] * len(df)))
    ]
    order = list(df.assign(_r=df["rank"].fillna(0)).sort_values(["_r", "median_ms"])["label"])
    present = [g for g in groups if g in set(df["highlight"])]
    color = alt.Color(
        "highlight:N",
        title=None,
        sort=present,
        scale=alt.Scale(domain=present, range=[full.range[full.domain.index(g)] for g in present]),
        legend=alt.Legend(orient="top", labelLimit=420, columns=2),
    )
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=300, labelOverlap=False, labelFontSize=10))
    xs = alt.X(
        f"{metric}:Q",
        title=title,
        scale=alt.Scale(type="log", padding=30) if log else alt.Scale(zero=False, padding=30),
    )
    base = drawn(metric).encode(y=y)
    layers = [
        base.mark_rule(color="#333").encode(x=alt.X(f"{metric}_lo:Q", title=title), x2=f"{metric}_hi:Q", tooltip=tips),
        base.mark_text(align="left", dx=6, fontSize=10, color="#333").encode(
            x=alt.X(f"{metric}_hi:Q", title=title), text="gap_text:N", tooltip=tips
        ),
        base.mark_point(filled=True, size=70, opacity=1).encode(x=xs, color=color, tooltip=tips),
    ]
    if ladder.any():
        layers.insert(
            0,
            drawn(metric)
            .transform_filter("datum.role != 'tuning'")
            .mark_rule(strokeDash=[4, 3], color="#000")
            .encode(x=alt.X(f"{metric}:Q", title=title)),
        )
    return alt.layer(*layers, data=df).properties(width=560, height=max(100, 19 * len(df)))


# ---------------------------------------------------------------- the page

CAPTION = (
    "Tile autotuning (kernels/tuning.py): every valid BM×BN×BK block tile, WM×WN warp tile and shared-memory "
    "stage count of each tunable kernel, measured beside the kernel's ladder stage (its hand-picked "
    "configuration) on the same GPUs. Only ok, verified rows count; repeats, runs and same-model GPUs are pooled "
    "(median of the rows' medians)."
)
PLAN_HINT = (
    "`python farm/sweep.py --plan plans/tune.toml` (every tunable kernel, 64 to 8192; "
    "`plans/tune_quick.toml` for two kernels at four sizes)"
)
# The verdict first (what won, what it bought, is it meaningful), the evidence after.
TABLE_ORDER = [
    "gpu_model",
    "kernel",
    "dtype",
    "size_label",
    "best_config",
    "bought",
    "best_ms",
    "ladder_ms",
    "gap_pct",
    "winner",
    "ladder_aa_pct",
    "best_tflops",
    "best_pct",
    "configs",
    "failed",
    "runner_up",
    "runner_up_ms",
    "best_ms_lo",
    "best_ms_hi",
    "best_spread",
    "ladder_config",
    "ladder_rank",
    "best_baseline_ms",
    "best_local_bytes",
    "best_rows",
    "ladder_same_run",
    "runs",
]


def body(L, rows, _) -> None:
    if no_tuning(L, rows):
        return
    cells = tuning_cells(rows, ladder_configs())
    if cells.empty:  # ok and verified, yet no time recorded
        st.warning("No tuning row under the current filters has a median time: nothing to rank.")
        return
    summary = tuning_summary(cells, rows)
    c = st.columns(4)
    c[0].metric("Cells tuned", len(summary), help="GPU model × kernel × size with an ok, verified tuning row")
    c[1].metric("Configurations measured", int(cells.loc[cells["role"] == TUNING_ROLE, "stage"].nunique()))
    bought = summary["bought"].dropna()
    c[2].metric("Tuning bought, median", f"{bought.median():.2f}×" if len(bought) else "—")
    c[3].metric("Tuning bought, range", f"{bought.min():.2f}× – {bought.max():.2f}×" if len(bought) else "—")
    best_table(summary)

    st.subheader("Every configuration against size")
    kernels = sorted(cells["kernel"].unique())
    c1, c2, c3, c4 = st.columns([2, 2, 2, 1])
    kernel = c1.selectbox("Kernel", kernels, key="tuning_kernel")
    models = sorted(cells.loc[cells["kernel"] == kernel, "gpu_model"].unique())
    model = c2.selectbox("GPU model", models, key="tuning_gpu")
    metric = c3.radio(
        "Measure",
        list(MEASURES),
        horizontal=True,
        key="tuning_metric",
        format_func=MEASURES.get,
        help="% of cuBLAS in the cell divides by the cuBLAS timed interleaved with each cell, whose own time moves "
        "between cells: rank by TFLOP/s, or by the % of cuBLAS timed alone",
    )
    log = c4.toggle(
        "Log scale",
        value=False,
        key="tuning_log",
        help="a log axis: small sizes' TFLOP/s are orders of magnitude below the largest's",
    )
    lines = tuning_lines(cells[(cells["kernel"] == kernel) & (cells["gpu_model"] == model)])
    if metric == "pct":
        metric = ui.pct_basis("tuning_pct_basis", lines["pct_alone"]).cell_column
    st.caption(
        "Grey: every configuration; in colour: those that are the best at some size; black: the ladder stage; "
        "dashed: the ladder configuration measured again as a tuning row. Ringed: the best at each size. "
        "Whiskers on the highlighted lines: spread. Hover a point for its configuration, registers and spills."
    )
    ui.chart(tuning_chart(lines, metric, log), key="tuning_chart")

    st.subheader("Ranking at one size")
    sizes = frames.options(lines, "size_label")
    size = st.columns(3)[0].selectbox("Size", sizes, index=len(sizes) - 1, key="tuning_size")
    at = lines[lines["size_label"] == size]
    n = int(at["configs"].max()) if at["configs"].notna().any() else 0
    st.caption(
        f"{n} configurations of {kernel} on {model} at {size}, fastest first, labelled with how much slower than "
        "the best each is; dashed: the ladder stage. Is the winner alone, or one of a pack within the noise?"
    )
    ui.chart(tuning_rank_chart(lines, size, metric, log), key="tuning_rank_chart")
    if metric == frames.IN_CELL.cell_column:
        st.caption(
            "Ranked by time. % of cuBLAS scatters more than time does: each cell divides by the cuBLAS timed "
            "interleaved with it, and that cuBLAS time moves from cell to cell (see 'cuBLAS time' in the tooltip)."
        )
    with st.expander(f"Every configuration of {kernel} on {model} (table)"):
        st.dataframe(
            lines.drop(columns=["highlight", "best_here", "family", "size", "m", "n", "k", "kernel", "gpu_model"]),
            hide_index=True,
            column_config={
                "size_label": "size",
                "median_ms": st.column_config.NumberColumn("median (ms)", format="%.4f"),
                "gap_to_best_pct": st.column_config.NumberColumn("slower than best", format="%.2f %%"),
                "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
                "pct": st.column_config.NumberColumn("% of cuBLAS in the cell", format="%.1f"),
                "pct_alone": st.column_config.NumberColumn("% of cuBLAS timed alone", format="%.1f"),
                "partner_shift": st.column_config.NumberColumn("partner shift (%)", format="%+.1f"),
                "rank": st.column_config.NumberColumn("rank", format="%d"),
            },
        )


def no_tuning(L: data.Loaded, rows: pd.DataFrame) -> bool:
    """Say why there is nothing to rank; True when the page should show nothing else."""
    if tuning_rows(L.rows).empty:
        st.info(
            "**No tuning rows in the loaded data** (stage group `tuning`, stages named "
            "`<kernel>_tune_<BMxBNxBK_WMxWN_sS>`).\n\n"
            f"Measure them with {PLAN_HINT}, then point the dashboard at the output: "
            "`streamlit run dashboard/app.py -- --data PATH`. `python -m kernels.tuning` lists each kernel's "
            "candidates and why the invalid ones are rejected before compiling."
        )
        return True
    tune = tuning_rows(rows)
    if tune.empty:
        st.info(
            "No tuning rows match the sidebar filters: clear some of them (the tuned kernels' families are "
            f"{', '.join(sorted(tuning_rows(L.rows)['family'].dropna().unique()))})."
        )
        return True
    if not (tune["status"].eq("ok") & tune["verified"].eq(True)).any():
        counts = ", ".join(f"{k} {v}" for k, v in tune["status"].value_counts().items())
        st.warning(
            f"{len(tune)} tuning rows under the current filters, none ok and verified ({counts}): nothing to rank. "
            "The Reproducibility page lists them with their status reasons."
        )
        return True
    return False


def best_table(summary: pd.DataFrame) -> None:
    st.subheader("Best configuration per GPU model and size")
    st.caption(
        "**tuning bought** = the ladder stage's median time ÷ the best configuration's. **runner-up gap**: how "
        "much slower the second best is. **ladder A/A**: the ladder configuration measured again as a tuning "
        "row, against the ladder stage itself — the same kernel in two cells, so the cell-to-cell noise a gap "
        "must beat. **winner** is *clear* when the runner-up's spread lies wholly above the best's and its gap "
        "beats |ladder A/A|, *within noise* otherwise: then any of the leaders would do."
    )
    st.dataframe(
        summary,
        hide_index=True,
        column_order=TABLE_ORDER,
        column_config={
            "gpu_model": "GPU model",
            "dtype": "precision",
            "size_label": "size",
            "ladder_config": st.column_config.TextColumn(
                "ladder config", help="the ladder stage's own tile configuration"
            ),
            "ladder_ms": st.column_config.NumberColumn(
                "ladder (ms)", format="%.4f", help="median time of the ladder stage"
            ),
            "best_config": st.column_config.TextColumn(
                "best config", help="BMxBNxBK block tile _ WMxWN warp tile _ s shared-memory stages"
            ),
            "best_ms": st.column_config.NumberColumn(
                "best (ms)", format="%.4f", help="median time of the fastest configuration"
            ),
            "best_ms_lo": st.column_config.NumberColumn("best low (ms)", format="%.4f", help="see 'spread shown'"),
            "best_ms_hi": st.column_config.NumberColumn("best high (ms)", format="%.4f", help="see 'spread shown'"),
            "best_spread": st.column_config.TextColumn(
                "spread shown",
                help="min–max of the rows' medians where the best has "
                "two rows or more (repeats, runs, GPUs); q1–q3 of its samples for one row",
            ),
            "best_tflops": st.column_config.NumberColumn("best TFLOP/s", format="%.1f"),
            "best_pct": st.column_config.NumberColumn(
                "best % of cuBLAS",
                format="%.1f",
                help="against the same-precision cuBLAS timed interleaved with the best's cell",
            ),
            "best_baseline_ms": st.column_config.NumberColumn(
                "cuBLAS (ms)",
                format="%.4f",
                help="that interleaved cuBLAS's median time: it varies from cell to cell too",
            ),
            "bought": st.column_config.NumberColumn("tuning bought", format="%.2fx", help="ladder ms / best ms"),
            "configs": st.column_config.NumberColumn(
                "configs", format="%d", help="configurations with an ok, verified row here"
            ),
            "failed": st.column_config.NumberColumn(
                "failed", format="%d", help="configurations measured here with no ok, verified row"
            ),
            "runner_up": st.column_config.TextColumn("runner-up"),
            "runner_up_ms": st.column_config.NumberColumn("runner-up (ms)", format="%.4f"),
            "gap_pct": st.column_config.NumberColumn(
                "runner-up gap", format="+%.2f %%", help="runner-up ms / best ms − 1"
            ),
            "winner": st.column_config.TextColumn(
                "winner",
                help="clear: the runner-up's spread is wholly slower and its gap beats "
                "|ladder A/A|; within noise otherwise",
            ),
            "ladder_rank": st.column_config.TextColumn(
                "ladder config's rank", help="where the ladder configuration's tuning row ranks"
            ),
            "ladder_aa_pct": st.column_config.NumberColumn(
                "ladder A/A",
                format="%+.2f %%",
                help="the ladder configuration's tuning row vs the ladder stage (+: slower)",
            ),
            "best_local_bytes": st.column_config.NumberColumn(
                "best's local mem (B)", format="%d", help="local memory per thread of the best: > 0 means it spills"
            ),
            "best_rows": st.column_config.NumberColumn("rows", format="%d", help="rows pooled for the best"),
            "ladder_same_run": st.column_config.CheckboxColumn(
                "ladder same run",
                help="the ladder stage's rows come from the runs that measured the tuning rows (else from other runs)",
            ),
            "runs": "run ids",
        },
    )
    notes = []
    if summary["ladder_ms"].isna().any():
        notes.append(
            f"{int(summary['ladder_ms'].isna().sum())} cell(s) have no ok ladder-stage row, so no 'tuning bought': "
            "list the kernel under `kernels = [...]` in the tuning plan too."
        )
    if (~summary["ladder_same_run"] & summary["ladder_ms"].notna()).any():
        notes.append(
            "Some ladder references come from other runs than their tuning rows (unticked 'ladder same run'): "
            "compare with care."
        )
    if (summary["best_local_bytes"].fillna(0) > 0).any():
        notes.append(
            "Some winners spill registers to local memory (local mem > 0): a register-hungrier toolchain may differ."
        )
    for n in notes:
        st.caption("⚠️ " + n)


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Tuning", CAPTION, body, empty_hint=f"Tuning rows come from a tuning plan: {PLAN_HINT}.")
