"""% of hardware peak and the roofline, as pure functions of the loaded rows (the ceilings are farm.data.peak's)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.analysis import cell_stats, timed
from farm.data import peak as fpeak

DEVICE = ["arch", "compute_capability", "dtype", "sm_count", "max_sm_clock_mhz", "gpu_name"]
PEAK_FORMULA = "peak = dense FLOP per clock per SM (per architecture and precision) × SMs × max SM clock (NVML)"


def with_peak(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` plus peak_tflops (the row's GPU, its precision), pct_of_peak (of flops / median_ms), intensity
    (FLOP per compulsory DRAM byte) and bandwidth_tbs (data-sheet memory bandwidth, TB/s)."""
    out = rows.copy()
    if out.empty:
        for c in ("peak_tflops", "pct_of_peak", "intensity", "bandwidth_tbs"):
            out[c] = pd.Series(dtype="float64")
        return out
    keys = out[DEVICE].astype("object").where(out[DEVICE].notna(), None)
    peaks = {k: fpeak.peak_tflops(fpeak.arch_of(k[0], k[1]), k[2] or "", k[3], k[4], k[5])
             for k in set(map(tuple, keys.to_numpy()))}
    out["peak_tflops"] = [peaks[tuple(k)] for k in keys.to_numpy()]
    out["peak_tflops"] = out["peak_tflops"].astype("float64")
    out["pct_of_peak"] = 100 * out["flops"] / out["median_ms"] / 1e9 / out["peak_tflops"]
    out["intensity"] = [fpeak.intensity(m, n, k, d) if d in fpeak.OPERAND_BYTES else np.nan
                        for m, n, k, d in zip(out["m"], out["n"], out["k"], out["dtype"])]
    out["bandwidth_tbs"] = out["gpu_name"].map(fpeak.bandwidth_tbs).astype("float64")
    return out


CELL_KEYS = ["gpu_model", "family", "stage", "stage_group", "dtype", "order", "m", "n", "k", "size", "size_label"]


