"""What the pages show, as pure functions of the loaded rows and telemetry (pandas in, pandas out).

No Streamlit here: everything is testable on plain DataFrames.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from farm.analysis import compare as fcompare
from farm.analysis.noise import NoiseModel
from farm.data import throttle
from kernels.tuning import split_name as tune_stage  # rows have no kernel column: a tuning stage's name carries it

# ---------------------------------------------------------------- filters

FILTERS = ("dataset", "gpu_model", "family", "dtype", "size_label", "run_id")
JOIN_KEYS = ["dataset", "gpu_model", "run_id", "gpu_uuid", "stage", "m", "n", "k", "repeat"]


@dataclass(frozen=True)
class Selection:
    """Sidebar filters: an empty tuple means everything."""

    dataset: tuple[str, ...] = ()
    gpu_model: tuple[str, ...] = ()
    family: tuple[str, ...] = ()
    dtype: tuple[str, ...] = ()
    size_label: tuple[str, ...] = ()
    run_id: tuple[str, ...] = ()
    timing_mode: str | None = None

# Stage groups that sweep one kernel over many configurations: off by default where stages are
# drawn one line each (dozens of near-identical lines would bury the ladder).
SWEEP_GROUPS = ("geometry", "tuning")


def apply_filters(rows: pd.DataFrame, sel: Selection) -> pd.DataFrame:
    """Rows matching the selection. A family filter keeps the cuBLAS baselines: they are every family's reference."""
    if rows.empty:
        return rows
    keep = pd.Series(True, index=rows.index)
    for col in ("dataset", "gpu_model", "dtype", "size_label", "run_id"):
        values = getattr(sel, col)
        if values:
            keep &= rows[col].isin(values)
    if sel.family:
        keep &= rows["family"].isin(sel.family) | (rows["family"] == "baseline")
    if sel.timing_mode:
        keep &= rows["timing_mode"].isna() | (rows["timing_mode"] == sel.timing_mode)
    return rows[keep]


