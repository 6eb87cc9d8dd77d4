"""Ladder: each family's stages in order, per GPU model, beside the write-ups' published figures and the profiler
counters each step moved."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import data, frames, marks, ui
from dashboard.marks import (
    clean,
    drawn,
    never_null,
    nominal,
    pct_labels,
    pct_tips,
    rules_at,
    stage_order,
    tip,
    with_provenance,
)

# ---------------------------------------------------------------- queries

LADDER_KEYS = ["gpu_model", "family", "stage", "stage_group", "position", "dtype", "order", "m", "n", "k", "size_label"]


def ladder(
    rows: pd.DataFrame,
    published: pd.DataFrame,
    family: str | list[str],
    size_label: str,
    stage_info: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One family's ladder (or several families' as one, in catalog order) at one size, per GPU model, with the
    published figures as further sources.

    Columns: source (the GPU model, or 'published (<device>)'), kind (measured | published), stage,
    order, pct (+ lo/hi: % of the baseline in the cell), pct_alone (+ lo/hi: of the baseline timed alone),
    partner_shift, tflops (+ lo/hi), median_ms, gain (speed-up over the previous stage of
    the same source and precision, x: a family with fp16 and bf16 stages is two ladders), and the
    cell's rows, runs.
    """
    families = [family] if isinstance(family, str) else family
    fam = rows[(rows["family"].isin(families)) & (rows["size_label"] == size_label)]
    baselines = set(fam["baseline"].dropna())
    base = rows[(rows["stage"].isin(baselines)) & (rows["size_label"] == size_label)]
    cells = frames.cell_stats(pd.concat([fam, base]), LADDER_KEYS)
    cols = [
        "source",
        "kind",
        "family",
        "stage",
        "stage_group",
        "dtype",
        "order",
        "position",
        "size_label",
        "pct",
        "pct_lo",
        "pct_hi",
        "pct_alone",
        "pct_alone_lo",
        "pct_alone_hi",
        "partner_shift",
        "pct_vendor",
        "unlike_launches",
        "tflops",
        "tflops_lo",
        "tflops_hi",
        "median_ms",
        "gain",
        "prev_stage",
        "rows",
        "runs",
        "spread",
        "citation",
        "what_changed",
        *frames.PROVENANCE,
    ]
    parts = []
    if not cells.empty:
        cells["order"] = np.where(cells["family"] == "baseline", 1e9, cells["order"])  # cuBLAS closes the ladder
        m = cells.rename(columns={"gpu_model": "source"}).assign(kind="measured", citation="")
        parts.append(m)
    pub = published[published["family"].isin(families)] if not published.empty else published
    if not pub.empty:
        order = dict(zip(rows["stage"], rows["order"])) if not rows.empty else {}
        p = pub.assign(
            source=pub["source_label"],
            kind="published",
            pct=pub["pct_of_baseline"],
            order=[order.get(s, 1e8 + pos) for s, pos in zip(pub["stage"], pub["position"])],
            stage_group="",
            rows=np.nan,
            runs="",
            spread="published figure",
            **{
                **dict.fromkeys(frames.PROVENANCE, ""),
                "pooled": "published figure, not measured here",
                "cards": pub["device"],
            },
        )
        # A write-up's one figure, against cuBLAS as it timed it: drawn as published whichever % is picked.
        for c in ("pct_lo", "pct_hi", "pct_alone", "pct_alone_lo", "pct_alone_hi"):
            p[c] = p["pct"]
        p["partner_shift"] = np.nan
        for c in ("tflops_lo", "tflops_hi"):
            p[c] = p["tflops"]
        parts.append(p)
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat([x for x in parts], ignore_index=True).sort_values(["kind", "source", "order"], kind="stable")
    gains, prevs = [], []
    prev: dict[tuple, tuple[float, str]] = {}  # (source, dtype) -> the last stage's (ms, name)
    for i, (source, dtype, ms, stage, fam_) in enumerate(
        zip(out["source"], out["dtype"], out["median_ms"], out["stage"], out["family"])
    ):
        if fam_ == "baseline":
            gains.append(np.nan)
            prevs.append("")
            continue
        last = prev.get((source, dtype))
        gains.append(last[0] / ms if last and ms and ms == ms else np.nan)
        prevs.append(last[1] if last else "")
        if ms and ms == ms:
            prev[(source, dtype)] = (ms, stage)
    out["gain"] = gains
    out["prev_stage"] = prevs
    if stage_info is not None and not stage_info.empty:
        out = out.drop(columns=["what_changed"], errors="ignore").merge(
            stage_info[["stage", "what_changed"]], on="stage", how="left"
        )
    else:
        out["what_changed"] = ""
    return out[cols].sort_values(["order", "kind", "source"], kind="stable").reset_index(drop=True)


