"""walkd15 (.ci/gpu-session.sh walkd15; H200, 1024^3 BF16): per-launch time in CUDA graphs of 100 back-to-back
launches for 11, 12, cuBLAS and 15, 15 launched both plainly (CuPy) and as a programmatic dependent launch (its
harness launch), three rounds; every output checked against cuBLAS's; and whether cuBLAS's own captured graph carries
programmatic edges (edge types, node types, a verbose DOT dump). Mode `ncu`: three rounds of one launch each, the last
inside an NVTX range "profile" for Nsight Compute (--nvtx --nvtx-include "profile/"). PROBE_SIZE (default 1024)
sets M = N = K (gpu-session's issue-mix step: 4096, where the cubes run at the power cap); PROBE_STAGES, the stages.
    python .ci/walkd15_probe.py time OUTDIR | python .ci/walkd15_probe.py ncu
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: farm, kernels

import cupy
import numpy as np
from cuda.bindings import driver

from farm.measure.cell_timer import MeasureOptions
from farm.measure.dependent_launch import dependent_launcher
from farm.measure.gpu import GpuMeasurer, library_call
from farm.measure.tma import tensor_map_args
from farm.measure.tolerance import tolerance

M = N = K = int(os.environ.get("PROBE_SIZE", 1024))
DT = "bf16"
STAGES = os.environ.get("PROBE_STAGES", "d_host_plan_bf16,d_tma_store_bf16,d_dependent_launch_bf16").split(",")

meas = GpuMeasurer(MeasureOptions(telemetry=False))
# the stages that wait in griddepcontrol.wait before touching global memory
PDL_OK = {name for name in STAGES if meas._stage(name).launches[0].dependent}
checks = meas._loaded_checks()
a, b = checks.random_operands(DT, M, N, K, 1234)
ref = cupy.empty((M, N), dtype=cupy.float32)
blas = library_call(meas._stages["cublas_bf16"], a, b, ref, M, N, K, meas._vendor_context())
blas()
cupy.cuda.runtime.deviceSynchronize()
tol = tolerance(DT, K)


def launchers(name):
    kern = meas._kernel(meas._stage(name))
    stage = meas._stage(name)
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
    return c, plain, pdl, planned, grid


def graph_of(fn, n):
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        for _ in range(n):
            fn()
        g = s.end_capture()
    g.upload(s)
    return g, s


def per_launch_us(fn, n=100, reps=30):
    g, s = graph_of(fn, n)
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    out = []
    for _ in range(reps + 3):
        e0.record(s)
        g.launch(s)
        e1.record(s)
        e1.synchronize()
        out.append(cupy.cuda.get_elapsed_time(e0, e1) * 1e3 / n)
    return float(np.median(out[3:])), g


def main_time(outdir):
    rows = []
    # cuBLAS's captured graph: programmatic edges? (edge data and a verbose DOT dump of a 3-call capture)
    try:
        st = cupy.cuda.Stream(non_blocking=True)
        hs = driver.CUstream(st.ptr)
        with st:
            (err,) = driver.cuStreamBeginCapture(hs, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
            for _ in range(3):
                blas()
            err, graph = driver.cuStreamEndCapture(hs)
        print("capture", err)
        err, nodes, count = driver.cuGraphGetNodes(graph, 64)
        print("nodes", count, [str(driver.cuGraphNodeGetType(nd)[1]) for nd in nodes[:count]])
        res = driver.cuGraphGetEdges(graph, 64)
        print("edges", res[0], res[-1])
        for i in range(res[-1]):
            e = res[3][i]
            print("edge", i, "type", e.type, "from_port", e.from_port, "to_port", e.to_port)
        print("dot", driver.cuGraphDebugDotPrint(graph, f"{outdir}/cublas_graph.dot".encode(), 1 | 4 | 512 | 16384))
    except Exception as exc:  # noqa: BLE001
        print("graph inspection failed", type(exc).__name__, exc)
    kinds = {}
    for name in STAGES:
        kinds[name] = launchers(name)
    for rnd in range(3):  # rounds, so clocks drift over all series alike
        t, _ = per_launch_us(blas)
        rows.append(("cublas", "plain", rnd, t, None))
        for name, (c, plain, pdl, planned, grid) in kinds.items():
            for how, fn in (("plain", plain), ("pdl", pdl)):
                if how == "pdl" and name not in PDL_OK:
                    continue
                checks.poison(c)
                t, _ = per_launch_us(fn)
                cupy.cuda.runtime.deviceSynchronize()
                ok = checks.compare(c, ref, tol)
                rows.append((name, how, rnd, t, ok.get("verified")))
    for n_launch in (1, 2, 10):  # the fixed cost of a graph launch vs per-kernel cost
        t, _ = per_launch_us(blas, n_launch, 50)
        rows.append(("cublas", f"graph{n_launch}", 0, t, None))
        t, _ = per_launch_us(kinds["d_host_plan_bf16"][1], n_launch, 50)
        rows.append(("d_host_plan_bf16", f"graph{n_launch}", 0, t, None))
    print("per-launch us (graph of 100 launches, median of 30), verified against cuBLAS")
    for r in rows:
        print(f"{r[0]:20s} {r[1]:8s} round {r[2]}  {r[3]:7.3f} us  verified={r[4]}")
    base = np.median([r[3] for r in rows if r[0] == "cublas" and r[1] == "plain"])
    print(f"cuBLAS median {base:.3f} us")
    for name in STAGES:
        for how in ("plain", "pdl"):
            ts = [r[3] for r in rows if r[0] == name and r[1] == how]
            if ts:
                print(
                    f"{name:20s} {how:6s} median {np.median(ts):.3f} us  {100 * base / np.median(ts):5.1f} % of cuBLAS  grid {kinds[name][4]} plan {kinds[name][3]}"
                )


def main_ncu():
    kinds = {name: launchers(name) for name in STAGES}
    for rnd in range(3):  # the last round inside the NVTX range that ncu profiles (--nvtx-include "profile/")
        if rnd == 2:
            cupy.cuda.nvtx.RangePush("profile")
        blas()
        for name, (c, plain, pdl, *_) in kinds.items():
            plain()
            if name in PDL_OK:
                pdl()
        cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.nvtx.RangePop()


if __name__ == "__main__":
    t0 = time.time()
    if sys.argv[1] == "time":
        main_time(sys.argv[2])
    else:
        main_ncu()
    print(f"probe {sys.argv[1]} {time.time() - t0:.1f} s")
