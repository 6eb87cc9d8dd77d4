"""The Ray actor that owns one GPU: builds the measurer there and measures cells on request."""
from __future__ import annotations

import ray

from farm.cells import Cell, Measurer
from farm.measure import measurers
from farm.measure.device import model_from_name
from farm.measure.profiler import DEFAULT_TIMEOUT_S, Profiler

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
    """One per GPU, pinned to its node by the driver; restarted by Ray when it dies or is killed."""

    def __init__(self, measurer_path: str, options: dict) -> None:
        # The driver took the path from the measurer registry (farm/measure/measurers.py), never from a plan.
        self._measurer: Measurer = measurers.load(measurer_path)(**options)
        info = self._measurer.device_info()
        labels = ray.get_runtime_context().get_node_labels()
        self._device = {**info, "gpu_model": gpu_model(labels, info["gpu_name"])}

    def device_info(self) -> dict:
        """Provenance columns of this GPU, gpu_model included."""
        return self._device

    def measure(self, cell: Cell, run_id: str) -> tuple[dict, bool]:
        """(result row, whether the CUDA context is poisoned and this actor must be restarted)."""
        row = self._measurer.measure(cell, run_id)
        row["gpu_model"] = self._device["gpu_model"]
        return row, self._measurer.needs_restart()

    def profile(self, cells: list[Cell], run_id: str, timeout_s: float | None = None) -> list[dict]:
        """Profile records of `cells` under Nsight Compute on this GPU (farm.measure.profiler; no timing taken).

        The profiler (which finds ncu and the chip's metrics) is built on the first call and kept.
        """
        if getattr(self, "_profiler", None) is None:
            self._profiler = Profiler(self._device, timeout_s=timeout_s or DEFAULT_TIMEOUT_S)
        if timeout_s:
            self._profiler.timeout_s = timeout_s
        return self._profiler.run(cells, run_id)
