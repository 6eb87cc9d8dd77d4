"""Noise-aware verdicts (farm.analysis.compare) as the Compare, History and Reproducibility pages show them: rows as the
records the verdicts take, comparisons as a table and a chart, and the A/A calibration that says how far to trust them."""

from __future__ import annotations

import hashlib
import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dashboard import frames
from dashboard.data import size_label
from dashboard.marks import clean, never_null, nominal, rules_at, tip
from farm.analysis import compare as fcompare, plant
from farm.analysis.noise import NoiseModel, identical_arms, identical_code

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
# What the noise model classes cells by (and the batch count its standard error divides by) and what attribution
# names, where the rows have them.
VERDICT_COLUMNS = [
    "batches",  # how many samples a row's median was taken over: a shipped dataset keeps a subset (farm compact)
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
    "pair",  # a paired sweep's rows: judged per pair (farm.analysis.compare), and what code each arm ran
    "arm",
    "code_sha256",
]
PAIRED_COLUMNS = ("pair", "arm", "code_sha256")


def compare_records(rows: pd.DataFrame, extra: list[str] | tuple = ()) -> list[dict]:
    """Rows as the plain dicts farm.analysis.compare takes (samples as lists), with the noise model's and
    attribution's columns (those present) and the `extra` columns too."""
    t = frames.timed(rows)
    cols = list(dict.fromkeys([*COMPARE_COLUMNS, *(c for c in VERDICT_COLUMNS if c in t), *extra]))
    recs = t[cols].to_dict("records")
    for r in recs:
        s = r["samples_ms"]
        r["samples_ms"] = [] if s is None or (isinstance(s, float)) else [float(x) for x in s]
        for c in PAIRED_COLUMNS:  # a null read as NaN would be a pair id
            if c in r and not isinstance(r[c], str):
                r[c] = None
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
        "design",
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
            design=c.design,
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
    rows: pd.DataFrame,
    a: pd.Series,
    b: pd.Series,
    tol: float,
    model_label: str | None = None,
    cross_fit: bool = False,
) -> pd.DataFrame:
    """The rows under mask `b` against those under mask `a`, per GPU model, stage and shape present in both
    (farm.analysis.compare.compare_runs: rows of a side pooled; a paired sweep's two arms judged per pair). With
    `model_label` the sides are different GPU models: cells are matched on stage and shape alone, and the label stands
    in the gpu_model column. `cross_fit`: as `farm compare --cross-fit`, each half of the stages judged with the noise
    of the other half and of every other row (a first paired A/A, whose noise is measured nowhere else)."""
    both = pd.concat([rows[a].assign(run_id="A"), rows[b].assign(run_id="B")])
    if model_label is not None:
        both = both.assign(gpu_model=model_label)
    if cross_fit:
        recs = compare_records(both)
        sides = ([r for r in recs if r["run_id"] == side] for side in "AB")
        comps = plant.cross_fitted(*sides, tol, history=compare_records(rows[~(a | b)]))
    else:
        comps = fcompare.compare_runs(compare_records(both), "A", "B", tol, noise_model(rows, apart=(a, b)))
    return comparisons_frame(comps, ["gpu_model", "stage", "m", "n", "k"], rows)


def design_line(df: pd.DataFrame) -> str:
    """Which noise model judged a comparisons_frame's cells (farm compare's "Noise model: ..." line)."""
    designs = list(df["design"]) if "design" in df else []
    return fcompare.format_designs(designs) if any(d in fcompare.DESIGNS for d in designs) else ""


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