def peak_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per GPU model, stage and shape (repeats, runs and same-model GPUs pooled as analysis.cell_stats does)
    with its % of peak (median and spread), the peak it is measured against and its arithmetic intensity."""
    t = with_peak(timed(rows))
    t = t[t["peak_tflops"].notna()] if not t.empty else t
    cells = cell_stats(t, CELL_KEYS)
    extra = ["peak_tflops", "pct_of_peak", "pct_of_peak_lo", "pct_of_peak_hi", "intensity", "kind"]
    if cells.empty:
        return cells.assign(**{c: pd.Series(dtype="float64") for c in extra})
    attrs = t.groupby(CELL_KEYS, dropna=False, sort=False).agg(peak_tflops=("peak_tflops", "median"),
                                                               intensity=("intensity", "first")).reset_index()
    out = cells.merge(attrs, on=CELL_KEYS, how="left")
    for suffix in ("", "_lo", "_hi"):
        out[f"pct_of_peak{suffix}"] = 100 * out[f"tflops{suffix}"] / out["peak_tflops"]
    out["kind"] = np.where(out["family"] == "baseline", "baseline", "kernel")
    return out


def peak_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GPU model and precision seen: the peak, how it is made (FLOP/clock/SM, SMs, clock), the memory bandwidth,
    and where each number comes from."""
    cols = ["gpu_model", "gpu_name", "arch", "dtype", "unit", "flop_per_clock_per_sm", "sm_count", "max_sm_clock_mhz",
            "peak_tflops", "bandwidth_tbs", "ridge_flop_per_byte", "source", "bandwidth_source"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    g = rows.groupby(["gpu_model", "dtype"], sort=True).agg(
        gpu_name=("gpu_name", "first"), arch=("arch", "first"), cc=("compute_capability", "first"),
        sm_count=("sm_count", "max"), max_sm_clock_mhz=("max_sm_clock_mhz", "max")).reset_index()
    recs = []
    for r in g.itertuples():
        arch = fpeak.arch_of(r.arch, r.cc)
        rate = fpeak.rate(arch, r.dtype)
        peak = fpeak.peak_tflops(arch, r.dtype, r.sm_count, r.max_sm_clock_mhz, r.gpu_name)
        bw = fpeak.BANDWIDTH_TBS.get(r.gpu_name or "")
        source = (f"no entry for {arch} {r.dtype}: no peak" if rate is None else rate.source if peak
                  else f"no max SM clock recorded (telemetry off): no peak. {rate.source}")
        recs.append({"gpu_model": r.gpu_model, "gpu_name": r.gpu_name, "arch": arch, "dtype": r.dtype,
                     "unit": fpeak.UNIT.get(r.dtype, ""), "flop_per_clock_per_sm": fpeak.flop_per_clock(arch, r.dtype, r.gpu_name),
                     "sm_count": r.sm_count, "max_sm_clock_mhz": r.max_sm_clock_mhz, "peak_tflops": peak,
                     "bandwidth_tbs": bw[0] if bw else None, "ridge_flop_per_byte": peak / bw[0] if peak and bw else None,
                     "source": source, "bandwidth_source": bw[1] if bw else "no data-sheet entry for this device"})
    out = pd.DataFrame(recs, columns=cols)
    for c in ("flop_per_clock_per_sm", "peak_tflops", "bandwidth_tbs", "ridge_flop_per_byte"):
        out[c] = out[c].astype("float64")
    return out


def roofs(table: pd.DataFrame, lo: float, hi: float, points: int = 60) -> pd.DataFrame:
    """The roofline of each GPU model and precision, min(peak, bandwidth × intensity), sampled on a log grid
    from `lo` to `hi` FLOP/byte (flat where no bandwidth is known)."""
    cols = ["gpu_model", "dtype", "intensity", "tflops", "peak_tflops", "bandwidth_tbs"]
    t = table[table["peak_tflops"].notna()] if not table.empty else table
    if t.empty:
        return pd.DataFrame(columns=cols)
    grid = np.geomspace(lo, hi, points)
    parts = []
    for r in t.itertuples():
        bw = r.bandwidth_tbs
        y = np.minimum(r.peak_tflops, bw * grid) if bw == bw and bw else np.full_like(grid, r.peak_tflops)
        parts.append(pd.DataFrame({"gpu_model": r.gpu_model, "dtype": r.dtype, "intensity": grid, "tflops": y,
                                   "peak_tflops": r.peak_tflops, "bandwidth_tbs": bw}))
    return pd.concat(parts, ignore_index=True)[cols]


def best_vs_cublas(cells: pd.DataFrame, size_label: str) -> pd.DataFrame:
    """At one size, per GPU model, family and precision: the cuBLAS baseline of that precision and the family's
    best stage (highest median % of peak; tuning configurations left out, as `farm report --headline` does)."""
    cols = ["gpu_model", "family", "dtype", "peak_tflops", "cublas", "cublas_tflops", "cublas_pct_of_peak", "best_stage",
            "best_tflops", "best_pct_of_peak", "best_pct_lo", "best_pct_hi", "best_vs_cublas_pct"]
    at = cells[(cells["size_label"] == size_label) & (cells["stage_group"] != "tuning")] if not cells.empty else cells
    kernels = at[at["family"] != "baseline"] if not at.empty else at
    if kernels.empty:
        return pd.DataFrame(columns=cols)
    cublas = at[at["stage"].str.startswith("cublas_") & ~at["stage"].str.startswith("cublaslt_")].set_index(["gpu_model", "dtype"])
    best = kernels.sort_values("pct_of_peak", ascending=False).groupby(["gpu_model", "family", "dtype"], sort=False).head(1)
    recs = []
    for r in best.itertuples():
        cb = cublas.loc[(r.gpu_model, r.dtype)] if (r.gpu_model, r.dtype) in cublas.index else None
        cb = cb.iloc[0] if isinstance(cb, pd.DataFrame) else cb
        recs.append({"gpu_model": r.gpu_model, "family": r.family, "dtype": r.dtype, "peak_tflops": r.peak_tflops,
                     "cublas": cb["stage"] if cb is not None else "", "cublas_tflops": cb["tflops"] if cb is not None else None,
                     "cublas_pct_of_peak": cb["pct_of_peak"] if cb is not None else None, "best_stage": r.stage,
                     "best_tflops": r.tflops, "best_pct_of_peak": r.pct_of_peak, "best_pct_lo": r.pct_of_peak_lo,
                     "best_pct_hi": r.pct_of_peak_hi,
                     "best_vs_cublas_pct": 100 * r.tflops / cb["tflops"] if cb is not None else None})
    out = pd.DataFrame(recs, columns=cols)
    return out.sort_values(["gpu_model", "family", "dtype"], kind="stable").reset_index(drop=True)
