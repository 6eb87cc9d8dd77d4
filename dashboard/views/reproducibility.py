"""Reproducibility: spread per cell, A/A and GPU-to-GPU comparisons, untrustworthy cells first."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames, ui, verdicts
from dashboard.marks import clean, fields_of, never_null, nominal, rules_at, stage_order, tip
from farm.analysis import compare as fcompare
from farm.analysis.noise import NoiseModel

# ---------------------------------------------------------------- queries

CELL_KEYS = [
    "dataset",
    "run_id",
    "gpu_model",
    "gpu",
    "gpu_uuid",
    "family",
    "stage",
    "order",
    "m",
    "n",
    "k",
    "size_label",
]
SEVERITY = {"unverified": 3, "throttled": 2, "noisy": 1}


def cell_spread(rows: pd.DataFrame, cv_limit: float = 0.02, aa_notes: dict | None = None) -> pd.DataFrame:
    """One line per (dataset, run, GPU, stage, shape): spread of its samples and of its repeats, and why not to trust it.

    noisy: a repeat's CV or IQR/median above `cv_limit`, or the repeats' medians (max-min)/median above it,
    or an A/A comparison of its repeats (`aa_notes`, from aa_disagreements) that is not SAME or UNCLEAR-by-a-hair;
    throttled: a repeat had throttled samples (throttled_fraction > 0); unverified: a repeat's status is not ok.
    Untrustworthy cells come first (unverified, throttled, noisy), then by CV.
    """
    cols = [
        *CELL_KEYS,
        "repeats",
        "statuses",
        "median_ms",
        "cv_max",
        "iqr_rel_max",
        "repeat_spread",
        "throttled_max",
        "aa",
        "issues",
        "severity",
        "status_reason",
    ]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    r = rows.assign(
        _iqr_rel=rows["iqr_ms"] / rows["median_ms"],
        _bad=rows["status"] != "ok",
        _thr=rows["throttled_fraction"].fillna(0.0).astype("float64"),
    )
    g = r.groupby(CELL_KEYS, dropna=False, sort=False)
    out = g.agg(
        repeats=("repeat", "size"),
        median_ms=("median_ms", "median"),
        cv_max=("cv", "max"),
        iqr_rel_max=("_iqr_rel", "max"),
        throttled_max=("_thr", "max"),
        bad=("_bad", "sum"),
        rmin=("median_ms", "min"),
        rmax=("median_ms", "max"),
        timed=("median_ms", "count"),
    ).reset_index()
    out["statuses"] = g["status"].agg(lambda s: ", ".join(f"{k} {v}" for k, v in s.value_counts().items())).values
    out["status_reason"] = (
        g["status_reason"].agg(lambda s: "; ".join(sorted({x for x in s if isinstance(x, str) and x}))[:300]).values
    )
    out["repeat_spread"] = np.where(out["timed"] >= 2, (out["rmax"] - out["rmin"]) / out["median_ms"], np.nan)
    notes = aa_notes or {}
    out["aa"] = [
        notes.get(k, "")
        for k in zip(out["dataset"], out["run_id"], out["gpu_uuid"], out["stage"], out["m"], out["n"], out["k"])
    ]
    issues, sev = [], []
    for bad, thr, cv, iqr, rs, aa_ in zip(
        out["bad"], out["throttled_max"], out["cv_max"], out["iqr_rel_max"], out["repeat_spread"], out["aa"]
    ):
        why = []
        if bad:
            why.append("unverified")
        if thr > 0:
            why.append("throttled")
        if any(v == v and v > cv_limit for v in (cv, iqr, rs)) or aa_:
            why.append("noisy")
        issues.append(", ".join(why) or "ok")
        sev.append(max((SEVERITY[w] for w in why), default=0))
    out["issues"] = issues
    out["severity"] = sev
    out = out.sort_values(["severity", "cv_max"], ascending=[False, False], kind="stable", na_position="last")
    return out[cols].reset_index(drop=True)


def per_row_spread(rows: pd.DataFrame) -> pd.DataFrame:
    """Timed rows with CV and IQR/median in %, for the spread chart."""
    t = frames.timed(rows)
    if t.empty:
        return t.assign(cv_pct=pd.Series(dtype="float64"), iqr_pct=pd.Series(dtype="float64"))
    return t.assign(cv_pct=100 * t["cv"], iqr_pct=100 * t["iqr_ms"] / t["median_ms"])


def aa(rows: pd.DataFrame, run: str, tol: float, model: NoiseModel | None = None) -> pd.DataFrame:
    """A/A: every pair of repeats of each cell of `run` on each GPU, noise learned from `rows` unless given."""
    recs = [r for r in verdicts.compare_records(rows) if r["run_id"] == run]
    comps = fcompare.compare_repeats(recs, run, tol, model or verdicts.noise_model(rows))
    df = verdicts.comparisons_frame(comps, ["gpu_uuid", "stage", "m", "n", "k", "pair"], rows)
    if not df.empty:
        labels = dict(zip(rows["gpu_uuid"], rows["gpu"]))
        df.insert(0, "gpu", df["gpu_uuid"].map(labels))
        if df["gpu_uuid"].nunique() > 1:  # pairs of different GPUs must not share a row of the chart
            df["pair"] = df["gpu"].str.split(" · ").str[-1] + " " + df["pair"]
    return df


def gpu_to_gpu(rows: pd.DataFrame, run: str, tol: float) -> pd.DataFrame:
    recs = [r for r in verdicts.compare_records(rows) if r["run_id"] == run]
    comps = fcompare.compare_gpus(recs, run, tol, verdicts.noise_model(rows))
    return verdicts.comparisons_frame(comps, ["gpu_model", "stage", "m", "n", "k", "pair"], rows)


def run_to_run(rows: pd.DataFrame, a: tuple[str, str], b: tuple[str, str], tol: float) -> pd.DataFrame:
    """Run B against run A ((dataset, run id) each), per GPU model, stage and shape present in both."""

    def mask(pair: tuple[str, str]) -> pd.Series:
        return (rows["dataset"] == pair[0]) & (rows["run_id"] == pair[1])

    df = verdicts.compare_selected(rows, mask(a), mask(b), tol)
    df["pair"] = f"{a[1]}~{b[1]}"
    return df


def runs_with_repeats(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, run) pairs where some cell on some GPU has two timed repeats or more."""
    t = frames.timed(rows)
    if t.empty:
        return []
    c = t.groupby(["dataset", "run_id", "gpu_uuid", "stage", "m", "n", "k"]).size()
    return sorted({(d, r) for (d, r, *_), v in c.items() if v >= 2})


