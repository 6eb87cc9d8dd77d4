"""walkd15 (.ci/gpu-session.sh walkd15; H200, 1024^3 BF16): per-launch time in CUDA graphs of 100 back-to-back
launches for 11, 12, cuBLAS and 15, 15 launched both plainly (CuPy) and as a programmatic dependent launch (its
harness launch), three rounds; every output checked against cuBLAS's; and whether cuBLAS's own captured graph carries
programmatic edges (edge types, node types, a verbose DOT dump). Mode `ncu`: three rounds of one launch each, the last
inside an NVTX range "profile" for Nsight Compute (--nvtx --nvtx-include "profile/"). PROBE_SIZE (default 1024)
sets M = N = K (gpu-session's issue-mix step: 4096, where the cubes run at the power cap), PROBE_SHAPE (M,N,K) any
shape; PROBE_STAGES, the stages; PROBE_DTYPE bf16 or fp16. Mode `floor` (gpu-session's floor step): walk D 19 (or
PROBE_BASE, a stage's name less its dtype) beside itself built with each of PROBE_FLOORS (stream_k.cuh; + joins two
defines; PROBE_LOADS_ONCE: past the ring's first pass no loads, so no DRAM, L2 or TMA traffic; PROBE_L2_RESIDENT: the
same loads from K's first k tiles, so no DRAM; PROBE_NO_STORE: no C stores; their C is no product; the epilogue's
other probes of 2026-11-29 are at 06f9260) and cuBLAS, in blocks of 1 s, each series at its own clock, three repeats:
at the power cap a launch's time is its energy over the cap, so a floor's % of cuBLAS bounds what any change to that
part of the stage's work could reach. Mode `timeline` (PROBE_FLOORS=PROBE_TIMELINE): where each block's time went.
    python .ci/walkd15_probe.py time OUTDIR | python .ci/walkd15_probe.py ncu | python .ci/walkd15_probe.py floor|timeline OUTDIR
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
from cuda.bindings import driver

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
    return c, plain, pdl, planned, grid, kern


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
        for name, (c, plain, pdl, planned, grid, _) in kinds.items():
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
        c, plain, *_ = launchers(stage.name)
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


def main_timeline(outdir):
    """PROBE_FLOORS=PROBE_TIMELINE: the stage's blocks' timeline (stream_k.cuh's probe_timeline) over one launch
    after 2 s of back-to-back launches (at the cap), five times: where each block's time went."""
    (stage,) = FLOORS  # its defines (+ between two) include PROBE_TIMELINE
    c, plain, *_, kern = launchers(stage.name)
    module = kern._module  # the module that runs (each _kernel call loads its own)
    ptr = module.get_global_var("_ZN8stream_k14probe_timelineE")
    table = cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(ptr, 256 * 2 * 32 * 4 * 8, module), 0)
    began = time.perf_counter()
    while time.perf_counter() - began < 2.0:
        for _ in range(20):
            plain()
        cupy.cuda.runtime.deviceSynchronize()
    KT = -(-K // 64)
    runs = []
    for _ in range(5):
        table.memset(0, 256 * 2 * 32 * 4 * 8)
        e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
        e0.record()
        plain()
        e1.record()
        e1.synchronize()
        t = np.empty((256, 2, 32, 4), dtype=np.uint64)
        table.copy_to_host(t.ctypes.data, t.nbytes)
        runs.append(t)
        for _ in range(20):  # back to the cap's steady state
            plain()
        cupy.cuda.runtime.deviceSynchronize()
        used = t[..., 0] > 0
        start, end = t[..., 0][used].min(), t[..., 2][used].max()
        span = (end - start) / 1e3
        rel = (t[..., :3].astype(np.int64) - int(start)) / 1e3  # us from the first unit's start
        whole = used & ((t[..., 3] & 0xFFFF) - ((t[..., 3] >> 16) & 0xFFFF) == KT)
        part = used & ~whole
        kloop, epi = rel[..., 1] - rel[..., 0], rel[..., 2] - rel[..., 1]
        ends = np.array([rel[b, cc, used[b, cc], 2].max() for b in range(256) for cc in range(2) if used[b, cc].any()])
        gaps = [
            rel[b, cc, u + 1, 0] - rel[b, cc, u, 2]
            for b in range(256)
            for cc in range(2)
            for u in range(31)
            if used[b, cc, u + 1]
        ]
        busy = float(((rel[..., 2] - rel[..., 0]) * used).sum())
        print(
            f"{M}x{N}x{K} {DT} launch {cupy.cuda.get_elapsed_time(e0, e1) * 1e3:.1f} us, units' span {span:.1f} us; "
            f"whole tiles {int(whole.sum()) // 2}: k loop {kloop[whole].mean():.2f} us, C out {epi[whole].mean():.2f} us "
            f"(max {epi[whole].max():.2f}); shared parts {int(part.sum()) // 2}: k loop {kloop[part].mean():.2f}, fix-up and C "
            f"{epi[part].mean():.2f} us (max {epi[part].max():.2f}); gaps between units {np.mean(gaps):.2f} us "
            f"(max {np.max(gaps):.2f}); C out {100 * float((epi * used).sum()) / busy:.2f} % of busy time; warpgroups "
            f"end at {ends.min():.1f} / {np.median(ends):.1f} / {ends.max():.1f} us (min / median / max), idle at the "
            f"end {100 * float((ends.max() - ends).sum()) / (len(ends) * ends.max()):.2f} %; the last block's first unit began at {rel[:, :, 0, 0][used[:, :, 0]].max():.2f} us"
        )
    np.save(f"{outdir}/timeline-{stage.name}-{M}x{N}x{K}.npy", np.stack(runs))


if __name__ == "__main__":
    t0 = time.time()
    if sys.argv[1] == "time":
        main_time(sys.argv[2])
    elif sys.argv[1] == "floor":
        main_floor(sys.argv[2])
    elif sys.argv[1] == "timeline":
        main_timeline(sys.argv[2])
    else:
        main_ncu()
    print(f"probe {sys.argv[1]} {time.time() - t0:.1f} s")
