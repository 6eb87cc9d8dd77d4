"""The real measurer: compile, verify and time one cell on this process's GPU.

Kernel cells: compile for this chip's own sm_XX (cached), check against cuBLAS of the
same precision class with C poisoned, then time kernel and baseline interleaved.
Baseline cells (cuBLAS, and PyTorch / Triton where installed): checked against an FP64
product of the same inputs, then timed.
A CUDA fault poisons the context: the row says so and needs_restart() turns True.
"""

from __future__ import annotations

import datetime
import time

import numpy as np

from farm.cells import Cell
from farm.data import limits
from farm.data.rows import cell_row
from farm.data.schema import TELEMETRY_KEY
from farm.measure.cell_timer import CellTimer, MeasureOptions, PostCheck
from farm.measure.checks import FP8, KERNELS as CHECK_KERNELS, SOURCE as CHECK_SOURCE, Checks, new_scales, scale_args
from farm.measure.compiler import BackgroundCompiler, Compiled, CompileError, code_sha256
from farm.measure.cublas import GEMMS, Unavailable, VendorContext
from farm.measure.device import describe_device
from farm.measure.extra_baselines import LIBRARIES, launcher, unavailable_reason
from farm.measure.sizing import check_fp64, memory_skip_reason, reference_plan
from farm.measure.tma import tensor_map_args
from farm.measure.tolerance import tolerance
from kernels.registry import catalog, stage_named
from kernels.stage import Baseline, Measured, Stage

_DEFAULT_SMEM_LIMIT = 48 * 1024
# Where a kernel's own baseline cannot run here, these libraries may stand in (same precision class, catalog
# order); never our own Triton kernel: a kernel's % is against a vendor or framework library.
FALLBACK_LIBRARIES = ("cuBLAS", "cuBLASLt", "PyTorch")


def library_call(spec: Baseline, a, b, out, m: int, n: int, k: int, vendor: VendorContext | None = None, scales=None):
    """A no-argument callable computing out = a.b with a baseline's library on the current stream: cuBLAS or
    cuBLASLt through `vendor` (this worker's handles and workspace; a new one when None), or PyTorch /
    Triton. FP8: `scales` holds A's and B's dequantisation factors (farm/measure/checks.py). Raises Unavailable
    where this host cannot run it."""
    if spec.library in LIBRARIES:
        return launcher(spec, a, b, out, m, n, k, scales)
    context = vendor or VendorContext.on_current_device()
    gemm = (
        GEMMS[spec.library](context, spec.compute_type, spec.dtype, m, n, k)
        if scales is None
        else GEMMS[spec.library](context, spec.compute_type, spec.dtype, m, n, k, scales=scales)
    )
    call = lambda: gemm(a, b, out)  # noqa: E731
    call.algorithm = lambda: gemm.algorithm  # noqa: E731 - what the library chose, asked for a baseline row only
    return call