def aa_disagreements(rows: pd.DataFrame, tol: float, band_limit: float) -> dict[tuple, str]:
    """Cells whose repeats disagree: an A/A pair FASTER or SLOWER, or a band wider than ±band_limit from learned noise.

    Keys (dataset, run_id, gpu_uuid, stage, m, n, k); values say which pair and by how much.
    """
    out: dict[tuple, str] = {}
    model = verdicts.noise_model(rows)  # learned once, from every row
    for dset, run in runs_with_repeats(rows):
        df = aa(rows[rows["dataset"] == dset], run, tol, model)
        for r in df.itertuples():
            # a band wide from the prior (nothing learned for the class) says nothing about this cell
            wide = r.band_pct == r.band_pct and r.band_pct > 100 * band_limit and not r.noise.startswith("prior")
            if r.verdict in ("FASTER", "SLOWER") or wide:
                key = (dset, run, r.gpu_uuid, r.stage, r.m, r.n, r.k)
                note = f"A/A {r.pair.split()[-1]}: {r.verdict} {r.diff_pct:+.2f} % ± {r.band_pct:.2f} %"
                out[key] = f"{out[key]}; {note}" if key in out else note
    return out


def runs_with_gpu_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, run) pairs where two GPUs of one model measured the same cell."""
    t = frames.timed(rows)
    if t.empty:
        return []
    c = t.groupby(["dataset", "run_id", "gpu_model", "stage", "m", "n", "k"])["gpu_uuid"].nunique()
    return sorted({(d, r) for (d, r, *_), v in c.items() if v >= 2})


# ---------------------------------------------------------------- charts


def spread_chart(per_row: pd.DataFrame, cv_limit_pct: float) -> alt.HConcatChart:
    """Each timed row's CV and IQR/median (%, log scale) by stage; dashed: the noise threshold."""
    tips = [
        nominal("dataset", "dataset"),
        nominal("run_id", "run id"),
        nominal("gpu", "GPU"),
        nominal("stage", "stage"),
        nominal("size_label", "size"),
        tip("repeat", "repeat", "d"),
        tip("cv_pct", "CV (%)", ".3f"),
        tip("iqr_pct", "IQR / median (%)", ".3f"),
        tip("median_ms", "median time (ms)", ".4f"),
        tip("batches", "samples (batches)", "d"),
    ]
    df = clean(per_row, [*fields_of(tips), "order", "size"])
    tips = never_null(df, tips)
    df["cv_pct"] = df["cv_pct"].clip(lower=1e-3)
    df["iqr_pct"] = df["iqr_pct"].clip(lower=1e-3)
    stages = stage_order(df)
    sizes = list(dict.fromkeys(df.sort_values("size")["size_label"]))
    color = alt.Color(
        "size_label:N", sort=sizes, title="size", scale=alt.Scale(scheme="viridis"), legend=alt.Legend(orient="top")
    )
    rule = rules_at([cv_limit_pct]).mark_rule(strokeDash=[4, 3], color="#e45756").encode(x="v:Q")
    height = max(100, 10 * len(stages) * max(1, len(sizes)) + 10)
    lo = min(float(df[["cv_pct", "iqr_pct"]].min().min()), cv_limit_pct)
    hi = max(float(df[["cv_pct", "iqr_pct"]].max().max()), cv_limit_pct)
    ticks = [v for v in (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100) if lo / 3 <= v <= hi * 3]

    def panel(field: str, title: str, labels: bool) -> alt.LayerChart:
        y = alt.Y("stage:N", sort=stages, title=None, axis=alt.Axis(labelLimit=260, grid=True) if labels else None)
        orient = "top"  # the axis where one starts reading
        pts = (
            alt.Chart()
            .mark_tick(thickness=1.5, size=8, opacity=0.7, orient="vertical")
            .encode(
                x=alt.X(
                    f"{field}:Q",
                    title=title,
                    scale=alt.Scale(type="log"),
                    axis=alt.Axis(values=ticks, format="~g", orient=orient),
                ),
                y=y,
                yOffset=alt.YOffset("size_label:N", sort=sizes),
                color=color,
                tooltip=tips,
            )
        )
        return (pts + rule).properties(width=310, height=height)

    return alt.hconcat(
        panel("cv_pct", "CV of samples (%, log scale)", True),
        panel("iqr_pct", "IQR / median of samples (%, log scale)", False),
        spacing=8,
        data=df,
    ).resolve_scale(y="shared")


