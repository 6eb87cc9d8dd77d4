"""Ladder: each family's stages in order, per GPU model, beside the write-ups' published figures."""
import pandas as pd
import streamlit as st

from dashboard import analysis, charts, data, ui

st.title("Ladder")
st.caption("Each family's stages in ladder order: % of the same-precision cuBLAS (timed in alternating batches with the "
           "kernel), throughput, and the speed-up each step brings over the previous stage. Grey bars are the figures "
           "published in the write-ups on their own GPUs, shown for reference: they were not measured here.")


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L)
    if ui.stop_if_empty(L, rows):
        return
    published = data.published_figures()
    timed_rows = analysis.timed(rows)
    families = sorted((f for f in analysis.options(timed_rows, "family") if f != "baseline"),
                      key=lambda f: timed_rows.loc[timed_rows["family"] == f, "order"].min())  # catalog order
    if not families:
        st.info("No timed kernel rows (only baselines, or nothing verified) under the current filters.")
        return
    c1, c2, c3 = st.columns([2, 2, 3])
    family = c1.selectbox("Family", families, key="ladder_family")
    fam_rows = analysis.timed(rows[rows["family"] == family])
    sizes = analysis.options(fam_rows, "size_label")
    pub = published[published["family"] == family]
    pub_sizes = [s for s in pub["size_label"].unique() if s in sizes]
    default = sizes.index(pub_sizes[0]) if pub_sizes else len(sizes) - 1
    size = c2.selectbox("Size", sizes, index=default, key="ladder_size",
                        help="Published figures are shown only at the size the write-up measured them at.")
    groups = analysis.options(fam_rows, "stage_group")
    chosen = c3.multiselect("Stage groups", groups, default=[g for g in groups if g not in analysis.SWEEP_GROUPS] or groups,
                            key="ladder_groups", help="ladder: the main steps; traits: further variants; "
                            "did_not_pan_out: tried, slower; geometry: block-shape sweep; tuning: every tile configuration "
                            "of the tunable kernels (the Tuning page ranks them)")
    keep = rows[(rows["family"] != family) | rows["stage_group"].isin(chosen)]
    show_pub = st.toggle("Show published figures", value=True, key="ladder_pub")
    pub_stages = pub[pub["stage"].isin(set(keep.loc[keep["family"] == family, "stage"]))]
    pub_in = pub_stages[pub_stages["size_label"] == size] if show_pub else pub.iloc[0:0]
    if show_pub and pub_in.empty and not pub_stages.empty:
        st.caption(f"Published figures of {family} are at {', '.join(sorted(set(pub_stages['size_label'])))} only "
                   "(a figure is shown only beside measurements of its own size): pick that size to see them.")
    lad = analysis.ladder(keep, pub_in, family, size, data.stage_info())
    if lad.empty:
        st.info(f"No timed rows of {family} at {size}.")
        return
    if show_pub and not pub_in.empty:
        for (label, psize), g in pub_in.groupby(["source_label", "size_label"]):
            st.caption(f"**{label}** at {psize}: {'; '.join(sorted(g['citation'].unique()))}. "
                       f"Measured here: {', '.join(sorted(set(lad.loc[lad['kind'] == 'measured', 'source'])))} at {size}.")
    ui.chart(charts.ladder_chart(lad, size), key="ladder_chart")

    st.subheader("Table")
    measured = lad[lad["kind"] == "measured"]
    table = measured.drop(columns=["order", "kind", "family", "citation"]).rename(columns={"source": "measured on"})
    st.dataframe(table, hide_index=True, column_config={
        "pct": st.column_config.NumberColumn("% of cuBLAS", format="%.1f"),
        "pct_lo": st.column_config.NumberColumn("% low", format="%.1f"),
        "pct_hi": st.column_config.NumberColumn("% high", format="%.1f"),
        "pct_vendor": st.column_config.NumberColumn("% of vendor best", format="%.1f",
                                                    help="of the faster of cuBLAS and cuBLASLt of the same precision"),
        "unlike_launches": st.column_config.NumberColumn("⚑ unlike launches", format="%d",
                                                         help="rows whose baseline was launched differently from the kernel"),
        "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
        "tflops_lo": st.column_config.NumberColumn("TFLOP/s low", format="%.2f"),
        "tflops_hi": st.column_config.NumberColumn("TFLOP/s high", format="%.2f"),
        "median_ms": st.column_config.NumberColumn("median (ms)", format="%.4f"),
        "gain": st.column_config.NumberColumn("× over previous", format="%.2f"),
        "rows": st.column_config.NumberColumn("rows pooled", format="%d"),
    })
    published_rows = lad[lad["kind"] == "published"]
    if not published_rows.empty:  # their own table: none of the measured columns' spread, rows or flags apply
        st.caption("Published figures (not measured here):")
        st.dataframe(published_rows[["source", "stage", "size_label", "pct", "tflops", "median_ms", "citation"]], hide_index=True,
                     column_config={"source": "published", "size_label": "size",
                                    "pct": st.column_config.NumberColumn("% of its baseline", format="%.1f"),
                                    "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.2f"),
                                    "median_ms": st.column_config.NumberColumn("time (ms)", format="%.2f"),
                                    "citation": st.column_config.TextColumn("published in", width="large")})
    counters_that_moved(L, lad, family, size)


def counters_that_moved(L, lad, family: str, size: str) -> None:
    """Per step, the profiler counters that moved most (farm.analysis.moves), beside the measured step gain."""
    st.subheader("Counters that moved")
    moves, problems = data.profile_moves(tuple(s.path for s in L.sources))
    for p in problems:
        st.warning(p)
    profiled = []  # the sizes this family was profiled at, to point to when the chosen one was not
    if not moves.empty:
        labels = pd.Series([data.size_label(m, n, k) for m, n, k in zip(moves["m"], moves["n"], moves["k"])], index=moves.index)
        profiled = sorted(set(labels[moves["family"] == family]), key=lambda label: moves.loc[labels == label, "m"].iloc[0])
        moves = moves[(moves["family"] == family) & (labels == size)]
    if moves.empty:
        elsewhere = f" It was profiled at {', '.join(profiled)}: pick that size above." if profiled else ""
        st.info(f"No Nsight Compute profile of {family} at {size}: run `python -m farm profile` "
                f"(or the sweep with --profile) to see which counters each step moved.{elsewhere}")
        return
    gains = lad[lad["kind"] == "measured"].groupby(["source", "stage"])["gain"].median()
    steps = (moves.sort_values(["gpu_model", "position", "rank"])
             .groupby(["gpu_model", "previous", "stage", "position"], sort=False)["text"].apply(" · ".join).reset_index())
    steps["step gain (measured)"] = [gains.get((model, stage)) for model, stage in zip(steps["gpu_model"], steps["stage"])]
    st.caption("One profiled launch per stage under `ncu` (never timed there); counters ranked by how far they moved: "
               "percentages by percentage points, counts and bytes by log ratio (farm/analysis/moves.py).")
    steps = steps.rename(columns={"gpu_model": "GPU model", "previous": "from", "stage": "to", "text": "counters that moved most"})
    st.dataframe(steps[["GPU model", "from", "to", "step gain (measured)", "counters that moved most"]], hide_index=True,
                 column_config={"step gain (measured)": st.column_config.NumberColumn(format="%.2f×"),
                                "counters that moved most": st.column_config.TextColumn(width="large")})


ui.live(body)
