"""Issue 31's cross-check with its timers swapped: is it the harness or the library call that makes the farm's cuBLAS
slower than torch.mm at some shapes (H100, BF16 2048^3: 1.065 and 1.068 in the cross-checks of h100-cubese and -g)?

Per precision and cube edge, one after another on one card:
  - torch.mm (FP32 out) and the farm's cuBLAS (cublasGemmEx on the farm's handle and workspace), each under Triton's
    do_bench_cudagraph at rep 200 ms (as `farm crosscheck`) and at rep 1000 ms, NVML's SM clock and power sampled
    every 10 ms while each ran;
  - cublas_<p> and torch_<p> (the same torch.mm), each timed by the farm (GpuMeasurer, hot, 2 s, as `farm crosscheck`),
    their rows carrying the farm's own clock, power and temperature, and torch_<p>'s its interleaved cuBLAS (its
    baseline, in the same cell); which of the two cells runs first alternates with each repeat (--repeats);
  - the kernels each call launches (torch.profiler, CUPTI), once.
The same libraries apart under both timers: the call (the algorithm picked). Apart under one timer only: the harness.

Usage: python3 .ci/timer_swap.py [--sizes 1024,2048,4096,8192] [--precisions bf16,fp16] > timers.md
"""

from __future__ import annotations

import argparse
import statistics
import threading

import cupy
import pynvml
import torch
import triton.testing

from farm.analysis.crosscheck import _torch_call
from farm.cells import Cell
from farm.measure.cell_timer import MeasureOptions
from farm.measure.gpu import GpuMeasurer, library_call
from farm.measure.stopping import StoppingRule
from farm.measure.timing import TimingConfig


class Sampler:
    """NVML's SM clock (MHz) and board power (W) every 10 ms while the block inside `with` runs."""

    def __init__(self, handle):
        self.handle, self.clocks, self.watts = handle, [], []

    def __enter__(self):
        self.clocks, self.watts, self._stop = [], [], threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.01):
            self.clocks.append(pynvml.nvmlDeviceGetClockInfo(self.handle, pynvml.NVML_CLOCK_SM))
            self.watts.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        if not self.clocks:
            return "-"
        return f"{statistics.median(self.clocks):.0f} MHz {statistics.median(self.watts):.0f} W"


def farm_cublas_call(measurer: GpuMeasurer, precision: str, n: int):
    """The farm's cuBLAS GEMM on fresh operands, as a callable that launches on torch's current stream (so that
    do_bench_cudagraph's capture records it)."""
    spec = measurer._stage(f"cublas_{precision}")
    a, b = measurer._loaded_checks().random_operands(spec.dtype, n, n, n, seed=7)
    c = cupy.empty((n, n), dtype=cupy.float32)
    call = library_call(spec, a, b, c, n, n, n, measurer._vendor_context())

    def run() -> None:
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            call()

    return run


def kernels(run) -> str:
    """The CUDA kernels one call of `run` launches (after a warm call), by name."""
    run()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    return "; ".join(sorted({e.name[:90] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1024,2048,4096,8192")
    parser.add_argument("--precisions", default="bf16,fp16")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    print(f"card: {pynvml.nvmlDeviceGetName(handle)} {pynvml.nvmlDeviceGetUUID(handle)}\n")
    measurer = GpuMeasurer(
        options=MeasureOptions(timing=TimingConfig(mode="hot", stopping=StoppingRule(max_time_s=2.0)))
    )
    print(
        "| p | n | torch db200 us | cuBLAS db200 us | torch db1000 us | cuBLAS db1000 us | torch farm us | cuBLAS farm us |"
        " cuBLAS/torch db200 | db1000 | farm | in torch's cell | clocks db1000 torch / cuBLAS | farm torch / cuBLAS |"
    )
    print("|---" * 14 + "|")
    names = []
    for repeat, precision, n in (
        (r, p, int(n)) for r in range(args.repeats) for p in args.precisions.split(",") for n in args.sizes.split(",")
    ):
        calls = {"torch": _torch_call(precision, n, n, n), "cuBLAS": farm_cublas_call(measurer, precision, n)}
        if repeat == 0:
            names += [f"{precision} {n} {lib}: {kernels(run)}" for lib, run in calls.items()]
        bench, clocks = {}, {}
        for rep in (200, 1000):
            for lib, run in calls.items():
                with Sampler(handle) as sampled:
                    bench[lib, rep] = 1000 * triton.testing.do_bench_cudagraph(run, rep=rep, return_mode="median")
                clocks[lib, rep] = sampled.summary()
        order = list(calls)[:: 1 - 2 * (repeat % 2)]  # torch's cell first, then cuBLAS's first
        rows = {lib: measurer.measure(Cell(f"{lib.lower()}_{precision}", n, n, n), "timers") for lib in order}
        farm = {lib: 1000 * r["median_ms"] if r["status"] == "ok" else None for lib, r in rows.items()}
        farm_clocks = {
            lib: f"{r.get('sm_clock_median_mhz') or 0:.0f} MHz {r.get('power_mean_w') or 0:.0f} W "
            f"{r.get('temp_max_c') or 0:.0f} C{' blocks' if ', in blocks of' in (r.get('stop_reason') or '') else ''}"
            for lib, r in rows.items()
        }

        def ratio(x, y):
            return f"{x / y:.3f}" if x and y else "-"

        print(
            f"| {precision} | {n}, {order[0]} cell first | {bench['torch', 200]:.2f} | {bench['cuBLAS', 200]:.2f} | "
            f"{bench['torch', 1000]:.2f} | {bench['cuBLAS', 1000]:.2f} | "
            f"{farm['torch'] or 0:.2f} | {farm['cuBLAS'] or 0:.2f} | "
            f"{ratio(bench['cuBLAS', 200], bench['torch', 200])} | {ratio(bench['cuBLAS', 1000], bench['torch', 1000])} | "
            f"{ratio(farm['cuBLAS'], farm['torch'])} | {(rows['torch'].get('pct_of_baseline') or 0) / 100:.3f} | "
            f"{clocks['torch', 1000]} / {clocks['cuBLAS', 1000]} | "
            f"{farm_clocks['torch']} / {farm_clocks['cuBLAS']} |",
            flush=True,
        )
        for lib, r in rows.items():
            if r["status"] != "ok":
                print(f"  farm {lib}: {r['status']}: {r.get('status_reason')}")
    print("\nkernels launched:")
    print("\n".join(names))


if __name__ == "__main__":
    main()
