"""The Ray actor that owns one GPU: builds the measurer there and measures (or profiles) batches of cells, streaming
results."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import ray

from farm.cells import ARMS, Cell, Measurer, pair_id
from farm.cluster.process_clock import seconds_since_start
from farm.data import row_batch
from farm.data.row_batch import RowBatch, profile_batch, row_batches
from farm.data.rows import cell_row
from farm.measure import measurers
from farm.measure.cell_timer import MeasureOptions
from farm.measure.device import model_from_name
from farm.measure.profiler import ProfileOptions, Profiler, status_records
from kernels.registry import stage_named, stages_under

# Node label naming the GPU model of a node (ray start --labels farm.gpu-model=H200).
GPU_MODEL_LABEL = "farm.gpu-model"


def gpu_model(labels: dict[str, str], gpu_name: str) -> str:
    """The node's farm.gpu-model label, else the model named from NVML (farm.measure.device.model_from_name).

    Ray's own accelerator_type is never used: its spelling changed between Ray versions.
    """
    return labels.get(GPU_MODEL_LABEL) or model_from_name(gpu_name)


# num_cpus=0: placed by its GPU alone, so a node's CPU count never leaves one of its GPUs idle.
@ray.remote(num_gpus=1, num_cpus=0, max_restarts=-1, max_task_retries=0)
class GpuWorker:
    """One per GPU, pinned to its node by the driver; restarted by Ray when it dies or is killed.

    Cells run on one measuring thread that lives as long as the actor (the measurer is built on it,
    so CUDA's per-thread state stays on one thread), while measure_batch streams their results: a
    row finished while the next cell runs, or hangs, still reaches the driver.
    """

    def __init__(
        self, measurer_path: str, options: MeasureOptions, prewarm: tuple[str, ...], arm_b: str | None = None
    ) -> None:
        """`options`: the plan's, as validated there; `prewarm`: stages to compile while the first cells run. `arm_b`:
        a paired sweep's second arm, timed with arm a in one interleaved timing by the one measurer (measure_pair):
        "" the same code (A/A), else a kernels tree (--base-kernels) whose stages replace the catalog's of the same
        name on arm b; None: one arm."""
        process_s = seconds_since_start()  # Ray's worker process: Python, Ray and this module imported
        began = time.perf_counter()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="measure")
        # The driver took the path from the measurer registry (farm/measure/measurers.py), never from a plan.
        build = measurers.load(measurer_path)
        self._measurer: Measurer = self._thread.submit(lambda: build(options, prewarm)).result()
        self._paired = arm_b is not None
        # arm b's own kernel stages, where it runs another tree (None: arm b runs the catalog's, as arm a)
        self._base_stages = {s.name: s for s in stages_under(arm_b)} if arm_b else None
        self._profiler: Profiler | None = None  # built by the first profiled cell
        info = self._thread.submit(self._measurer.device_info).result()
        labels = ray.get_runtime_context().get_node_labels()
        self._device = {**info, "gpu_model": gpu_model(labels, info["gpu_name"])}
        row_batch.warm_up()
        built_s = time.perf_counter() - began
        self._startup = {
            "worker process": process_s,
            **self._measurer.startup,
            "the rest": max(built_s - sum(self._measurer.startup.values()), 0.0),
        }

    def device_info(self) -> dict:
        """Provenance columns of this GPU, gpu_model included."""
        return self._device

    def startup(self) -> dict[str, float]:
        """Seconds each step of this worker's start took, from its process's start to ready, in order."""
        return self._startup

    def _run(
        self,
        cells: list[Cell],
        run_id: str,
        profile: ProfileOptions | None,
        out: queue.SimpleQueue,
        ended: threading.Event,
    ) -> None:
        """Measure (or, with `profile`, profile) `cells` in order, putting (result, needs_restart) for each (a
        cell's rows: one, or a paired cell's two, arm a's first; a profiled cell's records), then None, then setting
        `ended`. A measurer that raises gives the cell an "error" row and the next cell goes on.
        Stops after a cell that poisoned the CUDA context; a worker already poisoned measures nothing (the driver
        restarts it and queues its cells again). A profiler that raises gives the cell an "error" record."""
        poisoned = not profile and self._measurer.needs_restart()  # a profile's ncu child has a context of its own
        for cell in cells:
            if poisoned:
                break
            if profile:
                out.put((self._profile(cell, run_id, profile), False))
                continue
            rows, poisoned = self._measure_pair(cell, run_id) if self._paired else self._measure(cell, run_id)
            out.put((rows, poisoned))
        out.put(None)
        ended.set()

    def _measure(self, cell: Cell, run_id: str) -> tuple[list[dict], bool]:
        """One cell's row, and whether it poisoned the CUDA context."""
        try:
            row = self._measurer.measure(cell, run_id)
        except Exception as exc:  # noqa: BLE001 - any measurer failure is the cell's error row
            why = f"measurer raised: {_why(exc)}"
            return [cell_row(self._device, stage_named(cell.stage), cell, run_id, "error", why)], False
        row["gpu_model"] = self._device["gpu_model"]
        return [row], self._measurer.needs_restart()

    def _measure_pair(self, cell: Cell, run_id: str) -> tuple[list[dict], bool]:
        """A paired cell's rows, arm a's (run RUN_ID-a) then arm b's (RUN_ID-b), from one interleaved timing
        (Measurer.measure_pair); a kernel stage the base tree lacks: arm a measured alone, arm b skipped."""
        runs = tuple(f"{run_id}-{arm}" for arm in ARMS)
        stage = stage_named(cell.stage)
        stage_b = None if self._base_stages is None or stage.is_baseline else self._base_stages.get(stage.name)
        try:
            if self._base_stages is not None and not stage.is_baseline and stage_b is None:
                why = "paired arm b: the --base-kernels tree has no stage of this name"
                rows = [
                    self._measurer.measure(cell, runs[0]),
                    cell_row(self._device, stage, cell, runs[1], "skipped", why),
                ]
            else:
                rows = self._measurer.measure_pair(cell, runs, stage_b)
        except Exception as exc:  # noqa: BLE001 - any measurer failure is the cell's error rows
            why = f"measurer raised: {_why(exc)}"
            rows = [cell_row(self._device, stage, cell, run, "error", why) for run in runs]
        pair = pair_id(cell, run_id)
        rows = [
            {**row, "gpu_model": self._device["gpu_model"], "pair": pair, "arm": arm} for arm, row in zip(ARMS, rows)
        ]
        return rows, self._measurer.needs_restart()

    def _profile(self, cell: Cell, run_id: str, options: ProfileOptions) -> list[dict]:
        """The profile records of `cell` under Nsight Compute (farm.measure.profiler; no timing taken). The
        profiler, which finds ncu and the chip's metrics, is built on the first call and kept."""
        try:
            if self._profiler is None:
                self._profiler = Profiler(self._device, ncu=options.ncu, timeout_s=options.timeout_s)
            return self._profiler.profile(cell, run_id)
        except Exception as exc:  # noqa: BLE001 - as a measurer's: the cell's error record
            why = f"profiler raised: {_why(exc)}"
            return status_records(self._device, stage_named(cell.stage), cell, run_id, "error", why)

    @ray.method(num_returns="streaming")
    def measure_batch(
        self, cells: list[list], run_id: str, gather_s: float, profile: ProfileOptions | None = None
    ) -> Iterator[tuple[list[RowBatch], bool]]:
        """The rows of `cells` (each Cell.key() as a list), in order, yielded as (RowBatches, needs_restart): a row goes
        at once when the last yield was at least `gather_s` ago, else with the others that finish by then. A
        cell that hangs holds back no finished row. needs_restart: the last row's cell poisoned the CUDA context
        (the batch stops there). With `profile`, each cell is profiled instead, its records one RowBatch of the
        profile table.

        How long rows may wait is the driver's call: a streamed item costs the worker's process far more CPU
        than a row does, so rows travel together, as Arrow record batches made here rather than by the driver
        (farm.data.row_batch); a worker dying takes its unsent rows with it (their cells run again, and the
        driver no longer knows which cell killed it: farm.cluster.dispatch). While it gathers, this thread
        sleeps until the gathering ends or the batch does, rather than waking for every row."""
        out: queue.SimpleQueue = queue.SimpleQueue()
        ended = threading.Event()
        self._thread.submit(self._run, [Cell(*key) for key in cells], run_id, profile, out, ended)
        last_yield = 0.0
        done = False
        while not done:
            chunk = [out.get()]
            if chunk[-1] is not None:
                ended.wait(max(last_yield + gather_s - time.monotonic(), 0.0))
                while not out.empty():
                    chunk.append(out.get())
            done = chunk[-1] is None
            results = [r for r in chunk if r is not None]
            if results:
                batches = (
                    [profile_batch(r) for r, _ in results]
                    if profile
                    else row_batches([row for rows, _ in results for row in rows])
                )
                yield batches, results[-1][1]
                last_yield = time.monotonic()


def _why(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
