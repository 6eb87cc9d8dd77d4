"""Walk D's probes, first written for stage 15 (its `time` mode, per-launch graphs, left the tree after 2d07947).
Mode `ncu`: three rounds of one launch each, the last inside an NVTX range "profile" for Nsight Compute (--nvtx
--nvtx-include "profile/"). PROBE_SIZE (default 1024) sets M = N = K, PROBE_SHAPE (M,N,K) any shape; PROBE_STAGES,
the stages; PROBE_DTYPE bf16 or fp16. Mode `floor` (.ci/gpu-session.sh floor): walk D 19 (or PROBE_BASE, a stage's
name less its dtype) beside itself built with each of PROBE_FLOORS (stream_k.cuh; + joins two defines;
PROBE_LOADS_ONCE: past the ring's first pass no loads, so no DRAM, L2 or TMA traffic; PROBE_L2_RESIDENT: the same
loads from K's first k tiles, so no DRAM; PROBE_NO_STORE: no C stores; their C is no product; the epilogue's other
probes of 2026-11-29, a timeline of the blocks' units among them, are at 06f9260) and cuBLAS, in blocks of 1 s, each
series at its own clock, three repeats: at the power cap a launch's time is its energy over the cap, so a floor's %
of cuBLAS bounds what any change to that part of the stage's work could reach.
    python .ci/walkd15_probe.py ncu | python .ci/walkd15_probe.py floor OUTDIR
"""

import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: farm, kernels

import cupy
import numpy as np

from farm.measure.cell_timer import MeasureOptions
from farm.measure.dependent_launch import dependent_launcher
from farm.measure.gpu import GpuMeasurer, library_call
from farm.measure.timing import TimingConfig, time_interleaved
from farm.measure.tma import tensor_map_args
from farm.measure.tolerance import tolerance
from kernels.registry import stage_named

M = N = K = int(os.environ.get("PROBE_SIZE", 1024))
if os.environ.get("PROBE_SHAPE"):  # M,N,K
    M, N, K = (int(x) for x in os.environ["PROBE_SHAPE"].split(","))
DT = os.environ.get("PROBE_DTYPE", "bf16")
STAGES = os.environ.get("PROBE_STAGES", "d_host_plan_bf16,d_tma_store_bf16,d_dependent_launch_bf16").split(",")
LEAN = stage_named(f"{os.environ.get('PROBE_BASE', 'd_lean_k_loop')}_{DT}")
FLOORS = tuple(
    dataclasses.replace(LEAN, name=f"{LEAN.name}_{d.replace('PROBE_', '').lower()}", defines=tuple(d.split("+")))
    for d in os.environ.get("PROBE_FLOORS", "PROBE_LOADS_ONCE,PROBE_L2_RESIDENT").split(",")
)

meas = GpuMeasurer(MeasureOptions(telemetry=False), extra_stages=FLOORS)
# the stages that wait in griddepcontrol.wait before touching global memory
PDL_OK = {name for name in STAGES if meas._stage(name).launches[0].dependent}
checks = meas._loaded_checks()
a, b = checks.random_operands(DT, M, N, K, 1234)
ref = cupy.empty((M, N), dtype=cupy.float32)
blas = library_call(meas._stages[f"cublas_{DT}"], a, b, ref, M, N, K, meas._vendor_context())
blas()
cupy.cuda.runtime.deviceSynchronize()
tol = tolerance(DT, K)


def launchers(name):
    stage = meas._stage(name)
    kern = meas._kernel(stage)
    ((launch, fn),) = kern.functions
    c = cupy.empty((M, N), dtype=cupy.float32)
    ops = {"A": a, "B": b, "C": c}
    if stage.takes_workspace:
        ops["W"] = cupy.empty(max(1, stage.workspace_floats(M, N, K, kern.sm_count)), dtype=cupy.float32)
    planned = {x: int(v) for x, v in launch.plan(M, N, K, kern.sm_count).args.items()}
    named = {"M": M, "N": N, "K": K, **planned, **ops, **tensor_map_args(launch, DT, ops)}
    args = [named[x] for x in launch.args]
    grid, block = launch.grid(M, N, kern.sm_count), launch.block()
    direct = tuple(np.int32(v) if isinstance(v, int) else v for v in args)

    def plain():  # CuPy's launch: no attributes
        fn(grid, block, direct, shared_mem=launch.dynamic_smem)

    pdl = dependent_launcher(fn, grid, block, args, launch.dynamic_smem)
    return c, plain, pdl