def paired_sweeps(rows: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The paired sweeps of `rows` (farm/sweep.py --paired or --base-kernels), newest first: (dataset, arm a's run,
    arm b's run), two runs whose timed rows share pair ids."""
    t = frames.timed(rows)
    if t.empty or "pair" not in t:
        return []
    p = t[t["pair"].notna() & t["arm"].isin(["a", "b"])]
    arms = p.pivot_table(index=["dataset", "pair"], columns="arm", values="run_id", aggfunc="first")
    if not {"a", "b"} <= set(arms.columns):
        return []
    arms = arms.dropna(subset=["a", "b"])
    start = t.groupby(["dataset", "run_id"])["timestamp"].min()
    sweeps = set(zip(arms.index.get_level_values("dataset"), arms["a"], arms["b"]))
    return sorted(sweeps, key=lambda s: (start[(s[0], s[1])], s), reverse=True)


def run_cells(t: pd.DataFrame) -> pd.Series:
    """Per (dataset, run) of timed rows `t`: the set of cells it measured (GPU model, stage, shape)."""
    return t.groupby(["dataset", "run_id"]).apply(
        lambda g: set(zip(g["gpu_model"], g["stage"], g["m"], g["n"], g["k"])), include_groups=False
    )


def best_run_pair(rows: pd.DataFrame) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The comparison to offer first, as two (dataset, run) pairs: the newest paired sweep's arms where there is one
    (A arm b: the base tree, or the same code again; B arm a: this tree), else the two runs sharing the most timed
    cells (GPU model, stage, shape), older one first."""
    sweeps = paired_sweeps(rows)
    if sweeps:
        dataset, run_a, run_b = sweeps[0]
        return (dataset, run_b), (dataset, run_a)
    t = frames.timed(rows)
    if t.empty:
        return None
    cells = run_cells(t)
    start = t.groupby(["dataset", "run_id"])["timestamp"].min()
    best, best_n = None, 0
    keys = sorted(cells.index, key=lambda k: start[k])
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            n = len(cells[a] & cells[b])
            if n > best_n:
                best, best_n = (a, b), n
    return best


def sweep_of(rows: pd.DataFrame, a: tuple[str, str], b: tuple[str, str]) -> str:
    """What the two (dataset, run) sides are to each other: the arms of one paired sweep (judged per pair), one of
    them an arm judged against another run (sequentially), or "" for two sequential runs."""
    for dataset, run_a, run_b in paired_sweeps(rows):
        arms = {(dataset, run_a): "a", (dataset, run_b): "b"}
        if {a, b} == set(arms):
            return (
                f"{a[1]} and {b[1]} are the two arms of one paired sweep (each cell measured for both in one worker "
                "process, one after the other): each cell is judged by its pairs, with the paired design's noise."
            )
        if a in arms or b in arms:
            side, (_, run) = ("A", a) if a in arms else ("B", b)
            other = run_b if arms.get((dataset, run)) == "a" else run_a
            return (
                f"{side} ({run}) is arm {arms[(dataset, run)]} of a paired sweep whose other arm is {other}: against "
                "another run it is judged as a sequential run (run-to-run noise); compare it with its other arm for "
                "the paired design."
            )
    return ""


CALIBRATION_COLUMNS = [
    "gpu_model",
    "family",
    "design",
    "comparisons",
    "SAME",
    "FASTER",
    "SLOWER",
    "UNCLEAR",
    "difference_rate",
    "unclear_rate",
]
CALIBRATIONS = {  # design -> what its A/A compares
    "repeats": "repeats of one run",
    "runs": "sequential A/A: two runs of one commit",
    "paired": "paired A/A: arm b against arm a",
}


def calibration(rows: pd.DataFrame, tol: float) -> pd.DataFrame:
    """How far verdicts can be trusted, per GPU model and family, for each design that has A/A data (identical code, so
    every FASTER/SLOWER is false): every run's repeats of each cell, every two runs of one commit (sequential_calibration)
    and every paired sweep's pairs of identical code (paired_calibration); counted, with the false-difference and
    UNCLEAR rates, the designs of a family side by side."""
    recs = compare_records(rows)
    model = NoiseModel.learn(recs)
    by_run: dict[tuple, list[dict]] = {}
    for r in recs:
        by_run.setdefault((r["dataset"], r["run_id"]), []).append(r)
    comps = [c for (_, run), rs in by_run.items() for c in fcompare.compare_repeats(rs, run, tol, model)]
    tables = [
        pd.DataFrame(fcompare.rates(cs), columns=CALIBRATION_COLUMNS).assign(design=CALIBRATIONS[design])
        for design, cs in (
            ("repeats", comps),
            ("runs", sequential_calibration(rows, tol, recs)),
            ("paired", paired_calibration(rows, tol, recs)),
        )
        if cs
    ]
    if not tables:
        return pd.DataFrame(columns=CALIBRATION_COLUMNS)
    return pd.concat(tables).sort_values(["gpu_model", "family"], kind="stable").reset_index(drop=True)


# What identifies the rows a calibration is computed from (those present): which cells and runs, and what they measured.
ROWS_KEY_COLUMNS = [
    "dataset",
    "run_id",
    "gpu_uuid",
    "stage",
    "m",
    "n",
    "k",
    "repeat",
    "timestamp",
    "status",
    "median_ms",
]


def rows_digest(rows: pd.DataFrame) -> str:
    """A digest of `rows` (ROWS_KEY_COLUMNS, in order): equal for the same rows of the same files, different where a
    file was added or rewritten with other numbers, or the filters keep other rows."""
    cols = [c for c in ROWS_KEY_COLUMNS if c in rows]
    hashed = pd.util.hash_pandas_object(rows[cols], index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()


@st.cache_data(max_entries=8, show_spinner="Calibrating the verdicts on the A/A data…")
def _calibration(digest: str, tol: float, _rows: pd.DataFrame) -> pd.DataFrame:
    return calibration(_rows, tol)


def cached_calibration(rows: pd.DataFrame, tol: float) -> pd.DataFrame:
    """calibration(rows, tol), cached on the rows' digest (rows_digest) and the tolerance: a page render reuses it (the
    cross-fitted A/A comparisons take seconds) until the loaded files or the filters change."""
    return _calibration(rows_digest(rows), tol, rows)


def one_commit_run_pairs(rows: pd.DataFrame) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Every two sequential runs (no paired sweep's arms) of one commit, unmodified, that measured a cell in common on
    one GPU model: (dataset, run) each, older first."""
    t = frames.timed(rows)
    if "pair" in t:
        t = t[t["pair"].isna()]
    t = t[t["git_commit"].map(identical_code).astype(bool)]
    if t.empty:
        return []
    runs = t.groupby(["dataset", "run_id"]).agg(
        commit=("git_commit", "first"), commits=("git_commit", "nunique"), start=("timestamp", "min")
    )
    cells = run_cells(t)
    keys = sorted((k for k in runs.index if runs.loc[k, "commits"] == 1), key=lambda k: runs.loc[k, "start"])
    return [
        (a, b)
        for i, a in enumerate(keys)
        for b in keys[i + 1 :]
        if runs.loc[a, "commit"] == runs.loc[b, "commit"] and cells[a] & cells[b]
    ]


def sequential_calibration(rows: pd.DataFrame, tol: float, recs: list[dict]) -> list[fcompare.Comparison]:
    """The sequential A/A comparisons of `rows`: every two runs of one commit (one_commit_run_pairs), the newer against
    the older, cross-fitted as `farm compare RUN_A RUN_B --cross-fit` does, so that no run pair judges itself.
    `recs`: compare_records(rows)."""
    comps: list[fcompare.Comparison] = []
    for a, b in one_commit_run_pairs(rows):
        mine = {a: [], b: []}
        history = []
        for r in recs:
            mine.get((r["dataset"], r["run_id"]), history).append(r)
        comps += plant.cross_fitted(mine[a], mine[b], tol, history)
    return comps


def paired_calibration(rows: pd.DataFrame, tol: float, recs: list[dict]) -> list[fcompare.Comparison]:
    """The paired A/A comparisons of `rows`: per paired sweep, arm b against arm a over its pairs of identical code
    (one commit, the same machine code: a --paired sweep, or a --base-kernels sweep's unchanged stages), cross-fitted
    as `farm compare RUN_ID-a RUN_ID-b --cross-fit` does (each half of the stages judged by the noise of the other half
    and of every other run), so that no pair judges itself. `recs`: compare_records(rows)."""
    comps: list[fcompare.Comparison] = []
    for dataset, run_a, run_b in paired_sweeps(rows):
        arms = {(dataset, run_a), (dataset, run_b)}
        a = {r["pair"]: r for r in recs if (r["dataset"], r["run_id"]) == (dataset, run_a) and r.get("pair")}
        b = {r["pair"]: r for r in recs if (r["dataset"], r["run_id"]) == (dataset, run_b) and r.get("pair")}
        same = [p for p in a if p in b and identical_arms(a[p], b[p])]
        history = [r for r in recs if (r["dataset"], r["run_id"]) not in arms]
        comps += plant.cross_fitted([a[p] for p in same], [b[p] for p in same], tol, history)
    return comps


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
        *([nominal("design", "noise model")] if "design" in df.columns else []),
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
    """The farm's own calibration: how often identical code is called different, per family, GPU model and design
    (repeats of one run; two runs of one commit; a paired sweep's two arms)."""
    st.subheader("How far these verdicts can be trusted")
    cal = cached_calibration(rows, tol)
    cal = cal[cal["gpu_model"].isin(models)]
    if cal.empty:
        st.info(
            "No run with two repeats of a cell, no two runs of one commit and no paired A/A sweep under the current "
            "filters: no A/A calibration to show (plans/aa.toml; farm/sweep.py --paired with plans/aa-paired.toml)."
        )
        return
    st.caption(
        "A/A: identical code judged by the same rule, so every FASTER or SLOWER is a false difference; per family "
        "and GPU model, for each design with A/A data side by side: pairs of repeats of one run's cells; two "
        "sequential runs of one commit; a paired sweep's pairs of identical code (arm b against arm a). Run and "
        "pair comparisons are cross-fitted, as `farm compare A B --cross-fit`: each half of the stages judged by "
        "the noise of the other half and of every other run. A comparison of two runs is as trustworthy as the "
        "sequential row of its family and GPU model, one of a paired sweep's arms as the paired row. The target is "
        "at most 1 % false differences and 15 % UNCLEAR."
    )
    if not (cal["design"] == CALIBRATIONS["paired"]).any():
        st.caption(
            "No paired A/A under the current filters: a paired sweep of identical code (farm/sweep.py --paired, "
            "plans/aa-paired.toml) measures the paired design's own rate."
        )
    st.dataframe(
        cal,
        hide_index=True,
        column_config={
            "gpu_model": "GPU model",
            "design": st.column_config.TextColumn("A/A of", help="which design's identical-code pairs"),
            "comparisons": "A/A pairs",
            "difference_rate": st.column_config.NumberColumn("false-difference rate", format="percent"),
            "unclear_rate": st.column_config.NumberColumn("UNCLEAR rate", format="percent"),
        },
    )
