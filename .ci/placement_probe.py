"""Is memory placement the run-level noise of issue 26? One cell timed at many placements, in several processes.

Each child process times every probe cell REPEATS times under two conditions, interleaved:
  same    fresh CuPy operands each time, memory pool emptied between (what the farm did: every cell of one size got
          the same pages back, so its repeats shared one placement);
  placed  the same, with a raw cudaMalloc pad of a random size (0-8 GiB in 2 MiB steps) held while the operands are
          allocated: the operands land on other physical pages every time.
A time is the median of 20 replays of a CUDA graph of back-to-back launches (about 2 ms), per launch. If placement is
what a run draws, `placed` varies within a process as much as `same` varies between processes, and the processes'
`placed` means agree. Usage (GPU): python .ci/placement_probe.py OUTDIR [PROCESSES] [REPEATS]
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root: farm

CELLS = [("regblock", 1024, 1024, 1024), ("ldg_super", 1024, 1024, 1024), ("geom_64x64x16_8x8", 256, 256, 256),
         ("tf32_bt", 256, 256, 256), ("h_wmma_pipe_bf16", 2048, 2048, 2048), ("d_wgmma_fp16", 1024, 1024, 1024),
         ("d_warp_specialized_fp16", 2048, 2048, 2080), ("cublas_fp32", 1024, 1024, 1024),
         ("cublas_tf32", 2048, 2048, 2080), ("triton_fp16", 1024, 1024, 1024)]
REPLAYS, BATCH_MS = 20, 2.0


def child(path: str, proc: int, repeats: int) -> None:
    import cupy
    import numpy as np
    import pynvml

    from farm.measure.gpu import GpuMeasurer, _Kernel, library_call

    names = [c[0] for c in CELLS]
    meas = GpuMeasurer(prewarm=tuple(names))
    checks = meas._loaded_checks()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    rng = np.random.default_rng()
    stream = cupy.cuda.Stream(non_blocking=True)
    pool = cupy.get_default_memory_pool()

    def launcher(stage, a, b, c, m, n, k):
        if stage.is_baseline:
            return library_call(stage, a, b, c, m, n, k, meas._vendor_context())
        if stage.name not in meas._compiled:
            meas._compiled[stage.name] = meas._compiling.result(stage)
        operands = {"A": a, "B": b, "C": c}
        if stage.workspace_floats_per_mn:
            operands["W"] = cupy.empty(stage.workspace_floats(m, n), dtype=cupy.float32)
        return _Kernel(stage, meas._compiled[stage.name], meas._device["sm_count"]).launcher(operands, m, n, k), operands

    def timed(body) -> float:
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        body()
        end.record(stream)
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end)

    def one(stage, m, n, k, pad_bytes: int) -> dict:
        pad = cupy.cuda.runtime.malloc(pad_bytes) if pad_bytes else 0
        try:
            with stream:
                a, b = checks.random_operands(stage.dtype, m, n, k, int(rng.integers(2**62)))
                c = cupy.empty((m, n), dtype=cupy.float32)
                made = launcher(stage, a, b, c, m, n, k)
                run = made[0] if isinstance(made, tuple) else made
                run()
                per = timed(run)
                launches = max(1, min(200, round(BATCH_MS / max(per, 1e-4))))
                stream.begin_capture()
                for _ in range(launches):
                    run()
                graph = stream.end_capture()
                for _ in range(3):
                    graph.launch(stream)
                replay = graph.launch
                samples = [timed(lambda: replay(stream)) / launches for _ in range(REPLAYS)]
                ptr = int(a.data.ptr)
                del made, run, a, b, c
            clock = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
        finally:
            pool.free_all_blocks()
            if pad:
                cupy.cuda.runtime.free(pad)
        return {"ms": statistics.median(samples), "ptr_a": ptr, "pad": pad_bytes, "sm_clock": clock}

    stages = {name: meas._stage(name) for name in names}
    # Clocks up before the first sample: two seconds of the probe's own cells.
    until = time.perf_counter() + 2.0
    while time.perf_counter() < until:
        one(stages["cublas_tf32"], 2048, 2048, 2080, 0)
    with open(path, "w") as out:
        for rep in range(repeats):
            for name, m, n, k in CELLS:
                for cond in (("same", "placed") if rep % 2 == 0 else ("placed", "same")):
                    pad = int(rng.integers(0, 4096)) * 2**21 if cond == "placed" else 0
                    row = {"proc": proc, "rep": rep, "cell": f"{name} {m}x{n}x{k}", "cond": cond, **one(stages[name], m, n, k, pad)}
                    if name == "triton_fp16":
                        from farm.measure.extra_baselines import _triton_kernel
                        row["triton_config"] = str(_triton_kernel()[1].best_config)
                    out.write(json.dumps(row) + "\n")
                    out.flush()


def sd(xs: list[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else math.nan


def table(rows: list[dict]) -> str:
    """Per cell: SD of log time (in %) within a process for `same` and `placed` (pooled over processes), between the
    processes' `same` means and between their `placed` means, and each process's `same` mean against the first's."""
    by: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        by[(r["cell"], r["cond"], r["proc"])].append(math.log(r["ms"]))
    cells = list(dict.fromkeys(r["cell"] for r in rows))
    procs = sorted({r["proc"] for r in rows})
    lines = ["SD of log time, %: within one process (pooled), and of the process means; same-means per process vs process 0",
             f"{'cell':<40} {'ms':>8} {'same in':>8} {'placed in':>9} {'same procs':>10} {'placed procs':>12}  same mean by process, %"]
    for cell in cells:
        def pooled(cond):
            ss = df = 0.0
            for p in procs:
                ys = by[(cell, cond, p)]
                if len(ys) > 1:
                    mu = statistics.fmean(ys)
                    ss += sum((y - mu) ** 2 for y in ys)
                    df += len(ys) - 1
            return 100 * math.sqrt(ss / df) if df else math.nan
        means = {cond: [statistics.fmean(by[(cell, cond, p)]) for p in procs if by[(cell, cond, p)]] for cond in ("same", "placed")}
        ms = math.exp(statistics.fmean(means["same"]))
        rel = " ".join(f"{100 * (x - means['same'][0]):+.2f}" for x in means["same"])
        lines.append(f"{cell:<40} {ms:>8.4f} {pooled('same'):>8.2f} {pooled('placed'):>9.2f} {100 * sd(means['same']):>10.2f} "
                     f"{100 * sd(means['placed']):>12.2f}  {rel}")
    configs = defaultdict(set)
    for r in rows:
        if "triton_config" in r:
            configs[r["proc"]].add(r["triton_config"])
    if configs:
        lines.append("triton_fp16 autotune pick per process: " + "; ".join(f"{p}: {sorted(c)}" for p, c in sorted(configs.items())))
    distinct = defaultdict(set)
    for r in rows:
        distinct[(r["cell"], r["cond"])].add(r["ptr_a"])
    lines.append("distinct A addresses per cell and condition (all processes): "
                 + ", ".join(f"{c}={len(distinct[(cells[0], c)])}" for c in ("same", "placed")) + f" (cell {cells[0]})")
    clocks = sorted({r["sm_clock"] for r in rows})
    lines.append(f"SM clocks seen after a measurement: {clocks}")
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    outdir, processes = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 4
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rows = []
    for p in range(processes):
        path = os.path.join(outdir, f"placement-{p}.jsonl")
        began = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--child", path, str(p), str(repeats)], check=False)
        print(f"process {p}: rc {done.returncode}, {time.perf_counter() - began:.1f} s", flush=True)
        if os.path.exists(path):
            with open(path) as f:
                rows += [json.loads(line) for line in f]
    text = table(rows) if rows else "no rows: every process failed (see above)"
    print(text)
    with open(os.path.join(outdir, "placement.txt"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