def main_ncu():
    kinds = {name: launchers(name) for name in STAGES}
    for rnd in range(3):  # the last round inside the NVTX range that ncu profiles (--nvtx-include "profile/")
        if rnd == 2:
            cupy.cuda.nvtx.RangePush("profile")
        blas()
        for name, (c, plain, pdl) in kinds.items():
            plain()
            if name in PDL_OK:
                pdl()
        cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.nvtx.RangePop()


def energy_sampler(samples, stop):  # (host time, energy counter mJ, SM clock MHz) every 10 ms
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByPciBusId(cupy.cuda.Device().pci_bus_id)
    while not stop.is_set():
        e, clock = pynvml.nvmlDeviceGetTotalEnergyConsumption(h), pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
        samples.append((time.perf_counter(), e, clock))
        stop.wait(0.01)


def spans(batches):  # a block's timed batches run back to back: one span each
    out = []
    for b in batches:
        if out and b.t0 - out[-1][1] < 0.005:
            out[-1][1] = b.t1
        else:
            out.append([b.t0, b.t1])
    return out


def main_floor(outdir):
    import threading

    samples, stop = [], threading.Event()
    threading.Thread(target=energy_sampler, args=(samples, stop), daemon=True).start()
    series = {"baseline": blas}
    for stage in (LEAN, *FLOORS):
        c, plain, _ = launchers(stage.name)
        checks.poison(c)
        plain()
        cupy.cuda.runtime.deviceSynchronize()
        print(stage.name, "against cuBLAS:", checks.compare(c, ref, tol))  # the floors' are expected to fail
        series[stage.name] = plain
    rows = []
    for rnd in range(3):
        timing = time_interleaved(series, TimingConfig(block_s=1.0))
        base_ms = statistics.median(timing.series["baseline"].samples_ms)
        for name, st in timing.series.items():
            ms = statistics.median(st.samples_ms)
            # power from the energy counter over the timed spans (NVML's power reading averages the last 1 s)
            mj = secs = 0.0
            clocks = []
            for t0, t1 in spans(st.batches):
                inside = [x for x in list(samples) if t0 <= x[0] <= t1]
                clocks += [x[2] for x in inside]
                if len(inside) > 1:
                    mj, secs = mj + inside[-1][1] - inside[0][1], secs + inside[-1][0] - inside[0][0]
            watts = mj / secs / 1000 if secs else None
            row = dict(
                shape=f"{M}x{N}x{K}",
                size=M,
                dtype=DT,
                repeat=rnd,
                series=name,
                median_ms=ms,
                pct_of_cublas=100 * base_ms / ms,
                batches=len(st.samples_ms),
                watts=watts,
                sm_clock_mhz=statistics.median(clocks) if clocks else None,
                energy_per_launch_mj=watts * ms if watts else None,
                stop=timing.stop_reason,
            )
            rows.append(row)
            print(json.dumps(row))
    stop.set()
    with open(f"{outdir}/floor-{DT}-{M}x{N}x{K}.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    for name in series:
        pct = [r["pct_of_cublas"] for r in rows if r["series"] == name]
        print(
            f"{M}x{N}x{K} {DT} {name:34s} % of cuBLAS, repeats {' '.join(f'{p:.1f}' for p in pct)}, median {statistics.median(pct):.1f}"
        )


if __name__ == "__main__":
    t0 = time.time()
    if sys.argv[1] == "floor":
        main_floor(sys.argv[2])
    else:
        main_ncu()
    print(f"probe {sys.argv[1]} {time.time() - t0:.1f} s")