# ---------------------------------------------------------------- the page

CAPTION = (
    "Can the numbers be trusted? Cells that cannot (unverified, throttled, noisy) come first; then the spread "
    "of each cell's samples, and noise-aware comparisons (farm.analysis.compare) of repeats, GPUs and runs."
)
MAX_CHART_CELLS = 30  # the page stays about three screens tall: the table below a chart has every comparison
MAX_SPREAD_STAGES = 12


def comparison(df, tol: float, title: str, key: str, empty: str = "Nothing to compare.") -> None:
    if df.empty:
        st.info(empty)
        return
    s = verdicts.comparison_summary(df, tol)
    c = st.columns(6)
    c[0].metric("comparisons", s["comparisons"])
    c[1].metric("SAME", s["SAME"], help=f"the whole ~95 % band within ±{100 * tol:g} %")
    c[2].metric(
        "FASTER / SLOWER", f"{s['FASTER']} / {s['SLOWER']}", help="band excludes 0 and |diff| > half the tolerance"
    )
    c[3].metric("UNCLEAR", s["UNCLEAR"], help="too noisy to say same or different")
    c[4].metric("median |diff|", f"{s['median_abs_diff_pct']:.3f} %")
    c[5].metric("median band", f"±{s['median_band_pct']:.3f} %")
    st.caption(verdicts.design_line(df))
    charts_df = df
    if df["cell"].nunique() > MAX_CHART_CELLS:
        not_same = df[df["verdict"] != "SAME"]
        worst = (
            not_same.assign(_d=not_same["diff_pct"].abs()).sort_values("_d", ascending=False)["cell"].drop_duplicates()
        )
        charts_df = not_same[not_same["cell"].isin(set(worst.head(MAX_CHART_CELLS)))]
        st.caption(
            f"{df['cell'].nunique()} cells: the chart shows the {charts_df['cell'].nunique()} cells, of "
            f"{not_same['cell'].nunique()} not SAME, with the largest differences; the table below has them all."
        )
    if not charts_df.empty:
        ui.chart(verdicts.comparison_chart(charts_df, 100 * tol, title), key=f"{key}_chart")
    with st.expander("Table"):
        st.dataframe(df.drop(columns=["order", "cell"], errors="ignore"), hide_index=True)


