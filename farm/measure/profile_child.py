"""The process Nsight Compute profiles: `python -m farm.measure.profile_child --stage S --m M --n N --k K`.

It compiles the stage, makes fresh operands, launches it twice as warm-up, then once inside
cudaProfilerStart/Stop, and tells its parent (farm/measure/profiler.py) on stdout which kernels
it launched, or why it failed.
"""

from __future__ import annotations

import argparse
import json
import sys

CHILD_MARKER = "GEMM_FARM_PROFILE_CHILD "
CHILD_ERROR = "GEMM_FARM_PROFILE_ERROR "


def run(stage_name: str, m: int, n: int, k: int, arch: str, seed: int) -> int:
    """Compile, prepare, warm up, then launch the stage once inside cudaProfilerStart/Stop."""
    try:
        import cupy

        from farm.measure.checks import FP8, Checks, compile_checks, new_scales, scale_args
        from kernels.registry import stage_named

        stage = stage_named(stage_name)
        cupy.cuda.Device(0).use()
        props = cupy.cuda.runtime.getDeviceProperties(0)
        if not arch:
            arch = f"sm_{props['major']}{props['minor']}"
        scales = new_scales() if stage.dtype in FP8 else None
        a, b = Checks(compile_checks(arch).module, props["multiProcessorCount"]).random_operands(
            stage.dtype, m, n, k, seed, scales
        )
        c = cupy.empty((m, n), dtype=cupy.float32)
        if stage.is_baseline:
            from farm.measure.gpu import library_call

            run = library_call(stage, a, b, c, m, n, k, scales=scales)
            launches: list[str] = []
        else:
            from farm.measure.compiler import compile_stage
            from farm.measure.gpu import _Kernel

            operands = {"A": a, "B": b, "C": c, **scale_args(scales)}
            if stage.takes_workspace:
                operands["W"] = cupy.empty(
                    stage.workspace_floats(m, n, k, props["multiProcessorCount"]), dtype=cupy.float32
                )
            compiled = compile_stage(stage, arch)
            run = _Kernel(stage, compiled, props["multiProcessorCount"]).launcher(operands, m, n, k)
            launches = [launch.kernel for launch in stage.launches]
        stream = cupy.cuda.get_current_stream()
        for _ in range(2):  # warm-up, outside the profiled range
            run()
        stream.synchronize()
        cupy.cuda.runtime.profilerStart()
        run()
        stream.synchronize()
        cupy.cuda.runtime.profilerStop()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which records it
        print(CHILD_ERROR + json.dumps({"reason": f"{type(exc).__name__}: {exc}"[:2000]}), flush=True)
        return 3
    print(CHILD_MARKER + json.dumps({"launches": launches, "arch": arch}), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m farm.measure.profile_child", description="internal: the process ncu profiles"
    )
    p.add_argument("--stage", required=True)
    for dim in ("--m", "--n", "--k"):
        p.add_argument(dim, type=int, required=True)
    p.add_argument("--arch", default="")
    p.add_argument("--seed", type=int, default=20261121)
    args = p.parse_args(argv)
    return run(args.stage, args.m, args.n, args.k, args.arch, args.seed)


if __name__ == "__main__":
    sys.exit(main())