def precision_views(rows: pd.DataFrame) -> dict[str, tuple[str, list[str]]]:
    """'every tf32 family' -> (tf32, the kernel families with tf32 stages in `rows`, in catalog order), for each
    precision that two families or more share: one ladder across walks against that precision's cuBLAS (walk B's
    mma.sync TF32 stages, then the wgmma ones of hopper_tf32)."""
    kernels = rows[rows["family"] != "baseline"] if not rows.empty else rows
    views = {}
    for dtype in frames.options(kernels, "dtype"):
        mine = kernels[kernels["dtype"] == dtype]
        families = sorted(mine["family"].unique(), key=lambda f: mine.loc[mine["family"] == f, "order"].min())
        if len(families) > 1:
            views[f"every {dtype} family ({', '.join(families)})"] = (dtype, families)
    return views


def stage_info() -> pd.DataFrame:
    """What changed at each stage (from the kernel registry)."""
    return pd.DataFrame(
        [{"stage": s.name, "family": s.family, "what_changed": s.what_changed} for s in data.catalog()],
        columns=["stage", "family", "what_changed"],
    )


def short_device(name: str) -> str:
    """'NVIDIA GeForce RTX 3050 Laptop GPU' -> 'RTX 3050 Laptop'."""
    for prefix in ("NVIDIA ", "GeForce "):
        name = name.removeprefix(prefix)
    return name.removesuffix(" GPU").strip()


def published_figures() -> pd.DataFrame:
    """The write-ups' published figures per stage (facts we cite, not our measurements)."""
    recs = []
    for s in data.catalog():
        p = s.published
        if p is None:
            continue
        flops = 2.0 * p.m * p.n * p.k
        recs.append(
            {
                "family": s.family,
                "stage": s.name,
                "position": s.position,
                "dtype": s.dtype,
                "device": p.device,
                "source_label": f"published ({short_device(p.device)})",
                "m": p.m,
                "n": p.n,
                "k": p.k,
                "size_label": data.size_label(p.m, p.n, p.k),
                "median_ms": p.ms,
                "pct_of_baseline": p.pct_of_baseline,
                "tflops": flops / (p.ms * 1e9) if p.ms else None,
                "citation": p.source,
            }
        )
    cols = [
        "family",
        "stage",
        "position",
        "dtype",
        "device",
        "source_label",
        "m",
        "n",
        "k",
        "size_label",
        "median_ms",
        "pct_of_baseline",
        "tflops",
        "citation",
    ]
    return pd.DataFrame(recs, columns=cols)


@st.cache_data(ttl=30, show_spinner=False)
def profile_moves(paths: tuple[str, ...]) -> tuple[pd.DataFrame, list[str]]:
    """Nsight Compute counters that moved per ladder step (farm.analysis.moves), from every dataset
    with a profile table; datasets without one are skipped, unreadable ones named."""
    from farm.analysis.moves import moves_table
    from farm.data.dataset import exists

    tables, problems = [], []
    for path in paths:
        try:
            if exists(path, "profile"):
                tables.append(moves_table(path))
        except Exception as exc:  # noqa: BLE001 - one bad profile table must not take the page down
            problems.append(f"{path}: profile table unreadable ({type(exc).__name__}: {exc})")
    tables = [t for t in tables if not t.empty]
    return (pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()), problems


# ---------------------------------------------------------------- charts

PUBLISHED_COLORS = ["#9e9e9e", "#c7c7c7", "#6f6f6f", "#b0b0b0"]


def source_scale(sources: list[str], kinds: dict[str, str]) -> alt.Scale:
    """Measured sources in colour, published ones in greys."""
    measured = [s for s in sources if kinds.get(s) != "published"]
    published = [s for s in sources if kinds.get(s) == "published"]
    rng = [marks.MEASURED_COLORS[i % len(marks.MEASURED_COLORS)] for i in range(len(measured))]
    rng += [PUBLISHED_COLORS[i % len(PUBLISHED_COLORS)] for i in range(len(published))]
    return alt.Scale(domain=measured + published, range=rng)


