"""The tables a walk-D or walk-F step of .ci/gpu-session.sh prints about its own run.

python3 .ci/step_tables.py bench RES RUN [--best NAME=KERNEL,KERNEL ...]
    status counts, rows not ok, % of the vendor library per cell and repeat, medians over the repeats (us, energy
    a launch, SM clock, %), their geometric means per M and dtype and overall, per kernel (no d_/f_, no dtype) and
    --best set (per cell, the best of its kernels).
python3 .ci/step_tables.py profile RES RUN
    the Nsight Compute quantities the steps compare, a column a stage.
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
    if library.empty:  # a run cut before the library's own cells: its time beside each kernel
        nan = {"energy_per_launch_mj": np.nan, "sm_clock_median_mhz": np.nan}
        library = ok.assign(kernel="cublas", median_ms=ok.baseline_median_ms, **nan)
    medians = pd.concat([ok, library]).groupby([*CELL, "kernel"])
    us = medians.median_ms.median().unstack("kernel") * 1e3
    pd.set_option("display.width", 250)
    pct = ok.pivot_table(index=CELL, columns=["kernel", "repeat"], values="pct_of_baseline")
    pct.columns = [f"{s}.r{r}" for s, r in pct.columns]
    pct["cublas_us"] = us["cublas"]
    print("% of the vendor library per repeat")
    print(pct.round(1).to_string())
    print("median us over the repeats")
    print(us.round(2).to_string())
    print("energy per launch (mJ), median SM clock (MHz), medians over the repeats (at the cap, time is energy)")
    print(medians[["energy_per_launch_mj", "sm_clock_median_mhz"]].median().unstack("kernel").round(1).to_string())
    median = ok.groupby([*CELL, "kernel"]).pct_of_baseline.median().unstack("kernel")
    print("median %")
    print(median.round(1).to_string())
    for spec in best:
        name, kernels = spec.split("=")
        median[f"best {name}"] = median[kernels.split(",")].max(axis=1)
    print("geometric mean of the medians, per M and dtype, per dtype")
    print(median.groupby(["m", "dtype"]).agg(geomean).round(1).to_string())
    print(median.groupby("dtype").agg(geomean).round(1).to_string())


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
