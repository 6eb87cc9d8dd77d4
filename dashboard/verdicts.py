"""Noise-aware verdicts (farm.analysis.compare) as the Compare, History and Reproducibility pages show them: rows as the
records the verdicts take, comparisons as a table and a chart, and the A/A calibration that says how far to trust them."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames
from dashboard.data import size_label
from dashboard.marks import clean, never_null, nominal, rules_at, tip
from farm.analysis import compare as fcompare
from farm.analysis.noise import NoiseModel

COMPARE_COLUMNS = [
    "dataset",
    "run_id",
    "gpu_model",
    "gpu_uuid",
    "stage",
    "m",
    "n",
    "k",
    "repeat",
    "status",
    "median_ms",
    "samples_ms",
]
# What the noise model classes cells by and what attribution names, where the rows have them.
VERDICT_COLUMNS = [
    "family",
    "timing_mode",
    "git_commit",
    "host",
    "driver_version",
    "cuda_runtime_version",
    "nvrtc_version",
    "cupy_version",
    "library_algorithm",
    "launch_method",
    "compile_options",
    "sm_clock_median_mhz",
    "mem_clock_median_mhz",
    "throttle_power",
    "throttle_thermal",
    "throttle_hw_slowdown",
]


def compare_records(rows: pd.DataFrame, extra: list[str] | tuple = ()) -> list[dict]:
    """Rows as the plain dicts farm.analysis.compare takes (samples as lists), with the noise model's and
    attribution's columns (those present) and the `extra` columns too."""
    t = frames.timed(rows)
    cols = list(dict.fromkeys([*COMPARE_COLUMNS, *(c for c in VERDICT_COLUMNS if c in t), *extra]))
    recs = t[cols].to_dict("records")
    for r in recs:
        s = r["samples_ms"]
        r["samples_ms"] = [] if s is None or (isinstance(s, float)) else [float(x) for x in s]
    return recs


def comparisons_frame(comps: list[fcompare.Comparison], key_names: list[str], rows: pd.DataFrame) -> pd.DataFrame:
    """farm.analysis.compare results as a table: key columns, A/B medians, diff and band in %, verdict."""
    cols = [
        *key_names,
        "a_ms",
        "b_ms",
        "a_rows",
        "b_rows",
        "diff_pct",
        "band_pct",
        "lo_pct",
        "hi_pct",
        "verdict",
        "differed",
        "confounded",
        "why",
        "noise",
    ]
    recs = []
    for c in comps:
        rec = dict(zip(key_names, c.key))
        rec.update(
            a_ms=c.a.median_ms,
            b_ms=c.b.median_ms,
            a_rows=c.a.rows,
            b_rows=c.b.rows,
            diff_pct=100 * c.diff,
            band_pct=100 * c.band if math.isfinite(c.band) else np.nan,
            verdict=c.verdict,
            differed="; ".join(c.context),
            confounded=c.confounded,
            why=c.reason,
            noise=c.noise,
        )
        recs.append(rec)
    df = pd.DataFrame(recs, columns=[c for c in cols if c not in ("lo_pct", "hi_pct")])
    df["lo_pct"] = df["diff_pct"] - df["band_pct"]
    df["hi_pct"] = df["diff_pct"] + df["band_pct"]
    if not df.empty and {"stage", "m", "n", "k"} <= set(df.columns):
        df["size_label"] = [size_label(m, n, k) for m, n, k in zip(df["m"], df["n"], df["k"])]
        order = dict(zip(rows["stage"], rows["order"])) if not rows.empty else {}
        df["order"] = df["stage"].map(order).fillna(1e9)
        df["cell"] = df["stage"] + " · " + df["size_label"]
        df = df.sort_values(["order", "m", "n", "k"], kind="stable").reset_index(drop=True)
    return df


def noise_model(rows: pd.DataFrame, apart: tuple[pd.Series, pd.Series] | None = None) -> NoiseModel:
    """The noise model learned from every loaded row (the A/A history); `apart`: the masks of two sides about to be
    compared, whose runs never pair up as A/A history."""
    recs = compare_records(rows)
    sides = None
    if apart is not None:
        sides = tuple(compare_records(rows[mask]) for mask in apart)
    return NoiseModel.learn(recs, apart=sides)


def compare_selected(
    rows: pd.DataFrame, a: pd.Series, b: pd.Series, tol: float, model_label: str | None = None
) -> pd.DataFrame:
    """The rows under mask `b` against those under mask `a`, per GPU model, stage and shape present in both
    (farm.analysis.compare.compare_runs: rows of a side pooled). With `model_label` the sides are different GPU models:
    cells are matched on stage and shape alone, and the label stands in the gpu_model column."""
    both = pd.concat([rows[a].assign(run_id="A"), rows[b].assign(run_id="B")])
    if model_label is not None:
        both = both.assign(gpu_model=model_label)
    comps = fcompare.compare_runs(compare_records(both), "A", "B", tol, noise_model(rows, apart=(a, b)))
    return comparisons_frame(comps, ["gpu_model", "stage", "m", "n", "k"], rows)