class _Kernel:
    """A stage's compiled kernels, loaded afresh for one cell, and what ptxas said about them.

    A fresh module per cell means a `__device__` variable starts from its initial value in every cell, so state a
    kernel keeps across launches never reaches the next cell (the post-timing check catches it within the cell).
    CuPy's RawModule would not do: it memoizes the module it loads per path, so we load through its Module class
    (cuModuleLoad; unloaded when collected) and read the functions' attributes from the driver.
    """

    def __init__(self, stage: Stage, compiled: Compiled, sm_count: int):
        from cupy.cuda import function
        from cupy_backends.cuda.api import driver

        self.compile_seconds = compiled.seconds
        compiled = compiled.module
        self._module = function.Module()
        self._module.load_file(str(compiled.cubin_path))
        self.functions = []
        for launch in stage.launches:
            fn = self._module.get_function(compiled.lowered_names[launch.kernel])
            if launch.dynamic_smem > _DEFAULT_SMEM_LIMIT:
                driver.funcSetAttribute(
                    fn.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, launch.dynamic_smem
                )
            self.functions.append((launch, fn))

        def attribute(name: str) -> int:  # the largest over the stage's kernels
            return max(driver.funcGetAttribute(getattr(driver, name), fn.ptr) for _, fn in self.functions)

        # Registers and memory from the loaded functions: what actually runs on this GPU.
        report = compiled.resources.values()
        first = stage.launches[0]
        self.columns = {
            "compile_options": " ".join(compiled.options),
            "code_sha256": code_sha256(compiled.cubin_path.read_bytes()),
            "registers": attribute("CU_FUNC_ATTRIBUTE_NUM_REGS"),
            "static_smem_bytes": attribute("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"),
            "dynamic_smem_bytes": first.dynamic_smem,
            "local_bytes": attribute("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"),
            "spill_bytes": sum(r.spill_store_bytes + r.spill_load_bytes for r in report)
            if len(report) == len(stage.kernel_names)
            else None,
            "threads_per_block": int(np.prod(first.block())),
            "compile_seconds": self.compile_seconds,
        }
        self.splits = max(l.splits for l in stage.launches)
        self.dtype = stage.dtype
        self.sm_count = sm_count

    def launcher(self, operands: dict, m: int, n: int, k: int):
        """A no-argument callable launching every kernel of the stage on the current stream."""
        ints = {"M": np.int32(m), "N": np.int32(n), "K": np.int32(k), "SPLITS": np.int32(self.splits)}
        calls = []
        for launch, fn in self.functions:
            named = {**ints, **operands, **tensor_map_args(launch, self.dtype, operands)}
            calls.append(
                (
                    fn,
                    launch.grid(m, n, self.sm_count),
                    launch.block(),
                    tuple(named[a] for a in launch.args),
                    launch.dynamic_smem,
                )
            )

        def run() -> None:
            for fn, grid, block, args, smem in calls:
                fn(grid, block, args, shared_mem=smem)

        return run


