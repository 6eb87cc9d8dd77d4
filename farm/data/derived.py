"""Columns derived from rows at read time, so that every reader (report, dashboard, validate) agrees.

`with_alone_baseline`: each kernel row's % of its baseline timed alone (the baseline's own cell of the run), beside
the in-cell %: at a power cap the two timings of one cell share the chip's clock, so the in-cell baseline runs at
its partner's clock, not at its own (docs/verdicts.md, "At the power cap").

`launch_mismatch`: which rows' % of baseline compares two times taken differently (a CUDA graph
against direct launches). Schema 3 rows say how their in-cell baseline was launched (`baseline_launch_method`). Schema 2 rows
do not: there it is read off the baseline's own rows of the same run, GPU model and timing mode (the
v2 harness launched a baseline the same way in its own cells and in the kernels' cells), and is
'unknown' where the run has none. Every place that shows a % (report, headline, dashboard, validate)
uses `launch_mismatch` so the rule is written once.
"""

from __future__ import annotations

import pandas as pd

_KEYS = ["gpu_model", "run_id", "timing_mode"]


def baseline_launch_methods(df: pd.DataFrame) -> pd.Series:
    """Each row's baseline launch method: its own column where set, else inferred (see the module doc)."""
    given = (
        df["baseline_launch_method"]
        if "baseline_launch_method" in df
        else pd.Series(None, index=df.index, dtype=object)
    )
    missing = given.isna()
    if not missing.any():
        return given
    own = df[df["stage"] == df["baseline"]].dropna(subset=["launch_method"])
    usual = (
        own.groupby([*_KEYS, "stage"])["launch_method"].agg(lambda s: s.mode().iloc[0])
        if len(own)
        else pd.Series(dtype=object)
    )
    keys = list(zip(*(df.loc[missing, c] for c in [*_KEYS, "baseline"])))
    inferred = [usual.get(key, "unknown") for key in keys]
    out = given.astype(object).copy()
    out.loc[missing] = inferred
    return out


def launch_mismatch(df: pd.DataFrame) -> pd.Series:
    """Per row, why its % is flagged ('' when kernel and baseline were launched alike, or the row is untimed)."""
    if df.empty:
        return pd.Series([], index=df.index, dtype=object)
    base = baseline_launch_methods(df)
    own = df["launch_method"]
    timed = df["status"].eq("ok") & own.notna()
    differs = timed & (own != base)
    reasons = pd.Series("", index=df.index, dtype=object)
    reasons[differs] = [
        f"kernel timed as {o}, baseline {b} as {m}: the % compares unlike timings"
        for o, b, m in zip(own[differs], df.loc[differs, "baseline"], base[differs])
    ]
    return reasons


VENDOR_LIBRARIES = ("cublas", "cublaslt")  # stage-name prefixes of the vendor baselines


def _vendor_prefix(stage: pd.Series) -> pd.Series:
    """The library of a baseline's name, what comes before its precision: cublaslt_fp8_e4m3 -> cublaslt."""
    return stage.astype("string").str.split("_", n=1).str[0]


def _own_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The baselines' own rows that were timed: ok, and the stage its own baseline."""
    return df[df["status"].eq("ok") & (df["stage"] == df["baseline"])]


def _lookup(medians: pd.Series, df: pd.DataFrame, columns: list[str]) -> list[float]:
    """Per row of `df`, the value `medians` holds under the row's `columns` (NaN where none)."""
    return [medians.get(key, float("nan")) for key in zip(*(df[c] for c in columns))]


def with_vendor_best(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with `vendor_best_ms` and `pct_of_vendor_best` (null where no vendor time of its class is known)."""
    out = df.copy()
    if df.empty:
        return out.assign(vendor_best_ms=pd.Series(dtype=float), pct_of_vendor_best=pd.Series(dtype=float))
    ok = _own_rows(df)
    ok = ok[_vendor_prefix(ok["stage"]).isin(VENDOR_LIBRARIES)]
    keys = ["gpu_model", "run_id", "timing_mode", "m", "n", "k", "dtype"]
    own = ok.groupby(keys)["median_ms"].median() if len(ok) else pd.Series(dtype=float)
    per_lib = ok.groupby([*keys, "stage"])["median_ms"].median() if len(ok) else pd.Series(dtype=float)
    best_own = per_lib.groupby(level=list(range(len(keys)))).min() if len(per_lib) else own
    lookup = _lookup(best_own, df, keys)
    in_cell = df["baseline_median_ms"].where(_vendor_prefix(df["baseline"]).isin(VENDOR_LIBRARIES))
    out["vendor_best_ms"] = pd.concat([pd.Series(lookup, index=df.index), in_cell], axis=1).min(axis=1, skipna=True)
    out["pct_of_vendor_best"] = 100.0 * out["vendor_best_ms"] / df["median_ms"]
    return out


def with_alone_baseline(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with `alone_baseline_ms` (the median of the run's own rows of the row's baseline at its GPU, timing mode,
    shape and precision), `pct_of_alone_baseline` and `partner_shift_pct` (how much slower, in %, the baseline timed
    beside this row's kernel ran than timed alone); null where the run has no own rows of that baseline."""
    out = df.copy()
    if df.empty:
        nothing = pd.Series(dtype=float)
        return out.assign(alone_baseline_ms=nothing, pct_of_alone_baseline=nothing, partner_shift_pct=nothing)
    ok = _own_rows(df)
    keys = ["gpu_uuid", "run_id", "timing_mode", "m", "n", "k", "stage"]
    alone = ok.groupby(keys)["median_ms"].median() if len(ok) else pd.Series(dtype=float)
    lookup = _lookup(alone, df, [*keys[:-1], "baseline"])
    out["alone_baseline_ms"] = pd.Series(lookup, index=df.index, dtype=float).where(df["stage"] != df["baseline"])
    out["pct_of_alone_baseline"] = 100.0 * out["alone_baseline_ms"] / df["median_ms"]
    out["partner_shift_pct"] = 100.0 * (df["baseline_median_ms"] / out["alone_baseline_ms"] - 1.0)
    return out
