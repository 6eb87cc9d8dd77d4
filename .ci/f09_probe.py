"""Walk F 09's probes (issue 32), run on the device from the repo root.

    python3 .ci/f09_probe.py ncu [MxNxK ...]     Nsight Compute, one process a shape: cuBLASLt FP8, 07 (M <= 128) or 08
                                                 (above), and 09, one launch each; kernel name, grid, block, duration and
                                                 the counters that say where the time goes, one line a kernel
    python3 .ci/f09_probe.py sweep [MxNxK ...]   every pair-tile plan of kernels/hopper_fp8/pair_plan.py (widths 128 and
                                                 64, K slices 1-4, 6, 8 where they may run), 09's own choice, 07's and
                                                 08's, each cell verified (C poisoned) and timed interleaved with cuBLASLt
                                                 FP8 in the farm's measurer (a plan forced by replacing pair_plan.plan);
                                                 one CSV line a cell
"""

import os
import subprocess
import sys
import tempfile
import time

SHAPES = [  # issue 32's worst cells first: a timeout cuts the tail
    (1024, 512, 3584),
    (128, 4096, 4096),
    (128, 512, 3584),
    (1024, 1024, 8192),
    (1024, 1024, 4096),
    (128, 1024, 4096),
    (128, 3584, 3584),
    (128, 1024, 8192),
    (128, 8192, 8192),
    (128, 4096, 14336),
    (128, 18944, 3584),
    (128, 8192, 28672),
    (1024, 3584, 3584),
    (1024, 14336, 4096),
]
NCU_SHAPES = [(128, 1024, 4096), (128, 512, 3584), (1024, 512, 3584), (1024, 1024, 8192), (128, 4096, 14336), (128, 4096, 4096)]
METRICS = (
    "gpu__time_duration.sum",
    "launch__grid_size",
    "launch__block_size",
    "launch__shared_mem_per_block_dynamic",
    "dram__bytes_read.sum",
    "lts__t_bytes.sum",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
)
SHORT = ("us", "grid", "block", "dyn_smem", "dram_MB", "l2_MB", "l2_pct", "dram_pct", "gmma_pct", "sm_pct")


def _shapes(args: list[str], default: list) -> list:
    return [tuple(int(x) for x in a.split("x")) for a in args] or default


def _stages(m: int) -> list[str]:
    return ["cublaslt_fp8_e4m3", "f_swap_plan_fp8" if m <= 128 else "f_tile_plan_fp8", "f_pair_tile_fp8"]


def ncu(shapes: list) -> None:
    from farm.measure.ncu import find_ncu, parse_raw_csv

    exe = find_ncu()
    print("shape,stage,kernel," + ",".join(SHORT), flush=True)
    for m, n, k in shapes:
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "ncu.csv")
            cmd = [exe, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none", "--cache-control",
                   "all", "--target-processes", "all", "--profile-from-start", "off", "--metrics", ",".join(METRICS),
                   "--log-file", log, sys.executable, __file__, "child", f"{m}x{n}x{k}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if proc.returncode or not os.path.exists(log):  # a counter this ncu rejects: the first two alone
                i = cmd.index("--metrics") + 1
                cmd[i] = ",".join(METRICS[:2])
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if proc.returncode or not os.path.exists(log):
                print(f"{m}x{n}x{k},ncu failed rc={proc.returncode}: {(proc.stdout + proc.stderr)[-600:]}", flush=True)
                continue
            kernels = parse_raw_csv(open(log).read())
        stages, ours = _stages(m), iter(_stages(m)[1:])
        for kern in kernels:
            stage = next(ours) if kern.name.startswith("f_") else stages[0]
            vals = [kern.metrics.get(x, (None, ""))[0] for x in METRICS]
            cells = [f"{vals[0] / 1e3:.2f}" if vals[0] else ""] + [
                "" if v is None else (f"{v / 1e6:.2f}" if "bytes" in x else f"{v:.4g}") for v, x in zip(vals[1:], METRICS[1:])
            ]
            print(f"{m}x{n}x{k},{stage},{kern.name[:90]}," + ",".join(cells), flush=True)


def child(m: int, n: int, k: int) -> None:
    from farm.measure.profile_child import run

    for stage in _stages(m):
        run(stage, m, n, k, "", 20261121)


def sweep(shapes: list) -> None:
    from farm.cells import Cell
    from farm.measure.cell_timer import MeasureOptions
    from farm.measure.gpu import GpuMeasurer
    from farm.measure.stopping import StoppingRule, WarmupRule
    from farm.measure.timing import TimingConfig
    from kernels.hopper_fp8 import pair_plan
    from kernels.registry import stage_named

    options = MeasureOptions(
        timing=TimingConfig(
            target_batch_ms=1,
            warmup=WarmupRule(min_s=0.01, max_s=0.1),
            stopping=StoppingRule(min_samples=5, min_time_s=0.0, max_time_s=0.15, target_noise=0.01),
        )
    )
    measurer = GpuMeasurer(options=options)
    sms = measurer.device_info()["sm_count"]
    chosen_plan = pair_plan.plan
    print("gpu", measurer.device_info().get("name"), "sms", sms, flush=True)
    print("m,n,k,stage,tn,tm,bn,slices,chosen,status,us,cublaslt_us,pct,max_scaled_error", flush=True)

    def line(m, n, k, stage, plan, chosen, row, t0):
        p = ",".join(str(x) for x in (plan.tn, plan.tm, plan.bn, plan.slices)) if plan else ",,,"
        ms, pct = row.get("median_ms"), row.get("pct_of_baseline")
        us = "" if ms is None else f"{ms * 1e3:.2f}"
        base = "" if ms is None or not pct else f"{ms * pct / 100 * 1e3:.2f}"
        print(f"{m},{n},{k},{stage},{p},{chosen},{row['status']},{us},{base},{pct},{row.get('max_scaled_error')}"
              f"  # {time.perf_counter() - t0:.1f}s {(row.get('status_reason') or '')[:200]}", flush=True)

    for m, n, k in shapes:
        blocks = stage_named("f_pair_tile_fp8").launches[0].grid(m, n, sms)[0]
        chosen = chosen_plan(m, n, k, blocks)
        for ref in ("f_swap_plan_fp8", "f_tile_plan_fp8"):
            t0 = time.perf_counter()
            line(m, n, k, ref, None, "", measurer.measure(Cell(ref, m, n, k), "f09sweep"), t0)
        tried = [p for p in pair_plan.pair_candidates(m, n, k, blocks) if p.slices in (1, 2, 3, 4, 6, 8)]
        for p in [chosen] + [p for p in tried if p != chosen]:
            pair_plan.plan = lambda *_, p=p: p
            t0 = time.perf_counter()
            try:
                row = measurer.measure(Cell("f_pair_tile_fp8", m, n, k), "f09sweep")
            finally:
                pair_plan.plan = chosen_plan
            line(m, n, k, "09", p, int(p == chosen), row, t0)


if __name__ == "__main__":
    what, rest = sys.argv[1], sys.argv[2:]
    if what == "child":
        child(*_shapes(rest, [])[0])
    elif what == "ncu":
        ncu(_shapes(rest, NCU_SHAPES))
    else:
        sweep(_shapes(rest, SHAPES))