def body(L, rows, _) -> None:
    c1, c2 = st.columns(2)
    cv_limit = c1.number_input(
        "Noise threshold (%)",
        min_value=0.05,
        max_value=50.0,
        value=2.0,
        step=0.25,
        key="repro_cv",
        help="a cell is noisy when a repeat's CV or IQR/median, its repeats' (max−min)/median, or an A/A "
        "band exceed this, or when an A/A pair of its repeats is FASTER/SLOWER",
    )
    tol = (
        c2.number_input(
            "Comparison tolerance (%)",
            min_value=0.1,
            max_value=20.0,
            value=100 * fcompare.DEFAULT_TOLERANCE,
            step=0.5,
            key="repro_tol",
            help="farm.analysis.compare: SAME when the whole ~95 % band lies within ±tolerance",
        )
        / 100
    )

    cells = cell_spread(rows, cv_limit / 100, aa_disagreements(rows, tol, cv_limit / 100))
    bad = cells[cells["severity"] > 0]
    st.subheader("Cells that cannot be trusted")
    m = st.columns(4)
    m[0].metric(
        "untrusted cells",
        len(bad),
        help=f"of {len(cells)} cells (dataset, run, GPU, stage, shape) shown: "
        "unverified, throttled or noisy; a cell can be several",
    )
    for i, issue in enumerate(("unverified", "throttled", "noisy")):
        m[i + 1].metric(issue, int(cells["issues"].str.contains(issue).sum()), help=f"of {len(cells)} cells")
    st.caption(f"{len(bad)} of {len(cells)} cells cannot be trusted; they head the table.")
    if bad.empty:
        st.success("Every cell shown is verified, unthrottled and within the noise threshold.")
    shown = [
        "issues",
        "dataset",
        "run_id",
        "gpu",
        "stage",
        "size_label",
        "repeats",
        "statuses",
        "median_ms",
        "cv_max",
        "iqr_rel_max",
        "repeat_spread",
        "aa",
        "throttled_max",
        "status_reason",
    ]
    st.dataframe(
        cells[shown],
        hide_index=True,
        height=320,
        column_config={
            "size_label": "size",
            "run_id": "run",
            "issues": st.column_config.TextColumn(
                "issues", help="unverified, throttled, noisy: untrustworthy cells first"
            ),
            "median_ms": st.column_config.NumberColumn("median (ms)", format="%.4f"),
            "cv_max": st.column_config.NumberColumn("CV max", format="percent"),
            "iqr_rel_max": st.column_config.NumberColumn("IQR/median max", format="percent"),
            "repeat_spread": st.column_config.NumberColumn("repeats (max−min)/median", format="percent"),
            "aa": st.column_config.TextColumn(
                "repeats disagree (A/A)", help="an A/A pair FASTER/SLOWER, or its band wider than the noise threshold"
            ),
            "throttled_max": st.column_config.NumberColumn("throttled fraction max", format="%.3f"),
        },
    )

    spread_tab, aa_tab, g2g_tab, r2r_tab = st.tabs(
        ["Spread of samples", "A/A: repeats of one run", "GPU to GPU: same model, same run", "Run to run"]
    )
    with spread_tab:
        spread_of_samples(rows, cv_limit)
    with aa_tab:
        st.caption(
            "Every pair of repeats of each cell on each GPU, each repeat a side of its own: how far apart two "
            "measurements of the same thing land."
        )
        verdicts.show_calibration(rows, tol, set(rows["gpu_model"]))
        one_run(
            rows,
            tol,
            runs_with_repeats(rows),
            "repro_aa_run",
            aa,
            "A/A: repeats of {run}",
            "aa",
            "No run with two repeats of a cell under the current filters.",
        )
    with g2g_tab:
        one_run(
            rows,
            tol,
            runs_with_gpu_pairs(rows),
            "repro_gpu_run",
            gpu_to_gpu,
            "GPU to GPU in {run}",
            "g2g",
            "No run with two GPUs of one model measuring the same cells under the current filters.",
        )
    with r2r_tab:
        two_runs(rows, tol)