class _Steps:
    """Seconds each named step took since the one before (a measurer's start-up, for the sweep's log)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = now - self._last
        self._last = now


class GpuMeasurer:
    """Implements farm.cells.Measurer on the current CUDA device of this process."""

    def __init__(
        self,
        options: MeasureOptions,
        prewarm: tuple[str, ...] = (),
        ordinal: int = 0,
        extra_stages: tuple[Measured, ...] = (),
    ):
        """`options`: how cells are measured (a plan's [measure] table, validated where the plan was read).
        `prewarm`: stage names to compile for this chip in the background, on the host's cores, while the
        first cells run (a cell whose stage is still compiling waits for it). `extra_stages`: stages that cells may
        name beside the catalog's, replacing a catalog stage of the same name (the GPU tests' planted cheats; a paired
        sweep's arm b, another tree's kernels: farm/cluster/worker.py)."""
        step = _Steps()
        import cupy

        step.done("CuPy import")
        cupy.cuda.Device(ordinal).use()
        cupy.cuda.runtime.free(0)  # the CUDA context, here rather than inside the first cell
        step.done("CUDA context")
        self._device = describe_device(ordinal)
        major, minor = (int(x) for x in self._device["compute_capability"].split("."))
        self._cc = 10 * major + minor
        step.done("device facts")
        self._timer = CellTimer(options, cupy.cuda.Device(ordinal).pci_bus_id, self._device["l2_bytes"])
        step.done("NVML sampler")
        self._stages = {s.name: s for s in (*catalog(), *extra_stages)}
        self._compiled: dict[str, Compiled] = {}
        self._vendor: VendorContext | None = None
        self._poisoned = False
        self._rng = np.random.default_rng()
        # The harness's own kernels first: every cell needs them.
        self._compiling = BackgroundCompiler(
            self._device["arch"],
            [self._stage(name) for name in prewarm],
            sources={"checks": (CHECK_SOURCE, CHECK_KERNELS)},
        )
        self._checks: Checks | None = None
        step.done("catalog and compiler")
        self.startup = step.seconds

    def device_info(self) -> dict:
        return dict(self._device)

    def needs_restart(self) -> bool:
        return self._poisoned

    def _stage(self, name: str) -> Measured:
        if name not in self._stages:  # a tuning configuration: not in the catalog
            self._stages[name] = stage_named(name)
        return self._stages[name]

    def _loaded_checks(self) -> Checks:
        if self._checks is None:
            self._checks = Checks(self._compiling.source("checks").module, self._device["sm_count"])
        return self._checks

    def _vendor_context(self) -> VendorContext:
        if self._vendor is None:
            self._vendor = VendorContext.on_current_device()
        return self._vendor

    def measure(self, cell: Cell, run_id: str) -> dict:
        import cupy

        began = time.perf_counter()
        stage = self._stage(cell.stage)
        row = cell_row(self._device, stage, cell, run_id, "ok")  # provenance, max SM clock and DRAM bandwidth included
        if self._poisoned:
            return {**row, "status": "error", "status_reason": "CUDA context lost by an earlier fault in this worker"}
        reason = stage.unsupported_reason(cell.m, cell.n, cell.k, self._cc) or unavailable_reason(stage)
        if reason is None:
            reason = memory_skip_reason(
                stage, cell.m, cell.n, cell.k, self._device, cupy.cuda.runtime.memGetInfo()[0], self._timer.flush_bytes
            )
        if reason:
            return {**row, "status": "skipped", "status_reason": reason}
        try:
            row.update(self._run(stage, cell))
            if row["status"] == "ok":
                reason, row["limit_check"] = limits.check(row)
                if reason:
                    row.update(
                        status="implausible",
                        status_reason=f"timed faster than the chip can go: {reason}; not a result"[:4000],
                    )
        except Unavailable as exc:  # a library baseline this host cannot run after all
            row.update(status="skipped", status_reason=str(exc)[:4000])
        except CompileError as exc:
            row.update(status="error", status_reason=f"compile failed: {exc}"[:4000])
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as exc:
            # A sticky error (illegal address, launch failure) poisons the context for good.
            self._poisoned = True
            row.update(status="error", status_reason=f"CUDA error: {exc}"[:4000])
        finally:
            if not self._poisoned:
                cupy.get_default_memory_pool().free_all_blocks()
        row["timestamp"] = datetime.datetime.now(datetime.timezone.utc)  # when the cell finished
        row["cell_seconds"] = time.perf_counter() - began
        return row

    def _baseline_call(
        self, stage: Measured, a, b, ref, m: int, n: int, k: int, scales=None
    ) -> tuple[Baseline, object, str]:
        """(baseline, its callable, note): the stage's own baseline or, where this host cannot run it, the
        first vendor or framework library of the same precision class that it can (the note says why)."""
        own = self._stages[stage.baseline]
        candidates = (
            [own]
            if stage.is_baseline
            else [
                own,
                *(
                    s
                    for s in self._stages.values()
                    if s.is_baseline and s is not own and s.dtype == own.dtype and s.library in FALLBACK_LIBRARIES
                ),
            ]
        )
        passed_over = []
        for spec in candidates:
            try:
                return (
                    spec,
                    library_call(spec, a, b, ref, m, n, k, self._vendor_context(), scales),
                    "; ".join(passed_over),
                )
            except Unavailable as exc:  # extra_baselines.launcher checks its library first
                passed_over.append(f"{spec.name} unavailable: {exc}")
        raise Unavailable("no baseline of its precision class runs on this host: " + "; ".join(passed_over))

    def _run(self, stage: Measured, cell: Cell) -> dict:
        """Verify, then time; the last timed batch runs on fresh inputs with the output poisoned and is verified
        too (what was timed is what was checked)."""
        import cupy

        m, n, k = cell.m, cell.n, cell.k
        began = time.perf_counter()
        checks = self._loaded_checks()
        # FP8: the operands' dequantisation factors, on the device where kernels and libraries read them
        scales = new_scales() if stage.dtype in FP8 else None
        a, b = checks.random_operands(stage.dtype, m, n, k, self._seed(), scales)  # fresh for every cell
        ref = cupy.empty((m, n), dtype=cupy.float32)
        baseline, baseline_run, passed_over = self._baseline_call(stage, a, b, ref, m, n, k, scales)
        tol = tolerance(stage.dtype, k)

        def fresh_inputs() -> None:  # into the same buffers: the captured graphs launch with their pointers
            checks.refill(a, b, stage.dtype, self._seed(), scales)

        if stage.is_baseline:

            def check() -> (
                dict
            ):  # the library's output against an FP64 product of the inputs as they are now, sized for the card
                return check_fp64(
                    checks, ref, a, b, stage.dtype, tol, reference_plan(m, n, k, self._device), self._rng, scales
                )

            def prepare() -> None:
                fresh_inputs()
                checks.poison(ref)

            checks.poison(ref)
            baseline_run()
            out = {
                **check(),
                "library_algorithm": baseline_run.algorithm() if hasattr(baseline_run, "algorithm") else None,
            }
            launches, own = {"baseline": baseline_run}, "baseline"
        else:
            if stage.name not in self._compiled:
                self._compiled[stage.name] = self._compiling.result(stage)
            kernel = _Kernel(stage, self._compiled[stage.name], self._device["sm_count"])
            began = time.perf_counter()
            c = cupy.empty((m, n), dtype=cupy.float32)
            operands = {"A": a, "B": b, "C": c, **scale_args(scales)}
            if stage.workspace_floats_per_mn:
                operands["W"] = cupy.empty(stage.workspace_floats(m, n), dtype=cupy.float32)
            run = kernel.launcher(operands, m, n, k)

            def check() -> dict:  # the kernel's output against the baseline library's on the same inputs
                return checks.compare(c, ref, tol)

            def reference_then_poison() -> None:  # the reference from a direct library call, then C poisoned
                checks.poison(ref)
                baseline_run()
                checks.poison(c)

            def prepare() -> None:
                fresh_inputs()
                reference_then_poison()

            reference_then_poison()
            run()
            cupy.cuda.get_current_stream().synchronize()  # surfaces launch faults here, not in timing
            out = {
                **kernel.columns,
                "grid_blocks": int(np.prod(stage.launches[0].grid(m, n, self._device["sm_count"]))),
                "baseline": baseline.name,
                **check(),
                "verify_reference": f"{baseline.name} output for the same inputs",
            }
            if passed_over:
                out["status_reason"] = f"measured against {baseline.name}: {passed_over}"[:4000]
            launches, own = {"kernel": run, "baseline": baseline_run}, "kernel"
        out["verify_seconds"] = time.perf_counter() - began
        if not out["verified"]:
            return {
                **out,
                "status": "failed_verification",
                "post_checked": False,
                "status_reason": f"{out['mismatches']} of {m * n} elements outside tolerance (max scaled error {out['max_scaled_error']:.3g}); not timed",
            }
        columns, samples, post = self._timer.time(launches, own, stage.flops(m, n, k), PostCheck(prepare, check))
        out = {
            **out,
            **columns,
            TELEMETRY_KEY: samples,
            "post_checked": True,
            "max_abs_error": max(out["max_abs_error"], post["max_abs_error"]),
            "max_scaled_error": max(out["max_scaled_error"], post["max_scaled_error"]),
        }
        if not post["verified"]:
            out.update(
                status="failed_verification",
                verified=False,
                mismatches=post["mismatches"],
                status_reason=(
                    f"post-timing check failed: the last timed batch ({columns['launch_method']}, {columns['launches_per_batch']} "
                    f"launches), run on fresh inputs in the same buffers with C poisoned, left {post['mismatches']} of {m * n} "
                    f"elements outside tolerance (max scaled error {post['max_scaled_error']:.3g}); its timings are not a result"
                )[:4000],
            )
        return out

    def _seed(self) -> int:
        return int(self._rng.integers(2**63))