def comparison_summary(df: pd.DataFrame, tol: float) -> dict:
    n = len(df)
    counts = {v: int((df["verdict"] == v).sum()) if n else 0 for v in ("SAME", "FASTER", "SLOWER", "UNCLEAR")}
    return {
        "comparisons": n,
        **counts,
        "difference_rate": (counts["FASTER"] + counts["SLOWER"]) / n if n else None,
        "median_abs_diff_pct": float(df["diff_pct"].abs().median()) if n else None,
        "median_band_pct": float(df["band_pct"].median()) if n else None,
    }


def best_run_pair(rows: pd.DataFrame) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The two (dataset, run) pairs sharing the most timed cells (GPU model, stage, shape), older one first."""
    t = frames.timed(rows)
    if t.empty:
        return None
    cells = t.groupby(["dataset", "run_id"]).apply(
        lambda g: set(zip(g["gpu_model"], g["stage"], g["m"], g["n"], g["k"])), include_groups=False
    )
    start = t.groupby(["dataset", "run_id"])["timestamp"].min()
    best, best_n = None, 0
    keys = sorted(cells.index, key=lambda k: start[k])
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            n = len(cells[a] & cells[b])
            if n > best_n:
                best, best_n = (a, b), n
    return best


def calibration(rows: pd.DataFrame, tol: float) -> pd.DataFrame:
    """How far verdicts can be trusted, per GPU model and family: the A/A comparisons of every run's repeats of each
    cell (identical code, so every FASTER/SLOWER is false), counted, with the false-difference and UNCLEAR rates."""
    cols = [
        "gpu_model",
        "family",
        "comparisons",
        "SAME",
        "FASTER",
        "SLOWER",
        "UNCLEAR",
        "difference_rate",
        "unclear_rate",
    ]
    recs = compare_records(rows)
    model = NoiseModel.learn(recs)
    by_run: dict[tuple, list[dict]] = {}
    for r in recs:
        by_run.setdefault((r["dataset"], r["run_id"]), []).append(r)
    comps = [c for (_, run), rs in by_run.items() for c in fcompare.compare_repeats(rs, run, tol, model)]
    return pd.DataFrame(fcompare.rates(comps), columns=cols)


VERDICT_COLORS = {"SAME": "#54a24b", "FASTER": "#4c78a8", "SLOWER": "#e45756", "UNCLEAR": "#9e9e9e"}


def comparison_chart(cmp: pd.DataFrame, tol_pct: float, title: str) -> alt.LayerChart:
    """Relative difference B vs A per cell (%), whiskers: the ~95 % band; dashed: ±tolerance; colour: verdict."""
    df = clean(cmp)
    cells = list(dict.fromkeys(df["cell"]))
    pairs = list(dict.fromkeys(df["pair"]))
    tips = [nominal(c, c.replace("_", " ")) for c in ("gpu_model", "gpu_uuid") if c in df.columns]
    tips += [
        nominal("stage", "stage"),
        nominal("size_label", "size"),
        nominal("pair", "A~B"),
        tip("a_ms", "A median (ms)", ".5f"),
        tip("b_ms", "B median (ms)", ".5f"),
        tip("diff_pct", "B vs A (%)", "+.3f"),
        tip("band_pct", "± band (%)", ".3f"),
        nominal("verdict", "verdict"),
        tip("a_rows", "rows A", "d"),
        tip("b_rows", "rows B", "d"),
    ]
    tips = never_null(df, tips)
    y = alt.Y("cell:N", sort=cells, title=None, axis=alt.Axis(labelLimit=300))
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("pair:N", sort=pairs))
    color = alt.Color(
        "verdict:N",
        title="verdict",
        scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
        legend=alt.Legend(orient="top"),
    )
    x_title = "time of B relative to A (%; + is slower); whiskers: ~95 % band"
    rules = base.mark_rule(strokeWidth=1.5).encode(
        x=alt.X("lo_pct:Q", title=x_title), x2="hi_pct:Q", color=color, tooltip=tips
    )
    pts = base.mark_point(filled=True, size=30).encode(x=alt.X("diff_pct:Q", title=x_title), color=color, tooltip=tips)
    tol = rules_at([-tol_pct, tol_pct]).mark_rule(strokeDash=[4, 3], color="#333").encode(x="v:Q")
    zero = rules_at([0.0]).mark_rule(color="#999").encode(x="v:Q")
    height = max(100, len(cells) * max(20, 7 * len(pairs)))
    return alt.layer(zero, tol, rules, pts, data=df).properties(
        width=620, height=height, title=alt.TitleParams(title, anchor="start")
    )


def show_calibration(rows: pd.DataFrame, tol: float, models: set[str]) -> None:
    """The farm's own calibration: how often identical code (repeats of one run) is called different, per family."""
    st.subheader("How far these verdicts can be trusted")
    cal = calibration(rows, tol)
    cal = cal[cal["gpu_model"].isin(models)]
    if cal.empty:
        st.info("No run with two repeats of a cell under the current filters: no A/A calibration to show.")
        return
    st.caption(
        "A/A: every pair of repeats of one run's cells, identical code, judged by the same rule; every FASTER or "
        "SLOWER there is a false difference. The target is at most 1 % false differences and 15 % UNCLEAR."
    )
    st.dataframe(
        cal,
        hide_index=True,
        column_config={
            "gpu_model": "GPU model",
            "comparisons": "A/A pairs",
            "difference_rate": st.column_config.NumberColumn("false-difference rate", format="percent"),
            "unclear_rate": st.column_config.NumberColumn("UNCLEAR rate", format="percent"),
        },
    )