def ladder_chart(lad: pd.DataFrame, size_label: str, basis: frames.PctBasis = frames.IN_CELL) -> alt.HConcatChart:
    """Three panels sharing the stage axis (ladder order, top to bottom): % of cuBLAS (in the cell or timed alone, as
    `basis` says; the tooltip has both and the partner shift), TFLOP/s, step gain.

    Bars: median; black whiskers: spread (min-max over repeats/runs, or q1-q3 of one row); a cell without the % is no
    bar. Published figures are grey bars labelled 'published (<device>)'.
    """
    df = clean(lad)
    pct = basis.cell_column
    df["flag"] = df["flag"].fillna("") if "flag" in df else ""  # never_null's '—' would dim unflagged bars
    df["pct_label"] = pct_labels(df, pct)
    stages = stage_order(df, baselines_last=True)
    sources = list(dict.fromkeys(df.sort_values(["kind", "source"])["source"]))
    kinds = dict(zip(df["source"], df["kind"]))
    color = alt.Color(
        "source:N",
        title="measured on / published",
        scale=source_scale(sources, kinds),
        legend=alt.Legend(orient="top", labelLimit=400, columns=4),
    )
    yo = alt.YOffset("source:N", sort=sources)
    common_tips = [
        nominal("source", "source"),
        nominal("stage", "stage"),
        nominal("size_label", "size"),
        *pct_tips(basis),
        tip("tflops", "TFLOP/s (median)", ".2f"),
        tip("median_ms", "median time (ms)", ".4f"),
        tip("gain", "× over previous stage", ".3f"),
        nominal("prev_stage", "previous stage"),
        tip("rows", "rows pooled", "d"),
        nominal("spread", "spread shown"),
        nominal("runs", "run ids"),
        nominal("citation", "published in"),
        nominal("what_changed", "what changed"),
    ]
    common_tips = never_null(df, with_provenance(common_tips))
    height = max(120, 14 * len(stages) * max(1, len(sources)) + 20)

    def panel(
        field: str,
        lo: str | None,
        hi: str | None,
        title: str,
        scale: alt.Scale,
        rule_at: float | None,
        x2_datum: float | None = None,
        labels: bool = False,
        width: int = 230,
        text: str | None = None,
        label: str | None = None,
    ) -> alt.LayerChart:
        y = alt.Y("stage:N", sort=stages, title=None, axis=alt.Axis(labelLimit=260) if labels else None)
        base = drawn(field).encode(y=y, yOffset=yo)
        bar_kw = {"x2": alt.X2(datum=x2_datum)} if x2_datum is not None else {}
        bars = base.mark_bar(height={"band": 0.9}).encode(
            x=alt.X(f"{field}:Q", title=title, scale=scale),
            color=color,
            tooltip=common_tips,
            opacity=alt.condition("datum.flag", alt.value(0.4), alt.value(1.0)),
            **bar_kw,
        )  # ⚑: pools unlike launches
        layers = [bars]
        if lo and hi:
            layers.append(
                base.mark_rule(color="black", strokeWidth=1.2).encode(
                    x=alt.X(f"{lo}:Q", title=title), x2=f"{hi}:Q", tooltip=common_tips
                )
            )
        if text:  # the value, just right of the bar's end (or of the 1x line, for a bar that goes left)
            at = alt.X(f"{hi or field}:Q", title=title) if x2_datum is None else alt.X("_text_x:Q", title=title)
            layer = (
                base.transform_calculate(_text_x=f"max(datum.{field}, {x2_datum})") if x2_datum is not None else base
            )
            value = alt.Text(f"{label}:N") if label else alt.Text(f"{field}:Q", format=text)
            layers.append(
                layer.mark_text(align="left", dx=4, fontSize=10, color="#333").encode(
                    x=at, text=value, tooltip=common_tips
                )
            )
        if rule_at is not None:
            layers.append(rules_at([rule_at]).mark_rule(strokeDash=[4, 3], color="#333").encode(x="v:Q"))
        return alt.layer(*layers).properties(width=width, height=height)

    highest = df[f"{pct}_hi"].max()
    pcts = panel(
        pct,
        f"{pct}_lo",
        f"{pct}_hi",
        f"% of same-precision cuBLAS {basis.short}",
        alt.Scale(domain=[0, max(110.0, float(highest) + 15 if highest == highest else 0.0)]),
        100.0,
        labels=True,
        text=".0f",
        label="pct_label",
    )
    tfl = panel("tflops", "tflops_lo", "tflops_hi", "throughput (TFLOP/s)", alt.Scale(domainMin=0), None)
    gmax = float(df["gain"].max()) if df["gain"].notna().any() else 2.0
    gmin = float(df["gain"].min()) if df["gain"].notna().any() else 1.0
    gain = panel(
        "gain",
        None,
        None,
        "× over previous stage (log)",
        alt.Scale(type="log", domain=[min(0.8, gmin * 0.9), max(1.5, gmax * 1.15)], nice=False),
        1.0,
        x2_datum=1.0,
        width=170,
        text=".2f",
    )
    return (
        alt.hconcat(pcts, tfl, gain, spacing=8, data=df)
        .resolve_scale(y="shared")
        .properties(
            title=alt.TitleParams(
                f"Ladder at {size_label}",
                subtitle=f"bars: median, whiskers: spread; dashed: cuBLAS {basis.short} = 100 % and 1×; "
                "grey bars: published figures, not measured here (as published, either way)",
                anchor="start",
            )
        )
    )