def filter_telemetry(tele: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Telemetry samples of the cells in `rows` (a semi-join on the join keys)."""
    if tele.empty or rows.empty:
        return tele.iloc[0:0]
    keys = rows[JOIN_KEYS].drop_duplicates()
    return tele.merge(keys, on=JOIN_KEYS, how="inner")


def options(rows: pd.DataFrame, column: str) -> list:
    if rows.empty or column not in rows:
        return []
    if column == "size_label":
        sized = rows[["size", "size_label"]].drop_duplicates().sort_values(["size", "size_label"])
        return list(dict.fromkeys(sized["size_label"]))
    return sorted(rows[column].dropna().unique().tolist())


# ---------------------------------------------------------------- cells

def timed(rows: pd.DataFrame) -> pd.DataFrame:
    """Verified, timed rows."""
    if rows.empty:
        return rows
    return rows[(rows["status"] == "ok") & rows["median_ms"].notna() & (rows["median_ms"] > 0)]


def _join(values) -> str:
    return ", ".join(sorted({str(v) for v in values if v is not None and v == v}))


def cell_stats(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One line per cell (`keys`), pooling repeats, runs and same-model GPUs.

    median_ms is the median of the rows' medians, tflops = flops / median_ms. The spread
    (lo, hi) is the rows' min-max where the cell has two rows or more; for one row, the
    q1-q3 of its own samples.
    """
    t = timed(rows)
    cols = [*keys, "rows", "median_ms", "tflops", "tflops_lo", "tflops_hi", "pct", "pct_lo", "pct_hi", "pct_vendor",
            "unlike_launches", "spread", "cv_max", "runs", "datasets", "gpus", "flops"]
    if t.empty:
        return pd.DataFrame(columns=[*cols, *PROVENANCE])
    t = t.assign(_pct=t["pct_of_baseline"].astype("float64"), _tf=t["flops"] / t["median_ms"] / 1e9,
                 # derived by data.enrich; frames built elsewhere may lack them
                 _vendor=t.get("pct_of_vendor_best", pd.Series(np.nan, index=t.index)).astype("float64"),
                 _unlike=t.get("launch_flag", pd.Series("", index=t.index)).fillna("").ne(""))
    g = t.groupby(keys, dropna=False, sort=False)
    out = g.agg(rows=("median_ms", "size"), median_ms=("median_ms", "median"), flops=("flops", "first"),
                tf_min=("_tf", "min"), tf_max=("_tf", "max"), pct=("_pct", "median"), pct_min=("_pct", "min"),
                pct_max=("_pct", "max"), pct_vendor=("_vendor", "median"), unlike_launches=("_unlike", "sum"),
                q1=("q1_ms", "first"), q3=("q3_ms", "first"), cv_max=("cv", "max"),
                gpus=("gpu_uuid", "nunique")).reset_index()
    out["runs"] = g["run_id"].agg(_join).values
    out["datasets"] = g["dataset"].agg(_join).values
    out["tflops"] = out["flops"] / out["median_ms"] / 1e9
    one = out["rows"] == 1
    q1 = out["q1"].where(out["q1"] > 0)
    q3 = out["q3"].where(out["q3"] > 0)
    out["tflops_lo"] = np.where(one, out["flops"] / q3 / 1e9, out["tf_min"])
    out["tflops_hi"] = np.where(one, out["flops"] / q1 / 1e9, out["tf_max"])
    out["pct_lo"] = np.where(one, out["pct"] * out["median_ms"] / q3, out["pct_min"])
    out["pct_hi"] = np.where(one, out["pct"] * out["median_ms"] / q1, out["pct_max"])
    out["spread"] = np.where(one, "q1–q3 of one row's samples", "min–max over " + out["rows"].astype(str) + " rows (repeats, runs, GPUs)")
    out = out.merge(provenance(t, keys), on=keys, how="left")
    return out[[*cols, *PROVENANCE]]


PROVENANCE = ["pooled", "cards", "driver", "cuda_nvrtc", "commits", "sm_clock", "power_thermal", "flag"]


def _values(series: pd.Series, what: str, short: int | None = None) -> str:
    """One value as itself; several as 'N whats: a, b, c, …'; none as 'not recorded'."""
    vals = sorted({str(v)[:short] + ("-dirty" if short and str(v).endswith("-dirty") else "") if short else str(v)
                   for v in series.dropna() if str(v)})
    if not vals:
        return "not recorded"
    return vals[0] if len(vals) == 1 else f"{len(vals)} {what}: {', '.join(vals[:4])}{', …' if len(vals) > 4 else ''}"


def _col(t: pd.DataFrame, name: str, default=None) -> pd.Series:
    """Column `name`, or `default` in every row where `t` lacks it (frames built by hand, older data)."""
    return t[name] if name in t else pd.Series(default, index=t.index, dtype="object" if default is None else None)


def provenance(t: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of `keys`: where its rows came from, as text (never null): how many rows, runs, commits and cards it
    pools, the cards, driver, CUDA runtime / NVRTC, commits, the median SM clock, the power and thermal state, and
    `flag` (⚑ when a row's % compares unlike launches, '' otherwise)."""
    def flag(name: str) -> pd.Series:
        return _col(t, name, False).fillna(False).astype(bool)

    def number(name: str) -> pd.Series:
        return pd.to_numeric(_col(t, name), errors="coerce")

    def text(name: str) -> pd.Series:
        return _col(t, name).astype("object").where(_col(t, name).notna(), "?").astype(str)

    u = t.assign(_card=_col(t, "gpu").fillna(_col(t, "gpu_uuid")), _run=text("dataset") + "/" + text("run_id"),
                 _cuda=text("cuda_runtime_version") + " / " + text("nvrtc_version"), _commit=_col(t, "git_commit"),
                 _driver=_col(t, "driver_version"), _power=flag("throttle_power"),
                 _thermal=flag("throttle_thermal") | flag("throttle_hw_slowdown"), _clock=number("sm_clock_median_mhz"),
                 _max=number("max_sm_clock_mhz"), _temp=number("temp_max_c"), _flag=_col(t, "launch_flag", "").fillna("").ne(""))
    g = u.groupby(keys, dropna=False, sort=False)
    out = g.agg(_n=("_run", "size"), _runs=("_run", "nunique"), _commits=("_commit", "nunique"), _ncards=("_card", "nunique"),
                _clock=("_clock", "median"), _top=("_max", "max"), _temp=("_temp", "max"), _power=("_power", "sum"),
                _thermal=("_thermal", "sum"), _flagged=("_flag", "sum")).reset_index()
    for col, what, short, name in (("_card", "cards", None, "cards"), ("_driver", "drivers", None, "driver"),
                                   ("_cuda", "versions", None, "cuda_nvrtc"), ("_commit", "commits", 12, "commits")):
        out[name] = g[col].agg(lambda x, w=what, k=short: _values(x, w, k)).values

    def plural(v: int, word: str) -> str:
        return f"{v} {word}{'s' * (v != 1)}"

    out["pooled"] = [f"{n} rows from {plural(r, 'run')}, {plural(c, 'commit')}, {plural(k, 'card')}"
                     for n, r, c, k in zip(out["_n"], out["_runs"], out["_commits"], out["_ncards"])]
    out["sm_clock"] = [(f"{c:.0f} MHz median" + (f" (max {m:.0f})" if m == m else "")) if c == c else "not recorded"
                       for c, m in zip(out["_clock"], out["_top"])]
    out["power_thermal"] = [(f"power-capped in {p} of {n} rows" if p else "no power cap")
                            + (f", thermal or hardware slowdown in {h}" if h else ", no thermal slowdown")
                            + (f"; max {x:.0f} °C" if x == x else "")
                            for p, h, n, x in zip(out["_power"], out["_thermal"], out["_n"], out["_temp"])]
    out["flag"] = [f"⚑ {f} of {n} rows compare unlike launches" if f else "" for f, n in zip(out["_flagged"], out["_n"])]
    return out[[*keys, *PROVENANCE]]


# ---------------------------------------------------------------- ladder

LADDER_KEYS = ["gpu_model", "family", "stage", "stage_group", "position", "dtype", "order", "m", "n", "k", "size_label"]


def ladder(rows: pd.DataFrame, published: pd.DataFrame, family: str, size_label: str,
           stage_info: pd.DataFrame | None = None) -> pd.DataFrame:
    """One family's ladder at one size, per GPU model, with the published figures as further sources.

    Columns: source (the GPU model, or 'published (<device>)'), kind (measured | published), stage,
    order, pct (+ lo/hi), tflops (+ lo/hi), median_ms, gain (speed-up over the previous stage of
    the same source and precision, x: a family with fp16 and bf16 stages is two ladders), and the
    cell's rows, runs.
    """
    fam = rows[(rows["family"] == family) & (rows["size_label"] == size_label)]
    baselines = set(fam["baseline"].dropna())
    base = rows[(rows["stage"].isin(baselines)) & (rows["size_label"] == size_label)]
    cells = cell_stats(pd.concat([fam, base]), LADDER_KEYS)
    cols = ["source", "kind", "family", "stage", "stage_group", "dtype", "order", "position", "size_label", "pct", "pct_lo",
            "pct_hi", "pct_vendor", "unlike_launches", "tflops", "tflops_lo", "tflops_hi", "median_ms", "gain", "prev_stage",
            "rows", "runs", "spread", "citation", "what_changed", *PROVENANCE]
    parts = []
    if not cells.empty:
        cells["order"] = np.where(cells["family"] == "baseline", 1e9, cells["order"])  # cuBLAS closes the ladder
        m = cells.rename(columns={"gpu_model": "source"}).assign(kind="measured", citation="")
        parts.append(m)
    pub = published[published["family"] == family] if not published.empty else published
    if not pub.empty:
        order = dict(zip(rows["stage"], rows["order"])) if not rows.empty else {}
        p = pub.assign(source=pub["source_label"], kind="published", pct=pub["pct_of_baseline"],
                       order=[order.get(s, 1e8 + pos) for s, pos in zip(pub["stage"], pub["position"])],
                       stage_group="", rows=np.nan, runs="", spread="published figure",
                       **{**{c: "" for c in PROVENANCE}, "pooled": "published figure, not measured here",
                          "cards": pub["device"]})
        for c in ("pct_lo", "pct_hi"):
            p[c] = p["pct"]
        for c in ("tflops_lo", "tflops_hi"):
            p[c] = p["tflops"]
        parts.append(p)
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat([x for x in parts], ignore_index=True).sort_values(["kind", "source", "order"], kind="stable")
    gains, prevs = [], []
    prev: dict[tuple, tuple[float, str]] = {}  # (source, dtype) -> the last stage's (ms, name)
    for i, (source, dtype, ms, stage, fam_) in enumerate(zip(out["source"], out["dtype"], out["median_ms"], out["stage"], out["family"])):
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
        out = out.drop(columns=["what_changed"], errors="ignore").merge(stage_info[["stage", "what_changed"]], on="stage", how="left")
    else:
        out["what_changed"] = ""
    return out[cols].sort_values(["order", "kind", "source"], kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- scaling across devices

SCALING_KEYS = ["gpu_model", "family", "stage", "stage_group", "dtype", "order", "m", "n", "k", "size", "size_label"]


def scaling(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GPU model, stage and size: TFLOPS with spread, % of cuBLAS; `reference` marks the cuBLAS lines."""
    out = cell_stats(rows, SCALING_KEYS)
    out["reference"] = np.where(out["family"] == "baseline", "cuBLAS (reference)", "kernel")
    return out


# ---------------------------------------------------------------- reproducibility

CELL_KEYS = ["dataset", "run_id", "gpu_model", "gpu", "gpu_uuid", "family", "stage", "order", "m", "n", "k", "size_label"]
SEVERITY = {"unverified": 3, "throttled": 2, "noisy": 1}


def cell_spread(rows: pd.DataFrame, cv_limit: float = 0.02, aa_notes: dict | None = None) -> pd.DataFrame:
    """One line per (dataset, run, GPU, stage, shape): spread of its samples and of its repeats, and why not to trust it.

    noisy: a repeat's CV or IQR/median above `cv_limit`, or the repeats' medians (max-min)/median above it,
    or an A/A comparison of its repeats (`aa_notes`, from aa_disagreements) that is not SAME or UNCLEAR-by-a-hair;
    throttled: a repeat had throttled samples (throttled_fraction > 0); unverified: a repeat's status is not ok.
    Untrustworthy cells come first (unverified, throttled, noisy), then by CV.
    """
    cols = [*CELL_KEYS, "repeats", "statuses", "median_ms", "cv_max", "iqr_rel_max", "repeat_spread", "throttled_max",
            "aa", "issues", "severity", "status_reason"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    r = rows.assign(_iqr_rel=rows["iqr_ms"] / rows["median_ms"], _bad=rows["status"] != "ok",
                    _thr=rows["throttled_fraction"].fillna(0.0).astype("float64"))
    g = r.groupby(CELL_KEYS, dropna=False, sort=False)
    out = g.agg(repeats=("repeat", "size"), median_ms=("median_ms", "median"), cv_max=("cv", "max"),
                iqr_rel_max=("_iqr_rel", "max"), throttled_max=("_thr", "max"), bad=("_bad", "sum"),
                rmin=("median_ms", "min"), rmax=("median_ms", "max"), timed=("median_ms", "count")).reset_index()
    out["statuses"] = g["status"].agg(lambda s: ", ".join(f"{k} {v}" for k, v in s.value_counts().items())).values
    out["status_reason"] = g["status_reason"].agg(lambda s: "; ".join(sorted({x for x in s if isinstance(x, str) and x}))[:300]).values
    out["repeat_spread"] = np.where(out["timed"] >= 2, (out["rmax"] - out["rmin"]) / out["median_ms"], np.nan)
    notes = aa_notes or {}
    out["aa"] = [notes.get(k, "") for k in zip(out["dataset"], out["run_id"], out["gpu_uuid"], out["stage"], out["m"], out["n"], out["k"])]
    issues, sev = [], []
    for bad, thr, cv, iqr, rs, aa_ in zip(out["bad"], out["throttled_max"], out["cv_max"], out["iqr_rel_max"],
                                          out["repeat_spread"], out["aa"]):
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
    t = timed(rows)
    if t.empty:
        return t.assign(cv_pct=pd.Series(dtype="float64"), iqr_pct=pd.Series(dtype="float64"))
    return t.assign(cv_pct=100 * t["cv"], iqr_pct=100 * t["iqr_ms"] / t["median_ms"])


COMPARE_COLUMNS = ["dataset", "run_id", "gpu_model", "gpu_uuid", "stage", "m", "n", "k", "repeat", "status", "median_ms",
                   "samples_ms"]
# What the noise model classes cells by and what attribution names, where the rows have them.
VERDICT_COLUMNS = ["family", "timing_mode", "git_commit", "host", "driver_version", "cuda_runtime_version", "nvrtc_version",
                   "cupy_version", "library_algorithm", "launch_method", "compile_options", "sm_clock_median_mhz",
                   "mem_clock_median_mhz", "throttle_power", "throttle_thermal", "throttle_hw_slowdown"]


def compare_records(rows: pd.DataFrame, extra: list[str] | tuple = ()) -> list[dict]:
    """Rows as the plain dicts farm.analysis.compare takes (samples as lists), with the noise model's and
    attribution's columns (those present) and the `extra` columns too."""
    t = timed(rows)
    cols = list(dict.fromkeys([*COMPARE_COLUMNS, *(c for c in VERDICT_COLUMNS if c in t), *extra]))
    recs = t[cols].to_dict("records")
    for r in recs:
        s = r["samples_ms"]
        r["samples_ms"] = [] if s is None or (isinstance(s, float)) else [float(x) for x in s]
    return recs


def comparisons_frame(comps: list[fcompare.Comparison], key_names: list[str], rows: pd.DataFrame) -> pd.DataFrame:
    """farm.analysis.compare results as a table: key columns, A/B medians, diff and band in %, verdict."""
    cols = [*key_names, "a_ms", "b_ms", "a_rows", "b_rows", "diff_pct", "band_pct", "lo_pct", "hi_pct", "verdict",
            "differed", "confounded", "why", "noise"]
    recs = []
    for c in comps:
        rec = dict(zip(key_names, c.key))
        rec.update(a_ms=c.a.median_ms, b_ms=c.b.median_ms, a_rows=c.a.rows, b_rows=c.b.rows,
                   diff_pct=100 * c.diff, band_pct=100 * c.band if math.isfinite(c.band) else np.nan, verdict=c.verdict,
                   differed="; ".join(c.context), confounded=c.confounded, why=c.reason, noise=c.noise)
        recs.append(rec)
    df = pd.DataFrame(recs, columns=[c for c in cols if c not in ("lo_pct", "hi_pct")])
    df["lo_pct"] = df["diff_pct"] - df["band_pct"]
    df["hi_pct"] = df["diff_pct"] + df["band_pct"]
    if not df.empty and {"stage", "m", "n", "k"} <= set(df.columns):
        from dashboard.data import size_label

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


def calibration(rows: pd.DataFrame, tol: float) -> pd.DataFrame:
    """How far verdicts can be trusted, per GPU model and family: the A/A comparisons of every run's repeats of each
    cell (identical code, so every FASTER/SLOWER is false), counted, with the false-difference and UNCLEAR rates."""
    cols = ["gpu_model", "family", "comparisons", "SAME", "FASTER", "SLOWER", "UNCLEAR", "difference_rate", "unclear_rate"]
    recs = compare_records(rows)
    model = NoiseModel.learn(recs)
    by_run: dict[tuple, list[dict]] = {}
    for r in recs:
        by_run.setdefault((r["dataset"], r["run_id"]), []).append(r)
    comps = [c for (_, run), rs in by_run.items() for c in fcompare.compare_repeats(rs, run, tol, model)]
    return pd.DataFrame(fcompare.rates(comps), columns=cols)


def aa(rows: pd.DataFrame, run: str, tol: float, model: NoiseModel | None = None) -> pd.DataFrame:
    """A/A: every pair of repeats of each cell of `run` on each GPU, noise learned from `rows` unless given."""
    recs = [r for r in compare_records(rows) if r["run_id"] == run]
    comps = fcompare.compare_repeats(recs, run, tol, model or noise_model(rows))
    df = comparisons_frame(comps, ["gpu_uuid", "stage", "m", "n", "k", "pair"], rows)
    if not df.empty:
        labels = dict(zip(rows["gpu_uuid"], rows["gpu"]))
        df.insert(0, "gpu", df["gpu_uuid"].map(labels))
        if df["gpu_uuid"].nunique() > 1:  # pairs of different GPUs must not share a row of the chart
            df["pair"] = df["gpu"].str.split(" · ").str[-1] + " " + df["pair"]
    return df


def gpu_to_gpu(rows: pd.DataFrame, run: str, tol: float) -> pd.DataFrame:
    recs = [r for r in compare_records(rows) if r["run_id"] == run]
    comps = fcompare.compare_gpus(recs, run, tol, noise_model(rows))
    return comparisons_frame(comps, ["gpu_model", "stage", "m", "n", "k", "pair"], rows)


def compare_selected(rows: pd.DataFrame, a: pd.Series, b: pd.Series, tol: float, model_label: str | None = None) -> pd.DataFrame:
    """The rows under mask `b` against those under mask `a`, per GPU model, stage and shape present in both
    (farm.analysis.compare.compare_runs: rows of a side pooled). With `model_label` the sides are different GPU models:
    cells are matched on stage and shape alone, and the label stands in the gpu_model column."""
    both = pd.concat([rows[a].assign(run_id="A"), rows[b].assign(run_id="B")])
    if model_label is not None:
        both = both.assign(gpu_model=model_label)
    comps = fcompare.compare_runs(compare_records(both), "A", "B", tol, noise_model(rows, apart=(a, b)))
    return comparisons_frame(comps, ["gpu_model", "stage", "m", "n", "k"], rows)


def run_to_run(rows: pd.DataFrame, a: tuple[str, str], b: tuple[str, str], tol: float) -> pd.DataFrame:
    """Run B against run A ((dataset, run id) each), per GPU model, stage and shape present in both."""
    def mask(pair: tuple[str, str]) -> pd.Series:
        return (rows["dataset"] == pair[0]) & (rows["run_id"] == pair[1])

    df = compare_selected(rows, mask(a), mask(b), tol)
    df["pair"] = f"{a[1]}~{b[1]}"
    return df


def comparison_summary(df: pd.DataFrame, tol: float) -> dict:
    n = len(df)
    counts = {v: int((df["verdict"] == v).sum()) if n else 0 for v in ("SAME", "FASTER", "SLOWER", "UNCLEAR")}
    return {"comparisons": n, **counts,
            "difference_rate": (counts["FASTER"] + counts["SLOWER"]) / n if n else None,
            "median_abs_diff_pct": float(df["diff_pct"].abs().median()) if n else None,
            "median_band_pct": float(df["band_pct"].median()) if n else None}


def runs_with_repeats(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, run) pairs where some cell on some GPU has two timed repeats or more."""
    t = timed(rows)
    if t.empty:
        return []
    c = t.groupby(["dataset", "run_id", "gpu_uuid", "stage", "m", "n", "k"]).size()
    return sorted({(d, r) for (d, r, *_), v in c.items() if v >= 2})


def aa_disagreements(rows: pd.DataFrame, tol: float, band_limit: float) -> dict[tuple, str]:
    """Cells whose repeats disagree: an A/A pair FASTER or SLOWER, or a band wider than ±band_limit from learned noise.

    Keys (dataset, run_id, gpu_uuid, stage, m, n, k); values say which pair and by how much.
    """
    out: dict[tuple, str] = {}
    model = noise_model(rows)  # learned once, from every row
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


def best_run_pair(rows: pd.DataFrame) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The two (dataset, run) pairs sharing the most timed cells (GPU model, stage, shape), older one first."""
    t = timed(rows)
    if t.empty:
        return None
    cells = t.groupby(["dataset", "run_id"]).apply(lambda g: set(zip(g["gpu_model"], g["stage"], g["m"], g["n"], g["k"])),
                                                    include_groups=False)
    start = t.groupby(["dataset", "run_id"])["timestamp"].min()
    best, best_n = None, 0
    keys = sorted(cells.index, key=lambda k: start[k])
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            n = len(cells[a] & cells[b])
            if n > best_n:
                best, best_n = (a, b), n
    return best


def runs_with_gpu_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, run) pairs where two GPUs of one model measured the same cell."""
    t = timed(rows)
    if t.empty:
        return []
    c = t.groupby(["dataset", "run_id", "gpu_model", "stage", "m", "n", "k"])["gpu_uuid"].nunique()
    return sorted({(d, r) for (d, r, *_), v in c.items() if v >= 2})


# ---------------------------------------------------------------- telemetry

TIMED_SERIES = ("kernel", "baseline")
_THROTTLE_BITS = throttle.POWER | throttle.THERMAL | throttle.HW_SLOWDOWN
SAMPLE_PERIOD_MS = 10.0


def timeline(tele: pd.DataFrame, rows: pd.DataFrame, max_points: int = 24000) -> pd.DataFrame:
    """Telemetry samples on one wall-clock axis per GPU: each cell's samples at its row's timestamp + t_ms.

    Cells of one GPU and run are laid end to end in timestamp order: a cell that would begin
    before the previous one ended (timestamps written at the end of a cell) starts where the
    previous one ended. `throttled`: a timed sample (kernel or baseline batches) with a power,
    thermal or hardware-slowdown reason, or an SM clock below 75 % of the GPU's max.
    Thinned to about `max_points` samples in all (at least 1000 per GPU), throttled samples always kept.
    """
    cols = [*JOIN_KEYS, "gpu", "cell", "series", "t_ms", "time", "sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "reasons",
            "reason_names", "max_sm_clock_mhz", "throttled", "size_label"]
    if tele.empty or rows.empty:
        return pd.DataFrame(columns=cols)
    cells = rows[[*JOIN_KEYS, "timestamp", "max_sm_clock_mhz", "gpu", "size_label"]].drop_duplicates(JOIN_KEYS)
    span = tele.groupby(JOIN_KEYS, sort=False)["t_ms"].agg(["min", "max"]).reset_index()
    cells = cells.merge(span, on=JOIN_KEYS, how="inner").sort_values(["dataset", "run_id", "gpu_uuid", "timestamp"])
    starts = []
    prev_key, prev_end = None, None
    for key, ts, lo, hi in zip(zip(cells["dataset"], cells["run_id"], cells["gpu_uuid"]), cells["timestamp"], cells["min"], cells["max"]):
        start = ts
        if key == prev_key and prev_end is not None and ts + pd.Timedelta(milliseconds=float(lo)) < prev_end:
            start = prev_end - pd.Timedelta(milliseconds=float(lo))
        starts.append(start)
        prev_key, prev_end = key, start + pd.Timedelta(milliseconds=float(hi) + SAMPLE_PERIOD_MS)
    cells["start"] = starts
    s = tele.merge(cells[[*JOIN_KEYS, "start", "max_sm_clock_mhz", "gpu", "size_label"]], on=JOIN_KEYS, how="inner")
    s["time"] = s["start"] + pd.to_timedelta(s["t_ms"].astype("float64"), unit="ms")
    reasons = s["reasons"].fillna(0).astype("int64")
    max_clk = s["max_sm_clock_mhz"].astype("float64")
    low = (s["sm_clock_mhz"].astype("float64") < throttle.LOW_CLOCK_FRACTION * max_clk) & max_clk.notna()
    s["throttled"] = s["series"].isin(TIMED_SERIES) & (((reasons & _THROTTLE_BITS) != 0) | low)
    s["reason_names"] = [", ".join(throttle.reason_names(int(x))) for x in reasons]
    s["cell"] = (s["gpu_uuid"] + "|" + s["stage"] + "|" + s["m"].astype(str) + "x" + s["n"].astype(str) + "x" + s["k"].astype(str)
                 + "|r" + s["repeat"].astype(str))
    s = s.sort_values(["gpu_uuid", "time"])
    n = s.groupby("gpu_uuid")["time"].transform("size")
    per_gpu = max(1000, max_points // max(1, s["gpu_uuid"].nunique()))
    stride = np.maximum(1, np.ceil(n / per_gpu)).astype(int)
    pos = s.groupby("gpu_uuid").cumcount()
    s = s[(pos % stride == 0) | s["throttled"]]
    return s[cols].reset_index(drop=True)


def throttle_windows(tl: pd.DataFrame) -> pd.DataFrame:
    """Runs of consecutive throttled samples per GPU as [start, end) windows."""
    cols = ["gpu", "gpu_uuid", "start", "end", "samples", "reasons", "stages", "min_clock_mhz"]
    if tl.empty or not tl["throttled"].any():
        return pd.DataFrame(columns=cols)
    out = []
    for uuid, g in tl.sort_values("time").groupby("gpu_uuid", sort=False):
        flag = g["throttled"].to_numpy()
        run_id = np.cumsum(np.r_[True, flag[1:] != flag[:-1]])
        for rid in np.unique(run_id[flag]):
            w = g[(run_id == rid)]
            out.append({"gpu": w["gpu"].iloc[0], "gpu_uuid": uuid, "start": w["time"].min(),
                        "end": w["time"].max() + pd.Timedelta(milliseconds=SAMPLE_PERIOD_MS), "samples": len(w),
                        "reasons": ", ".join(sorted({n for x in w["reason_names"] for n in x.split(", ") if n})) or "low clock",
                        "stages": ", ".join(dict.fromkeys(w["stage"] + " " + w["size_label"])),
                        "min_clock_mhz": w["sm_clock_mhz"].min()})
    return pd.DataFrame(out, columns=cols)


def clock_vs_time(rows: pd.DataFrame) -> pd.DataFrame:
    """Timed rows with their median SM clock (% of the GPU's max) and their time relative to the cell's median
    over all rows shown (%)."""
    t = timed(rows)
    t = t[t["sm_clock_median_mhz"].notna() & (t["max_sm_clock_mhz"] > 0)] if not t.empty else t
    if t.empty:
        return t.assign(rel_pct=pd.Series(dtype="float64"), clock_pct=pd.Series(dtype="float64"))
    med = t.groupby(["gpu_model", "stage", "m", "n", "k"])["median_ms"].transform("median")
    return t.assign(rel_pct=100 * (t["median_ms"] / med - 1), clock_pct=100 * t["sm_clock_median_mhz"] / t["max_sm_clock_mhz"])


# ---------------------------------------------------------------- overview

def runs_table(rows: pd.DataFrame) -> pd.DataFrame:
    cols = ["dataset", "run_id", "started", "last_row", "duration_s", "gpus", "gpu_models", "stages", "shapes", "repeats",
            "rows", "ok", "not_ok", "throttled", "git_commit"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    r = rows.assign(_ok=rows["status"] == "ok", _thr=rows["throttled_fraction"].fillna(0) > 0,
                    _shape=rows["shape"])
    g = r.groupby(["dataset", "run_id"], sort=False)
    out = g.agg(started=("timestamp", "min"), last_row=("timestamp", "max"), gpus=("gpu_uuid", "nunique"),
                stages=("stage", "nunique"), shapes=("_shape", "nunique"), repeats=("repeat", "nunique"),
                rows=("stage", "size"), ok=("_ok", "sum"), throttled=("_thr", "sum")).reset_index()
    out["gpu_models"] = g["gpu_model"].agg(_join).values
    out["git_commit"] = g["git_commit"].agg(lambda s: _join(x[:12] + ("-dirty" if str(x).endswith("-dirty") else "") for x in s.dropna())).values
    out["not_ok"] = out["rows"] - out["ok"]
    out["duration_s"] = (out["last_row"] - out["started"]).dt.total_seconds()
    return out[cols].sort_values("last_row", ascending=False).reset_index(drop=True)


def gpus_table(rows: pd.DataFrame) -> pd.DataFrame:
    cols = ["gpu_model", "gpu", "gpu_name", "gpu_uuid", "host", "arch", "sm_count", "memory_gib", "driver_version",
            "cuda_runtime_version", "runs", "rows", "last_seen"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    g = rows.groupby(["gpu_model", "gpu_uuid"], sort=True)
    out = g.agg(gpu=("gpu", "first"), gpu_name=("gpu_name", "first"), host=("host", "first"), arch=("arch", "first"),
                sm_count=("sm_count", "max"), memory=("memory_bytes", "max"), driver_version=("driver_version", "last"),
                cuda_runtime_version=("cuda_runtime_version", "last"), runs=("run_id", "nunique"), rows=("stage", "size"),
                last_seen=("timestamp", "max")).reset_index()
    out["memory_gib"] = out["memory"] / 2**30
    return out[cols]


def datasets_table(rows: pd.DataFrame, sources, files: dict) -> pd.DataFrame:
    cols = ["dataset", "path", "layout", "row_files", "telemetry_files", "rows", "runs", "gpus", "schema_versions", "newest"]
    recs = []
    for s in sources:
        r = rows[rows["dataset"] == s.name] if not rows.empty else rows
        f = files.get(s.name, {})
        recs.append({"dataset": s.name, "path": s.path, "layout": s.layout, "row_files": f.get("rows", 0),
                     "telemetry_files": f.get("telemetry", 0), "rows": len(r), "runs": r["run_id"].nunique() if len(r) else 0,
                     "gpus": r["gpu_uuid"].nunique() if len(r) else 0,
                     "schema_versions": _join(r["schema_version"]) if len(r) else "",
                     "newest": r["timestamp"].max() if len(r) else pd.NaT})
    return pd.DataFrame(recs, columns=cols)


def sweeps_in_progress(rows: pd.DataFrame, now: dt.datetime, window_s: float = 60.0) -> pd.DataFrame:
    """Runs that wrote rows in the last `window_s` seconds, with how far they are.

    The total is the plan's: its cells (the rows' `plan_cells`, written by the sweep driver) once per
    GPU (replicated runs) or once per GPU model (sharded runs, where no cell appears on two GPUs of a
    model); `planned` says so. Rows without it (older data, `farm bench`) fall back on the grid seen so
    far, the distinct stages x shapes x repeats, which only grows as new stages or shapes appear: an
    estimate (`planned` False).
    """
    cols = ["dataset", "run_id", "gpus", "rows", "rows_last_window", "rows_per_min", "expected", "planned", "progress",
            "mode", "last_row", "now_running"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    cutoff = pd.Timestamp(now) - pd.Timedelta(seconds=window_s)
    live = rows.groupby(["dataset", "run_id"])["timestamp"].max()
    live = live[live >= cutoff]
    recs = []
    for (dset, run), last in live.items():
        r = rows[(rows["dataset"] == dset) & (rows["run_id"] == run)]
        grid = r["stage"].nunique() * r["shape"].nunique() * r["repeat"].nunique()
        cell = ["stage", "m", "n", "k", "repeat"]
        per_model = r.groupby(["gpu_model", *cell])["gpu_uuid"].nunique()
        sharded = r["gpu_uuid"].nunique() > r["gpu_model"].nunique() and (per_model <= 1).all()
        plan_cells = r["plan_cells"].max() if "plan_cells" in r else np.nan
        planned = bool(plan_cells == plan_cells and plan_cells > 0)
        expected = int(plan_cells if planned else grid) * (r["gpu_model"].nunique() if sharded else r["gpu_uuid"].nunique())
        recent = r[r["timestamp"] >= cutoff]
        newest = r.sort_values("timestamp").groupby("gpu_uuid").tail(1)
        recs.append({"dataset": dset, "run_id": run, "gpus": r["gpu_uuid"].nunique(), "rows": len(r),
                     "rows_last_window": len(recent), "rows_per_min": len(recent) * 60.0 / window_s,
                     "expected": expected, "planned": planned, "progress": min(1.0, len(r) / expected) if expected else None,
                     "mode": "sharded per model" if sharded else "every GPU runs every cell", "last_row": last,
                     "now_running": "; ".join(f"{g}: {s} {z} r{p}" for g, s, z, p in
                                              zip(newest["gpu"], newest["stage"], newest["size_label"], newest["repeat"]))})
    return pd.DataFrame(recs, columns=cols)


# ---------------------------------------------------------------- tuning

TUNE_KEYS = ["gpu_model", "kernel", "family", "dtype", "m", "n", "k", "size", "size_label"]
LADDER_ROLE, TUNING_ROLE = "ladder stage", "tuning"


def _verified(rows: pd.DataFrame) -> pd.DataFrame:
    t = timed(rows)
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

    Only ok and verified rows count; repeats, runs and same-model GPUs are pooled (cell_stats: median of the rows'
    median_ms, spread min-max over rows or q1-q3 of one row's samples). The ladder stage's rows come from the
    runs that measured the tuning rows of the cell where there are any (same session, same GPUs: the fair
    reference), from any run otherwise (ladder_same_run False). `ladder_tags` maps a kernel to its ladder
    configuration's tag (data.ladder_configs): that tuning row is flagged is_ladder_config, a second
    measurement of the ladder stage. rank: 1 = fastest configuration of the cell (the ladder stage is not ranked).
    """
    tags = ladder_tags or {}
    extra = ["registers", "local_bytes", "threads_per_block", "dynamic_smem_bytes", "baseline_ms"]
    cols = [*TUNE_KEYS, "role", "stage", "config", "is_ladder_config", "rank", "configs", "gap_to_best_pct", "median_ms",
            "ms_lo", "ms_hi", "tflops", "tflops_lo", "tflops_hi", "pct", "pct_lo", "pct_hi", *extra, "rows", "spread",
            "runs", "datasets", "gpus", "ladder_same_run", *PROVENANCE]
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
        same = lad.merge(runs.assign(_same=True), on=["dataset", "run_id", *cell], how="left")["_same"].eq(True).to_numpy()
        lad = lad.assign(_same=same.astype("float64"))
        any_same = lad.groupby(cell)["_same"].transform("any")
        lad = lad[(lad["_same"] > 0) | (any_same == 0)]
    both = pd.concat([tune.assign(role=TUNING_ROLE, _same=0.0), lad.assign(role=LADDER_ROLE)], ignore_index=True)
    both["baseline_ms"] = both["baseline_median_ms"].astype("float64")
    keys = [*TUNE_KEYS, "role", "stage", "config"]
    out = cell_stats(both, keys)
    attrs = both.groupby(keys, dropna=False, sort=False).agg(
        registers=("registers", "max"), local_bytes=("local_bytes", "max"), threads_per_block=("threads_per_block", "max"),
        dynamic_smem_bytes=("dynamic_smem_bytes", "max"), baseline_ms=("baseline_ms", "median"),
        ladder_same_run=("_same", "max")).reset_index()
    out = out.merge(attrs, on=keys, how="left")
    out["ms_lo"] = out["flops"] / out["tflops_hi"] / 1e9
    out["ms_hi"] = out["flops"] / out["tflops_lo"] / 1e9
    out["is_ladder_config"] = (out["role"] == TUNING_ROLE) & (out["config"] == out["kernel"].map(tags)) & out["config"].astype(bool)
    group = ["gpu_model", "kernel", "m", "n", "k"]
    tuned = out["role"] == TUNING_ROLE
    out["rank"] = out[tuned].groupby(group)["median_ms"].rank(method="first")
    out["configs"] = out[tuned].groupby(group)["stage"].transform("size")
    best = out[tuned].groupby(group)["median_ms"].min().rename("_best")  # the ladder stage gets its gap too
    out = out.merge(best, left_on=group, right_index=True, how="left")
    out["gap_to_best_pct"] = 100 * (out["median_ms"] / out["_best"] - 1)
    out["ladder_same_run"] = np.where(out["role"] == LADDER_ROLE, out["ladder_same_run"] > 0, np.nan)
    return out[cols].sort_values(["gpu_model", "kernel", "size", "m", "n", "k", "role", "rank"], kind="stable").reset_index(drop=True)


def tuning_summary(cells: pd.DataFrame, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """One line per GPU model, tuned kernel and size: the best configuration and what tuning bought.

    bought = ladder stage's median time / the best configuration's (x). gap_pct: how much slower the runner-up
    is (%). ladder_aa_pct: the ladder configuration's tuning row against the ladder stage itself, the same
    kernel measured in two cells (%, + slower): the cell-to-cell noise any gap must beat. winner: 'clear' when
    the runner-up's spread lies wholly above the best's and its gap beats |ladder_aa_pct|, else 'within noise'.
    failed: configurations with rows in the cell but none ok and verified (from `rows`).
    """
    cols = ["gpu_model", "kernel", "dtype", "size_label", "m", "n", "k", "size", "ladder_config", "ladder_ms", "best_config",
            "best_stage", "best_ms", "best_ms_lo", "best_ms_hi", "best_spread", "best_tflops", "best_pct", "best_baseline_ms",
            "bought", "configs", "failed", "runner_up", "runner_up_ms", "gap_pct", "winner", "ladder_rank", "ladder_aa_pct",
            "best_local_bytes", "best_rows", "ladder_same_run", "runs"]
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
        aa_pct = 100 * (float(as_tuning["median_ms"].iloc[0]) / lad_ms - 1) if len(as_tuning) and pd.notna(lad_ms) else np.nan
        gap = 100 * (r["median_ms"] / b["median_ms"] - 1) if r is not None else np.nan
        if r is None:
            winner = "only one configuration"
        else:
            apart = r["ms_lo"] > b["ms_hi"] and not (pd.notna(aa_pct) and gap <= abs(aa_pct))
            winner = "clear" if apart else "within noise"
        recs.append({**dict(zip(group, key)), "dtype": b["dtype"], "size_label": b["size_label"], "size": b["size"],
                     "ladder_config": ladder["config"].iloc[0] if len(ladder) else "", "ladder_ms": lad_ms,
                     "best_config": b["config"], "best_stage": b["stage"], "best_ms": b["median_ms"], "best_ms_lo": b["ms_lo"],
                     "best_ms_hi": b["ms_hi"], "best_spread": b["spread"], "best_tflops": b["tflops"], "best_pct": b["pct"],
                     "best_baseline_ms": b["baseline_ms"], "bought": lad_ms / b["median_ms"], "configs": len(tuned),
                     "runner_up": r["config"] if r is not None else "", "runner_up_ms": r["median_ms"] if r is not None else np.nan,
                     "gap_pct": gap, "winner": winner,
                     "ladder_rank": f"{int(as_tuning['rank'].iloc[0])} of {len(tuned)}" if len(as_tuning) else "",
                     "ladder_aa_pct": aa_pct, "best_local_bytes": b["local_bytes"], "best_rows": b["rows"],
                     "ladder_same_run": bool(ladder["ladder_same_run"].iloc[0]) if len(ladder) else False, "runs": b["runs"]})
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


def run_overheads(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, run and sweep command (a resumed run has several): GPUs, cells, start-up, wall time, summed timed
    GPU windows and the overhead: (wall - start-up) x GPUs / timed GPU seconds, farm time per timed GPU second."""
    if runs.empty:
        return pd.DataFrame(columns=["dataset", "run_id", "started_at", "gpus", "cells", "startup_s", "first_row_s",
                                     "wall_s", "timed_gpu_s", "overhead", "stopped"])
    cells = runs.filter(like="cells_").drop(columns=["cells_not_run", "cells_resumed"]).sum(axis=1)
    g = runs.assign(cells=cells).groupby(["dataset", "run_id", "started_at"], as_index=False).agg(
        gpus=("gpu_uuid", "nunique"), cells=("cells", "sum"), startup_s=("startup_seconds", "first"),
        first_row_s=("first_row_seconds", "min"), wall_s=("wall_seconds", "first"), timed_gpu_s=("timed_seconds", "sum"),
        stopped=("interrupted", "any"))
    busy = (g["wall_s"] - g["startup_s"]) * g["gpus"]
    return g.assign(overhead=(busy / g["timed_gpu_s"]).where(g["timed_gpu_s"] > 0)).sort_values("started_at", ascending=False)
