"""The real measurer: compile, verify and time one cell on this process's GPU.

Kernel cells: compile for this chip's own sm_XX (cached), check against cuBLAS of the
same precision class with C poisoned, then time kernel and baseline interleaved.
A paired sweep's cell (measure_pair): both arms verified, each into its own output, then timed with the baseline as
series of one interleaved timing, and each verified again after its last timed batch.
Baseline cells (cuBLAS, and PyTorch / Triton where installed): checked against an FP64
product of the same inputs, then timed.
A CUDA fault poisons the context: the row says so and needs_restart() turns True.
"""

from __future__ import annotations

import datetime
import time

import numpy as np

from farm.cells import ARMS, Cell, arm_order
from farm.data import limits
from farm.data.rows import cell_row
from farm.data.schema import TELEMETRY_KEY
from farm.measure.cell_timer import CellTimer, MeasureOptions, PostCheck
from farm.measure.checks import FP8, KERNELS as CHECK_KERNELS, SOURCE as CHECK_SOURCE, Checks, new_scales, scale_args
from farm.measure.compiler import BackgroundCompiler, Compiled, CompileError, code_sha256, stage_key
from farm.measure.cublas import GEMMS, Unavailable, VendorContext
from farm.measure.dependent_launch import dependent_launcher
from farm.measure.device import describe_device
from farm.measure.extra_baselines import LIBRARIES, launcher, unavailable_reason
from farm.measure.padding import padded_launcher, padding_note
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
            planned = {a: np.int32(v) for a, v in launch.plan(m, n, k, self.sm_count).args.items()}  # once a cell
            named = {**ints, **planned, **operands, **tensor_map_args(launch, self.dtype, operands)}
            calls.append(
                (
                    fn,
                    launch.grid(m, n, self.sm_count),
                    launch.block(),
                    tuple(named[a] for a in launch.args),
                    launch.dynamic_smem,
                )
            )

        steps = [
            dependent_launcher(fn, grid, block, args, smem)
            if launch.dependent
            else (lambda fn=fn, grid=grid, block=block, args=args, smem=smem: fn(grid, block, args, shared_mem=smem))
            for (launch, _), (fn, grid, block, args, smem) in zip(self.functions, calls)
        ]

        def run() -> None:
            for step in steps:
                step()

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
        first cells run (a cell whose stage is still compiling waits for it). `extra_stages`: stages outside the
        catalog that cells may name (the GPU tests' planted cheats; a plan cannot pass any)."""
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
        self._compiled: dict[tuple, Compiled] = {}  # by compiler.stage_key
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
        stage = self._stage(cell.stage)
        return self._measure_arms(cell, [("baseline" if stage.is_baseline else "kernel", run_id, stage)])[0]

    def measure_pair(self, cell: Cell, run_ids: tuple[str, str], stage_b: Measured | None = None) -> list[dict]:
        """farm.cells.Measurer.measure_pair: series "a" and "b" of one interleaved timing, in arm_order(cell)."""
        stage = self._stage(cell.stage)
        arms = {"a": (run_ids[0], stage), "b": (run_ids[1], stage_b or stage)}
        order = arm_order(cell)
        rows = self._measure_arms(cell, [(arm, *arms[arm]) for arm in order])
        return [rows[order.index(arm)] for arm in ARMS]

    def _skip_reason(self, cell: Cell, arms: list[tuple[str, str, Measured]]) -> str | None:
        import cupy

        m, n, k = cell.m, cell.n, cell.k
        first = arms[0][2]
        for name, _, stage in arms:
            reason = stage.unsupported_reason(m, n, k, self._cc) or unavailable_reason(stage)
            if stage.dtype != first.dtype or stage.baseline != first.baseline:
                reason = (
                    f"its stage's precision ({stage.dtype}) or baseline ({stage.baseline}) differs from the other arm's"
                )
            if reason:
                return f"paired arm {name}: {reason}" if len(arms) > 1 else reason
        # (a paired kernel cell holds one more output per arm: a few MB at most where the rule leaves room)
        return memory_skip_reason(
            first, m, n, k, self._device, cupy.cuda.runtime.memGetInfo()[0], self._timer.flush_bytes
        )

    def _measure_arms(self, cell: Cell, arms: list[tuple[str, str, Measured]]) -> list[dict]:
        """The rows of `arms` (series name, run id, stage), in that order: one, or a paired cell's two, timed together."""
        import cupy

        began = time.perf_counter()
        # provenance, max SM clock and DRAM bandwidth included
        rows = [cell_row(self._device, stage, cell, run_id, "ok") for _, run_id, stage in arms]
        if self._poisoned:
            why = "CUDA context lost by an earlier fault in this worker"
            return [{**row, "status": "error", "status_reason": why} for row in rows]
        reason = self._skip_reason(cell, arms)
        if reason:
            return [{**row, "status": "skipped", "status_reason": reason} for row in rows]
        try:
            for row, out in zip(rows, self._run(cell, arms)):
                row.update(out)
                if row["status"] == "ok":
                    reason, row["limit_check"] = limits.check(row)
                    if reason:
                        row.update(
                            status="implausible",
                            status_reason=f"timed faster than the chip can go: {reason}; not a result"[:4000],
                        )
        except Unavailable as exc:  # a library baseline this host cannot run after all
            for row in rows:
                row.update(status="skipped", status_reason=str(exc)[:4000])
        except CompileError as exc:
            for row in rows:
                row.update(status="error", status_reason=f"compile failed: {exc}"[:4000])
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as exc:
            # A sticky error (illegal address, launch failure) poisons the context for good.
            self._poisoned = True
            for row in rows:
                row.update(status="error", status_reason=f"CUDA error: {exc}"[:4000])
        finally:
            if not self._poisoned:
                cupy.get_default_memory_pool().free_all_blocks()
        finished, seconds = datetime.datetime.now(datetime.timezone.utc), time.perf_counter() - began
        for row in rows:  # when the cell finished and what it took, both arms' of a pair
            row["timestamp"], row["cell_seconds"] = finished, seconds
        return rows

    def _kernel_run(self, stage: Stage, kernel: _Kernel, a, b, scales, m: int, n: int, k: int):
        """(C, a callable launching the stage's kernels on A and B into C on the current stream)."""
        import cupy

        c = cupy.empty((m, n), dtype=cupy.float32)
        operands = {"A": a, "B": b, "C": c, **scale_args(scales)}
        if stage.takes_workspace:  # sized as the plan says: none where nothing splits
            operands["W"] = cupy.empty(stage.workspace_floats(m, n, k, self._device["sm_count"]), dtype=cupy.float32)
        return c, padded_launcher(stage, self._loaded_checks(), kernel.launcher, operands, m, n, k)

    def standalone(self, name: str, m: int, n: int, k: int) -> dict:
        """A kernel stage and its baseline library outside any cell, for another harness to time (farm crosscheck
        --stages): {"stage": callable, "baseline": callable, each launching on the current stream on the same fresh
        inputs, "baseline_name", "verified" (the stage's C poisoned, then checked against the baseline's as a cell
        checks it), "check": the check's fields, "keep": what must outlive the callables (the loaded module)}."""
        import cupy

        stage = self._stage(name)
        if stage.is_baseline:
            raise ValueError(f"{name} is a baseline: farm crosscheck times baselines without --stages")
        checks = self._loaded_checks()
        scales = new_scales() if stage.dtype in FP8 else None
        a, b = checks.random_operands(stage.dtype, m, n, k, self._seed(), scales)
        ref = cupy.empty((m, n), dtype=cupy.float32)
        baseline, baseline_run, _ = self._baseline_call(stage, a, b, ref, m, n, k, scales)
        kernel = self._kernel(stage)
        c, run = self._kernel_run(stage, kernel, a, b, scales, m, n, k)
        checks.poison(ref)
        baseline_run()
        checks.poison(c)
        run()
        check = checks.compare(c, ref, tolerance(stage.dtype, k))
        return {
            "stage": run,
            "baseline": baseline_run,
            "baseline_name": baseline.name,
            "verified": bool(check.get("verified")),
            "check": check,
            "keep": (kernel, a, b, c, ref, scales),
        }

    def library_against(self, name: str, a, b, ref, m: int, n: int, k: int) -> dict:
        """A vendor baseline on another harness's operands (farm crosscheck's follow-up: its library and ours on one
        A and B): {"call": launching it as its cells do into its own C on the current stream, "verified": that C,
        poisoned first, checked against `ref` (the other library's product) as a cell checks, "keep": C}."""
        import cupy

        spec = self._stage(name)
        if not spec.is_baseline or spec.dtype in FP8:
            raise ValueError(f"{name} is not a 16- or 32-bit baseline: the follow-up times library calls only")
        checks, c = self._loaded_checks(), cupy.empty((m, n), dtype=cupy.float32)
        call = library_call(spec, a, b, c, m, n, k, self._vendor_context())
        checks.poison(c)
        call()
        verified = bool(checks.compare(c, ref, tolerance(spec.dtype, k)).get("verified"))
        return {"call": call, "verified": verified, "keep": c}

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

    def _kernel(self, stage: Stage) -> _Kernel:
        key = stage_key(stage)
        if key not in self._compiled:
            self._compiled[key] = self._compiling.result(stage)
        return _Kernel(stage, self._compiled[key], self._device["sm_count"])

    def _run(self, cell: Cell, arms: list[tuple[str, str, Measured]]) -> list[dict]:
        """Verify, then time: each arm (series name, run id, stage) into its own output, every arm's series and the
        baseline's in one interleaved timing; the last timed batch of each arm runs on fresh inputs with its output
        poisoned and is verified too (what was timed is what was checked). The arms' columns, in their order."""
        import cupy

        m, n, k = cell.m, cell.n, cell.k
        began = time.perf_counter()
        checks = self._loaded_checks()
        stage = arms[0][2]  # every arm's precision and baseline (_skip_reason)
        names = [name for name, _, _ in arms]
        # FP8: the operands' dequantisation factors, on the device where kernels and libraries read them
        scales = new_scales() if stage.dtype in FP8 else None
        a, b = checks.random_operands(stage.dtype, m, n, k, self._seed(), scales)  # fresh for every cell
        ref = cupy.empty((m, n), dtype=cupy.float32)
        baseline, baseline_run, passed_over = self._baseline_call(stage, a, b, ref, m, n, k, scales)
        tol = tolerance(stage.dtype, k)

        def fresh_inputs() -> None:  # into the same buffers: the captured graphs launch with their pointers
            checks.refill(a, b, stage.dtype, self._seed(), scales)

        # A paired cell's arms are set up (module loaded, output allocated, library call planned) in an order drawn
        # for this pair, apart from the timing order (arm_order, fixed per cell and repeat): whatever the first or
        # second load or allocation decides is an independent draw of each pair, never the same arm's in every
        # session (docs/verdicts.md, "Paired sweeps").
        loading = [int(i) for i in self._rng.permutation(len(arms))]
        loaded_first = names[loading[0]] if len(arms) > 1 else None
        if stage.is_baseline:
            # each arm's library call writes its own output; the arm set up first has the baseline's own
            outputs, runs = [None] * len(arms), [None] * len(arms)
            outputs[loading[0]], runs[loading[0]] = ref, baseline_run
            for i in loading[1:]:
                outputs[i] = cupy.empty((m, n), dtype=cupy.float32)
                runs[i] = library_call(baseline, a, b, outputs[i], m, n, k, self._vendor_context(), scales)
            plan = reference_plan(m, n, k, self._device)

            def fp64_check(o):  # the library's output against an FP64 product of the inputs as they are now
                return lambda: check_fp64(checks, o, a, b, stage.dtype, tol, plan, self._rng, scales)

            check_of = {name: fp64_check(o) for name, o in zip(names, outputs)}

            def poison() -> None:
                for o in outputs:
                    checks.poison(o)

            def prepare() -> None:
                fresh_inputs()
                poison()

            poison()
            for run in runs:
                run()
            outs = [
                {
                    **check_of[name](),
                    "library_algorithm": run.algorithm() if hasattr(run, "algorithm") else None,
                }
                for name, run in zip(names, runs)
            ]
            launches = dict(zip(names, runs))
        else:
            # a module of its own for each arm, loaded afresh for this pair (a CUBIN cache hit: a load, no compile)
            kernels, outputs, runs = [None] * len(arms), [None] * len(arms), [None] * len(arms)
            for i in loading:
                kernels[i] = self._kernel(arms[i][2])
                outputs[i], runs[i] = self._kernel_run(arms[i][2], kernels[i], a, b, scales, m, n, k)
            began = time.perf_counter()

            def compare_with_reference(c):  # the kernel's output against the baseline library's on the same inputs
                return lambda: checks.compare(c, ref, tol)

            check_of = {name: compare_with_reference(c) for name, c in zip(names, outputs)}

            def reference_then_poison() -> None:  # the reference from a direct library call, then every C poisoned
                checks.poison(ref)
                baseline_run()
                for c in outputs:
                    checks.poison(c)

            def prepare() -> None:
                fresh_inputs()
                reference_then_poison()

            reference_then_poison()
            for run in runs:
                run()
            cupy.cuda.get_current_stream().synchronize()  # surfaces launch faults here, not in timing
            outs = [
                {
                    **kernel.columns,
                    "grid_blocks": int(np.prod(s.launches[0].grid(m, s.padded_n(n), self._device["sm_count"]))),
                    "baseline": baseline.name,
                    **check_of[name](),
                    "verify_reference": f"{baseline.name} output for the same inputs",
                    **_notes(passed_over and f"measured against {baseline.name}: {passed_over}", padding_note(s, n)),
                }
                for kernel, (name, _, s) in zip(kernels, arms)
            ]
            launches = {**dict(zip(names, runs)), "baseline": baseline_run}
        verify_seconds = time.perf_counter() - began
        for out in outs:
            out["verify_seconds"], out["loaded_first"] = verify_seconds, loaded_first
        if not all(out["verified"] for out in outs):
            return [_untimed(out, m * n, len(outs)) for out in outs]
        # Beside a frugal kernel the pair's mean draw stays under the cap even where the baseline alone is held at it: the
        # timer learns that per baseline and shape (TimingConfig.cap_block_s).
        timed = self._timer.time(
            launches, stage.flops(m, n, k), PostCheck(prepare, check_of), (baseline.name, m, n, k), stage.is_baseline
        )
        return [_with_timing(out, *timed[name], m * n) for out, name in zip(outs, names)]

    def _seed(self) -> int:
        return int(self._rng.integers(2**63))


def _notes(*notes: str | None) -> dict:
    """An ok row's status_reason where it has something to say (a stand-in baseline, a padded N), else nothing."""
    said = "; ".join(note for note in notes if note)
    return {"status_reason": said[:4000]} if said else {}


def _untimed(out: dict, elements: int, arms: int) -> dict:
    """An arm's columns when some arm failed verification before timing: none is timed (a paired cell's arms are
    timed together or not at all)."""
    if out["verified"]:
        why = "the other arm of this paired cell failed verification: the pair is not timed"
        return {**out, "status": "skipped", "post_checked": False, "status_reason": why}
    return {
        **out,
        "status": "failed_verification",
        "post_checked": False,
        "status_reason": f"{out['mismatches']} of {elements} elements outside tolerance (max scaled error {out['max_scaled_error']:.3g}); not timed",
    }


def _with_timing(out: dict, columns: dict, samples: list[dict], post: dict, elements: int) -> dict:
    """An arm's columns with its timing, telemetry and post-timing check."""
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
                f"launches), run on fresh inputs in the same buffers with C poisoned, left {post['mismatches']} of {elements} "
                f"elements outside tolerance (max scaled error {post['max_scaled_error']:.3g}); its timings are not a result"
            )[:4000],
        )
    return out
