"""The process Nsight Compute profiles for tests/test_gpu_cold.py: `python tests/gpu_cold_probe.py --size S`.

It makes an FP32 GEMM of S x S x S with the `naive` stage, warms L2 with two launches outside the profiled range,
then, inside cudaProfilerStart/Stop, launches it once warm and once after cold mode's flush (CellTimer.flush,
FLUSH_L2_MULTIPLE x the L2's size). ncu then reads each launch's DRAM bytes; stdout tells the parent the
operand bytes and the flush size.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, required=True)
    args = parser.parse_args()
    import cupy

    from farm.measure.cell_timer import CellTimer, MeasureOptions
    from farm.measure.checks import Checks, compile_checks
    from farm.measure.compiler import compile_stage
    from farm.measure.gpu import _Kernel
    from farm.measure.timing import TimingConfig
    from kernels.registry import stage_named

    props = cupy.cuda.runtime.getDeviceProperties(0)
    arch, sms, l2 = f"sm_{props['major']}{props['minor']}", props["multiProcessorCount"], props["l2CacheSize"]
    stage, s = stage_named("naive"), args.size
    a, b = Checks(compile_checks(arch).module, sms).random_operands("fp32", s, s, s, seed=7)
    c = cupy.empty((s, s), dtype=cupy.float32)
    run = _Kernel(stage, compile_stage(stage, arch), sms).launcher({"A": a, "B": b, "C": c}, s, s, s)
    timer = CellTimer(
        MeasureOptions(timing=TimingConfig(mode="cold"), telemetry=False), cupy.cuda.Device(0).pci_bus_id, l2
    )
    stream = cupy.cuda.get_current_stream()
    run()
    run()
    stream.synchronize()
    cupy.cuda.runtime.profilerStart()
    run()  # warm: the operands are in L2
    timer.flush()
    run()  # cold: the first launch after the flush
    stream.synchronize()
    cupy.cuda.runtime.profilerStop()
    print(
        "PROBE "
        + json.dumps(
            {
                "operand_bytes": a.nbytes + b.nbytes,
                "l2_bytes": l2,
                "flush_bytes": timer.flush_bytes,
                "gpu": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