# ---------------------------------------------------------------- the page

CAPTION = (
    "Each family's stages in ladder order: % of the same-precision cuBLAS (timed in alternating batches with the "
    "kernel), throughput, and the speed-up each step brings over the previous stage. Grey bars are the figures "
    "published in the write-ups on their own GPUs, shown for reference: they were not measured here."
)


def body(L, rows, _) -> None:
    published = published_figures()
    timed_rows = frames.timed(rows)
    families = sorted(
        (f for f in frames.options(timed_rows, "family") if f != "baseline"),
        key=lambda f: timed_rows.loc[timed_rows["family"] == f, "order"].min(),
    )  # catalog order
    if not families:
        st.info("No timed kernel rows (only baselines, or nothing verified) under the current filters.")
        return
    views = precision_views(timed_rows)
    c1, c2, c3 = st.columns([2, 2, 3])
    family = c1.selectbox(
        "Family",
        [*families, *views],
        key="ladder_family",
        help="One family, or one precision across every family that has it (each stage against that precision's "
        "cuBLAS, the families in catalog order).",
    )
    chosen_families = [family]
    if family in views:
        dtype, chosen_families = views[family]
        rows = rows[rows["dtype"] == dtype]
        published = published[published["dtype"] == dtype]
    fam_rows = frames.timed(rows[rows["family"].isin(chosen_families)])
    sizes = frames.options(fam_rows, "size_label")
    pub = published[published["family"].isin(chosen_families)]
    pub_sizes = [s for s in pub["size_label"].unique() if s in sizes]
    default = sizes.index(pub_sizes[0]) if pub_sizes else len(sizes) - 1
    size = c2.selectbox(
        "Size",
        sizes,
        index=default,
        key="ladder_size",
        help="Published figures are shown only at the size the write-up measured them at.",
    )
    groups = frames.options(fam_rows, "stage_group")
    chosen = c3.multiselect(
        "Stage groups",
        groups,
        default=[g for g in groups if g not in frames.SWEEP_GROUPS] or groups,
        key="ladder_groups",
        help="ladder: the main steps; traits: further variants; "
        "did_not_pan_out: tried, slower; geometry: block-shape sweep; tuning: every tile configuration "
        "of the tunable kernels (the Tuning page ranks them)",
    )
    keep = rows[~rows["family"].isin(chosen_families) | rows["stage_group"].isin(chosen)]
    show_pub = st.toggle("Show published figures", value=True, key="ladder_pub")
    pub_stages = pub[pub["stage"].isin(set(keep.loc[keep["family"].isin(chosen_families), "stage"]))]
    pub_in = pub_stages[pub_stages["size_label"] == size] if show_pub else pub.iloc[0:0]
    if show_pub and pub_in.empty and not pub_stages.empty:
        st.caption(
            f"Published figures of {family} are at {', '.join(sorted(set(pub_stages['size_label'])))} only "
            "(a figure is shown only beside measurements of its own size): pick that size to see them."
        )
    lad = ladder(keep, pub_in, chosen_families, size, stage_info())
    if lad.empty:
        st.info(f"No timed rows of {family} at {size}.")
        return
    if show_pub and not pub_in.empty:
        for (label, psize), g in pub_in.groupby(["source_label", "size_label"]):
            st.caption(
                f"**{label}** at {psize}: {'; '.join(sorted(g['citation'].unique()))}. "
                f"Measured here: {', '.join(sorted(set(lad.loc[lad['kind'] == 'measured', 'source'])))} at {size}."
            )
    kernels = lad[(lad["kind"] == "measured") & (lad["family"] != "baseline")]
    basis = ui.pct_basis("ladder_pct_basis", kernels["pct_alone"])
    ui.chart(ladder_chart(lad, size, basis), key="ladder_chart")

    st.subheader("Table")
    measured = lad[lad["kind"] == "measured"]
    table = measured.drop(columns=["order", "kind", "family", "citation", "pct_alone_lo", "pct_alone_hi"]).rename(
        columns={"source": "measured on"}
    )
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "pct": st.column_config.NumberColumn("% of cuBLAS in the cell", format="%.1f"),
            "pct_lo": st.column_config.NumberColumn("% low", format="%.1f"),
            "pct_hi": st.column_config.NumberColumn("% high", format="%.1f"),
            "pct_alone": st.column_config.NumberColumn(
                "% of cuBLAS timed alone", format="%.1f", help="against cuBLAS's own cell of the run (blank: none)"
            ),
            "partner_shift": st.column_config.NumberColumn(
                "partner shift (%)", format="%+.1f", help="how much slower cuBLAS ran beside the kernel than alone"
            ),
            "pct_vendor": st.column_config.NumberColumn(
                "% of vendor best", format="%.1f", help="of the faster of cuBLAS and cuBLASLt of the same precision"
            ),
            "unlike_launches": st.column_config.NumberColumn(
                "⚑ unlike launches", format="%d", help="rows whose baseline was launched differently from the kernel"
            ),
            "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
            "tflops_lo": st.column_config.NumberColumn("TFLOP/s low", format="%.2f"),
            "tflops_hi": st.column_config.NumberColumn("TFLOP/s high", format="%.2f"),
            "median_ms": st.column_config.NumberColumn("median (ms)", format="%.4f"),
            "gain": st.column_config.NumberColumn("× over previous", format="%.2f"),
            "rows": st.column_config.NumberColumn("rows pooled", format="%d"),
        },
    )
    published_rows = lad[lad["kind"] == "published"]
    if not published_rows.empty:  # their own table: none of the measured columns' spread, rows or flags apply
        st.caption("Published figures (not measured here):")
        st.dataframe(
            published_rows[["source", "stage", "size_label", "pct", "tflops", "median_ms", "citation"]],
            hide_index=True,
            column_config={
                "source": "published",
                "size_label": "size",
                "pct": st.column_config.NumberColumn("% of its baseline", format="%.1f"),
                "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
                "median_ms": st.column_config.NumberColumn("time (ms)", format="%.2f"),
                "citation": st.column_config.TextColumn("published in", width="large"),
            },
        )
    counters_that_moved(L, lad, chosen_families, size)


