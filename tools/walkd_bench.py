"""Walk D on this machine's GPU through the farm's own measurer: verify each stage at several
shapes, then time it against cuBLAS and torch.mm at the given sizes; a table last.

    python tools/walkd_bench.py [--stages d_tma_bf16,...] [--sizes 2048,4096,8192] [--out rows.json]
    python tools/walkd_bench.py --profile 8192 --stages ...   # one launch of each, for ncu
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farm.measure.cell_timer import MeasureOptions  # noqa: E402
from farm.cells import Cell  # noqa: E402
from farm.measure.gpu import GpuMeasurer  # noqa: E402
from farm.measure.stopping import StoppingRule, WarmupRule  # noqa: E402
from farm.measure.timing import TimingConfig  # noqa: E402
from kernels.registry import select  # noqa: E402

VERIFY = [(256, 256, 256), (1000, 1000, 1000), (200, 264, 72), (129, 520, 4104), (127, 255, 33)]
OPTIONS = MeasureOptions(timing=TimingConfig(
    target_batch_ms=5, warmup=WarmupRule(min_s=0.05, max_s=1.0),
    stopping=StoppingRule(min_samples=5, min_time_s=0.1, max_time_s=1.5, target_noise=0.01)))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--stages", default="")
    p.add_argument("--sizes", default="2048,4096,8192")
    p.add_argument("--out", default="")
    p.add_argument("--profile", type=int, default=0, help="launch each stage once at this size^3, nothing else")
    args = p.parse_args()
    stages = select(args.stages.split(",") if args.stages else None, None if args.stages else ["hopper_d"])
    if args.profile:
        return profile(stages, args.profile)
    measurer = GpuMeasurer(options=OPTIONS)
    print(measurer.device_info()["gpu_name"], measurer.device_info()["arch"], flush=True)
    rows, good = [], []
    for stage in stages:
        ok = True
        for shape in VERIFY:
            row = measurer.measure(Cell(stage.name, *shape), "walkd-bench")
            rows.append(row)
            print(f"verify {stage.name:<26} {'x'.join(map(str, shape)):<14} {row['status']:<20} "
                  f"{row.get('max_scaled_error')} {(row.get('status_reason') or '')[:300]}", flush=True)
            ok &= row["status"] in ("ok", "skipped")
        if ok:
            good.append(stage)
    table = []
    for size in (int(s) for s in args.sizes.split(",") if s):
        torch = {d: measurer.measure(Cell(f"torch_{d}", size, size, size), "walkd-bench") for d in ("bf16", "fp16")}
        rows += torch.values()
        for stage in good:
            row = measurer.measure(Cell(stage.name, size, size, size), "walkd-bench")
            rows.append(row)
            t = torch[stage.dtype]
            pct_torch = 100 * t["median_ms"] / row["median_ms"] if row["status"] == "ok" and t["status"] == "ok" else None
            table.append((stage.name, size, row["status"], row.get("median_ms"), row.get("tflops"), row.get("pct_of_baseline"), pct_torch,
                          row.get("registers")))
            print(table[-1], flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, default=str, indent=1))
    print(f"\n{'stage':<26} {'size':>5} {'status':<10} {'ms':>8} {'TFLOPS':>7} {'%cuBLAS':>8} {'%torch':>7} regs")
    for name, size, status, ms, tf, pc, pt, regs in table:
        f = lambda v, p: "-" if v is None else f"{v:.{p}f}"  # noqa: E731
        print(f"{name:<26} {size:>5} {status:<10} {f(ms, 3):>8} {f(tf, 1):>7} {f(pc, 1):>8} {f(pt, 1):>7} {regs}")
    return 0


def profile(stages, size: int) -> int:
    import cupy

    from farm.compiler import compile_timed
    from farm.inputs import random_operands
    from farm.measure import _Kernel

    measurer = GpuMeasurer(options=OPTIONS)
    info = measurer.device_info()
    for stage in stages:
        a, b = random_operands(stage.dtype, size, size, size, 0)
        c = cupy.empty((size, size), dtype=cupy.float32)
        compiled = compile_timed(stage.source_path, stage.compile_arch(info["arch"]), stage.kernel_names)
        _Kernel(stage, compiled, info["sm_count"]).launcher({"A": a, "B": b, "C": c}, size, size, size)()
    cupy.cuda.get_current_stream().synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
