"""A cell is the unit of work and of resume: one stage at one shape, one repeat."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, order=True, slots=True)
class Cell:
    stage: str
    m: int
    n: int
    k: int
    repeat: int = 0

    def key(self) -> tuple[str, int, int, int, int]:
        return (self.stage, self.m, self.n, self.k, self.repeat)


class Measurer(Protocol):
    """What a GPU worker runs. farm.measure.gpu.GpuMeasurer is the real one; tests use a stand-in.

    Built as Measurer(options, prewarm): the plan's validated MeasureOptions (farm.measure.cell_timer), as the plan
    holds them, and the names of the plan's stages, to compile while the first cells run; a paired sweep's arm b as
    Measurer(options, prewarm, extra_stages=...), stages replacing the catalog's of the same name (another tree's)."""

    startup: dict[str, float]  # seconds each step of building it took, in order (the sweep's start-up log line)

    def device_info(self) -> dict:
        """Provenance columns of this GPU (gpu_name, gpu_uuid, arch, ...): see farm.data.schema."""

    def measure(self, cell: Cell, run_id: str) -> dict:
        """Compile (cached), verify and time one cell; one result row, whatever the outcome."""

    def needs_restart(self) -> bool:
        """True once a kernel fault has poisoned the CUDA context: the worker must be restarted."""
