"""The pandas pieces every page shares (pandas in, pandas out, no Streamlit): the sidebar's filters, timed rows,
and cells pooled over repeats, runs and same-model GPUs with where their numbers came from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

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


def distinct_text(values) -> str:
    """The distinct values, sorted, as one line of text."""
    return ", ".join(sorted({str(v) for v in values if v is not None and v == v}))


def cell_stats(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One line per cell (`keys`), pooling repeats, runs and same-model GPUs.

    median_ms is the median of the rows' medians, tflops = flops / median_ms. The spread
    (lo, hi) is the rows' min-max where the cell has two rows or more; for one row, the
    q1-q3 of its own samples.
    """
    t = timed(rows)
    cols = [
        *keys,
        "rows",
        "median_ms",
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
        "pct_vendor",
        "unlike_launches",
        "spread",
        "cv_max",
        "runs",
        "datasets",
        "gpus",
        "flops",
    ]
    if t.empty:
        return pd.DataFrame(columns=[*cols, *PROVENANCE])
    t = t.assign(
        _pct=t["pct_of_baseline"].astype("float64"),
        _alone=alone_pct(t),
        _shift=_col(t, "partner_shift_pct", np.nan).astype("float64"),
        _tf=t["flops"] / t["median_ms"] / 1e9,
        # derived by data.enrich; frames built elsewhere may lack them
        _vendor=t.get("pct_of_vendor_best", pd.Series(np.nan, index=t.index)).astype("float64"),
        _unlike=t.get("launch_flag", pd.Series("", index=t.index)).fillna("").ne(""),
    )
    g = t.groupby(keys, dropna=False, sort=False)
    out = g.agg(
        rows=("median_ms", "size"),
        median_ms=("median_ms", "median"),
        flops=("flops", "first"),
        tf_min=("_tf", "min"),
        tf_max=("_tf", "max"),
        pct=("_pct", "median"),
        pct_min=("_pct", "min"),
        pct_max=("_pct", "max"),
        pct_alone=("_alone", "median"),
        pct_alone_min=("_alone", "min"),
        pct_alone_max=("_alone", "max"),
        partner_shift=("_shift", "median"),
        pct_vendor=("_vendor", "median"),
        unlike_launches=("_unlike", "sum"),
        q1=("q1_ms", "first"),
        q3=("q3_ms", "first"),
        cv_max=("cv", "max"),
        gpus=("gpu_uuid", "nunique"),
    ).reset_index()
    out["runs"] = g["run_id"].agg(distinct_text).values
    out["datasets"] = g["dataset"].agg(distinct_text).values
    out["tflops"] = out["flops"] / out["median_ms"] / 1e9
    one = out["rows"] == 1
    q1 = out["q1"].where(out["q1"] > 0)
    q3 = out["q3"].where(out["q3"] > 0)
    out["tflops_lo"] = np.where(one, out["flops"] / q3 / 1e9, out["tf_min"])
    out["tflops_hi"] = np.where(one, out["flops"] / q1 / 1e9, out["tf_max"])
    for pct in ("pct", "pct_alone"):  # a % moves inversely with the time: q3 of the samples is its low end
        out[f"{pct}_lo"] = np.where(one, out[pct] * out["median_ms"] / q3, out[f"{pct}_min"])
        out[f"{pct}_hi"] = np.where(one, out[pct] * out["median_ms"] / q1, out[f"{pct}_max"])
    out["spread"] = np.where(
        one, "q1–q3 of one row's samples", "min–max over " + out["rows"].astype(str) + " rows (repeats, runs, GPUs)"
    )
    out = out.merge(provenance(t, keys), on=keys, how="left")
    return out[[*cols, *PROVENANCE]]


# ---------------------------------------------------------------- % of baseline: in the cell or timed alone


@dataclass(frozen=True)
class PctBasis:
    """Which % of baseline a chart plots (docs/verdicts.md, "At the power cap"): the in-cell baseline, timed batch by
    batch beside the kernel (at a power cap at the pair's shared clock), or the baseline's own cell of the run."""

    label: str  # what the picker offers
    short: str  # what axis titles and legends add: "in the cell" | "timed alone"
    cell_column: str  # cell_stats' column
    row_column: str  # the rows' column (data.enrich)