def counters_that_moved(L, lad, families: list[str], size: str) -> None:
    """Per step, the profiler counters that moved most (farm.analysis.moves), beside the measured step gain."""
    st.subheader("Counters that moved")
    moves, problems = profile_moves(tuple(s.path for s in L.sources))
    for p in problems:
        st.warning(p)
    profiled = []  # the sizes this family was profiled at, to point to when the chosen one was not
    if not moves.empty:
        labels = pd.Series(
            [data.size_label(m, n, k) for m, n, k in zip(moves["m"], moves["n"], moves["k"])], index=moves.index
        )
        profiled = sorted(
            set(labels[moves["family"].isin(families)]), key=lambda label: moves.loc[labels == label, "m"].iloc[0]
        )
        moves = moves[moves["family"].isin(families) & (labels == size) & moves["stage"].isin(set(lad["stage"]))]
    if moves.empty:
        elsewhere = f" It was profiled at {', '.join(profiled)}: pick that size above." if profiled else ""
        st.info(
            f"No Nsight Compute profile of {', '.join(families)} at {size}: run `python -m farm profile` "
            f"(or the sweep with --profile) to see which counters each step moved.{elsewhere}"
        )
        return
    gains = lad[lad["kind"] == "measured"].groupby(["source", "stage"])["gain"].median()
    steps = (
        moves.sort_values(["gpu_model", "position", "rank"])
        .groupby(["gpu_model", "previous", "stage", "position"], sort=False)["text"]
        .apply(" · ".join)
        .reset_index()
    )
    steps["step gain (measured)"] = [
        gains.get((model, stage)) for model, stage in zip(steps["gpu_model"], steps["stage"])
    ]
    st.caption(
        "One profiled launch per stage under `ncu` (never timed there); counters ranked by how far they moved: "
        "percentages by percentage points, counts and bytes by log ratio (farm/analysis/moves.py)."
    )
    steps = steps.rename(
        columns={"gpu_model": "GPU model", "previous": "from", "stage": "to", "text": "counters that moved most"}
    )
    st.dataframe(
        steps[["GPU model", "from", "to", "step gain (measured)", "counters that moved most"]],
        hide_index=True,
        column_config={
            "step gain (measured)": st.column_config.NumberColumn(format="%.2f×"),
            "counters that moved most": st.column_config.TextColumn(width="large"),
        },
    )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Ladder", CAPTION, body)