def spread_of_samples(rows, cv_limit: float) -> None:
    per_row = per_row_spread(rows)
    if per_row.empty:
        st.info("No timed rows.")
        return
    noisiest = per_row.groupby("stage")["cv_pct"].max().sort_values(ascending=False).index.tolist()
    chosen = st.multiselect(
        "Stages",
        noisiest,
        default=noisiest[:MAX_SPREAD_STAGES],
        key="repro_spread_stages",
        help=f"by default the {MAX_SPREAD_STAGES} stages whose rows' CV is highest",
    )
    st.caption("Each timed row's CV and IQR / median of its samples; dashed: the noise threshold.")
    if chosen:
        ui.chart(spread_chart(per_row[per_row["stage"].isin(chosen)], cv_limit), key="spread_chart")


def one_run(
    rows, tol: float, runs: list[tuple[str, str]], key: str, compare, title: str, chart: str, none: str
) -> None:
    """A run picked from `runs` (newest first) and its cells compared within it by `compare(rows, run, tol)`."""
    pick = ui.pick_run("Run", runs, key, rows)
    if pick is None:
        st.info(none)
    else:
        run_rows = rows[rows["dataset"] == pick[0]]
        comparison(compare(run_rows, pick[1], tol), tol, title.format(run=pick[1]), chart)


def two_runs(rows, tol: float) -> None:
    st.caption(
        "Run B against run A, per GPU model, stage and shape measured in both (repeats pooled per run; a paired "
        "sweep's two arms judged per pair); by default the newest paired sweep's arms (A arm b, B arm a), else the "
        "two runs that share the most cells."
    )
    runs = sorted(set(zip(rows["dataset"], rows["run_id"])))
    if len(runs) < 2:
        st.info("One run only under the current filters.")
    else:
        c1, c2 = st.columns(2)
        fmt = lambda p: f"{p[1]}  ·  {p[0]}"  # noqa: E731
        best = verdicts.best_run_pair(rows)
        pair = best or (runs[0], runs[1])
        a = c1.selectbox("A", runs, index=runs.index(pair[0]), key="repro_run_a", format_func=fmt)
        b = c2.selectbox("B", runs, index=runs.index(pair[1]), key="repro_run_b", format_func=fmt)
        if a == b:
            st.info("Pick two different runs.")
        else:
            if note := verdicts.sweep_of(rows, a, b):
                st.info(note)
            df = run_to_run(rows, a, b, tol)
            comparison(
                df,
                tol,
                f"{b[1]} vs {a[1]}",
                "r2r",
                empty="These two runs measured no cell in common (same GPU model, stage and shape)."
                + ("" if best else " No two runs do under the current filters."),
            )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("Reproducibility", CAPTION, body)