IN_CELL = PctBasis("% of baseline in the cell", "in the cell", "pct", "pct_of_baseline")
ALONE = PctBasis("% of baseline timed alone", "timed alone", "pct_alone", "pct_of_alone_baseline")
PCT_BASES = (IN_CELL, ALONE)


def alone_pct(t: pd.DataFrame) -> pd.Series:
    """Each row's % of its baseline timed alone (data.enrich; NaN where the run timed no cell of the baseline of its
    own there). A baseline's own row is that alone timing itself, so its % (100) stands in either basis."""
    own = _col(t, "stage").eq(_col(t, "baseline"))
    alone = pd.to_numeric(_col(t, ALONE.row_column), errors="coerce").astype("float64")
    return alone.where(~own, t[IN_CELL.row_column].astype("float64"))


PROVENANCE = ["pooled", "cards", "driver", "cuda_nvrtc", "commits", "sm_clock", "power_thermal", "flag"]


def _values(series: pd.Series, what: str, short: int | None = None) -> str:
    """One value as itself; several as 'N whats: a, b, c, …'; none as 'not recorded'."""
    vals = sorted(
        {
            str(v)[:short] + ("-dirty" if short and str(v).endswith("-dirty") else "") if short else str(v)
            for v in series.dropna()
            if str(v)
        }
    )
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

    u = t.assign(
        _card=_col(t, "gpu").fillna(_col(t, "gpu_uuid")),
        _run=text("dataset") + "/" + text("run_id"),
        _cuda=text("cuda_runtime_version") + " / " + text("nvrtc_version"),
        _commit=_col(t, "git_commit"),
        _driver=_col(t, "driver_version"),
        _power=flag("throttle_power"),
        _thermal=flag("throttle_thermal") | flag("throttle_hw_slowdown"),
        _clock=number("sm_clock_median_mhz"),
        _max=number("max_sm_clock_mhz"),
        _temp=number("temp_max_c"),
        _flag=_col(t, "launch_flag", "").fillna("").ne(""),
    )
    g = u.groupby(keys, dropna=False, sort=False)
    out = g.agg(
        _n=("_run", "size"),
        _runs=("_run", "nunique"),
        _commits=("_commit", "nunique"),
        _ncards=("_card", "nunique"),
        _clock=("_clock", "median"),
        _top=("_max", "max"),
        _temp=("_temp", "max"),
        _power=("_power", "sum"),
        _thermal=("_thermal", "sum"),
        _flagged=("_flag", "sum"),
    ).reset_index()
    for col, what, short, name in (
        ("_card", "cards", None, "cards"),
        ("_driver", "drivers", None, "driver"),
        ("_cuda", "versions", None, "cuda_nvrtc"),
        ("_commit", "commits", 12, "commits"),
    ):
        out[name] = g[col].agg(lambda x, w=what, k=short: _values(x, w, k)).values

    def plural(v: int, word: str) -> str:
        return f"{v} {word}{'s' * (v != 1)}"

    out["pooled"] = [
        f"{n} rows from {plural(r, 'run')}, {plural(c, 'commit')}, {plural(k, 'card')}"
        for n, r, c, k in zip(out["_n"], out["_runs"], out["_commits"], out["_ncards"])
    ]
    out["sm_clock"] = [
        (f"{c:.0f} MHz median" + (f" (max {m:.0f})" if m == m else "")) if c == c else "not recorded"
        for c, m in zip(out["_clock"], out["_top"])
    ]
    out["power_thermal"] = [
        (f"power-capped in {p} of {n} rows" if p else "no power cap")
        + (f", thermal or hardware slowdown in {h}" if h else ", no thermal slowdown")
        + (f"; max {x:.0f} °C" if x == x else "")
        for p, h, n, x in zip(out["_power"], out["_thermal"], out["_n"], out["_temp"])
    ]
    out["flag"] = [
        f"⚑ {f} of {n} rows compare unlike launches" if f else "" for f, n in zip(out["_flagged"], out["_n"])
    ]
    return out[[*keys, *PROVENANCE]]
