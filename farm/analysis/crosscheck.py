"""Our cuBLAS times against an independent harness: triton.testing.do_bench on torch.mm.

do_bench clears the L2 (writes a 256 MB buffer) before each call and times every
call with its own CUDA events, so it matches our cold mode; our hot numbers are
printed beside it. TF32 is switched off in PyTorch so both sides run true FP32.
"""
from __future__ import annotations

from farm.cells import Cell
from farm.measure.cell_timer import MeasureOptions
from farm.measure.timing import TimingConfig


def crosscheck(sizes: list[int]) -> list[dict]:
    import torch
    import triton.testing

    from farm.measure.gpu import GpuMeasurer

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ours = {mode: GpuMeasurer(options=MeasureOptions(timing=TimingConfig(mode=mode))) for mode in ("hot", "cold")}
    out = []
    for n in sizes:
        rows = {mode: m.measure(Cell("cublas_fp32", n, n, n), "crosscheck") for mode, m in ours.items()}
        a = torch.randn(n, n, device="cuda", dtype=torch.float32)
        b = torch.randn(n, n, device="cuda", dtype=torch.float32)
        theirs = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=100, rep=1000, return_mode="median")
        out.append({"size": n, "ours_cold_ms": rows["cold"]["median_ms"], "ours_hot_ms": rows["hot"]["median_ms"],
                    "do_bench_ms": theirs, "cold_vs_do_bench": rows["cold"]["median_ms"] / theirs - 1.0,
                    "verified": rows["cold"]["verified"] and rows["hot"]["verified"]})
        del a, b
    return out
