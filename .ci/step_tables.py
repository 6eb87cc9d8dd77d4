"""The tables a walk-D or walk-F step of .ci/gpu-session.sh prints about its own run.

python3 .ci/step_tables.py bench RES RUN [--best NAME=KERNEL,KERNEL ...]
    status counts, rows not ok, % of the vendor library per cell and repeat, medians (us, energy, SM clock, %),
    geometric means at the cells every kernel ran, per kernel (no d_/f_, no dtype) and --best set.
python3 .ci/step_tables.py profile RES RUN
    the Nsight Compute quantities the steps compare.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pyarrow.dataset as ds

from farm.data.dataset import read_table

LADDERS = ("hopper_d", "hopper_fp8")

CELL = ["m", "n", "k", "dtype"]
PROFILED = ("duration", "tensor_pipe_pct", "issue_slots_pct", "sm_throughput_pct", "memory_throughput_pct")
PROFILED += ("l2_hit_pct", "dram_read_bytes", "shared_wavefronts")


def show(title: str, table: pd.DataFrame, digits: int = 1) -> None:
    print(title)
    print(table.round(digits).to_string())


def geomean(values: pd.Series) -> float:
    return float(np.exp(np.log(values).mean()))


def bench(res: str, run: str, best: list[str]) -> None:
    t = read_table(res).to_pandas()
    t = t[t.run_id == run]
    print(t.status.value_counts().to_dict(), t.gpu_name.iloc[0], t.driver_version.iloc[0])
    bad = t[t.status != "ok"]
    if len(bad):
        print(bad[["stage", "m", "n", "k", "status", "status_reason"]].to_string())
    ok = t[(t.status == "ok") & t.family.isin(LADDERS)]
    ok = ok.assign(kernel=ok.stage.str.replace(r"^[df]_|_(bf16|fp16|fp8(_e4m3_e5m2)?)$", "", regex=True))
    library = t[(t.status == "ok") & (t.family == "baseline")].assign(kernel="cublas")
    if library.empty:  # cut before the library's own cells: its time beside each kernel
        nan = {"energy_per_launch_mj": np.nan, "sm_clock_median_mhz": np.nan}
        library = ok.assign(kernel="cublas", median_ms=ok.baseline_median_ms, **nan)
    medians = pd.concat([ok, library]).groupby([*CELL, "kernel"])
    us = medians.median_ms.median().unstack("kernel") * 1e3
    pd.set_option("display.width", 250)
    pct = ok.pivot_table(index=CELL, columns=["kernel", "repeat"], values="pct_of_baseline")
    pct.columns = [f"{s}.r{r}" for s, r in pct.columns]
    pct["cublas_us"] = us["cublas"]
    show("% of the vendor library per repeat", pct)
    show("median us over the repeats", us, 2)
    energy = medians[["energy_per_launch_mj", "sm_clock_median_mhz"]].median().unstack("kernel")
    show("energy a launch (mJ), SM clock (MHz), medians (at the cap, time is energy)", energy)
    median = ok.groupby([*CELL, "kernel"]).pct_of_baseline.median().unstack("kernel")
    show("median %", median)
    shared = median.dropna()  # the same cells for every kernel
    for spec in best:
        name, kernels = spec.split("=")
        shared[f"best {name}"] = shared[kernels.split(",")].max(axis=1)
    title = f"geometric mean at the {len(shared)} cells every kernel ran, per M and dtype, dtype"
    show(title, shared.groupby(["m", "dtype"]).agg(geomean))
    print(shared.groupby("dtype").agg(geomean).round(1).to_string())


def profile(res: str, run: str) -> None:
    t = ds.dataset(res + "/profile", partitioning="hive").to_table().to_pandas()
    t = t[t.run_id == run]
    print(t[["stage", "kernel_symbol"]].dropna().drop_duplicates().to_string(index=False))
    profiled = t[t.quantity.isin(PROFILED)]
    table = profiled.pivot_table(index=["m", "n", "k", "quantity"], columns="stage", values="value", aggfunc="first")
    print(table.to_string())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["bench", "profile"])
    p.add_argument("res")
    p.add_argument("run")
    p.add_argument("--best", action="append", default=[], help="NAME=KERNEL,KERNEL: their best per cell")
    args = p.parse_args()
    bench(args.res, args.run, args.best) if args.what == "bench" else profile(args.res, args.run)


if __name__ == "__main__":
    main()
