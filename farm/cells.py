"""A cell is the unit of work and of resume: one stage at one shape, one repeat."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

ARMS = ("a", "b")  # a paired sweep's two arms: runs RUN_ID-a and RUN_ID-b


@dataclass(frozen=True, order=True, slots=True)
class Cell:
    stage: str
    m: int
    n: int
    k: int
    repeat: int = 0

    def key(self) -> tuple[str, int, int, int, int]:
        return (self.stage, self.m, self.n, self.k, self.repeat)


def arm_order(cell: Cell) -> tuple[str, str]:
    """A paired cell's arms in the order its interleaved timing starts them (a, b or b, a: each batch round times
    the first, the second, then the baseline), alternating with the repeat (two repeats make ABBA) and, at one
    repeat, between cells (a stable hash of the stage and shape), so that neither arm always leads a round."""
    flip = (cell.repeat + sum(map(ord, f"{cell.stage}/{cell.m}x{cell.n}x{cell.k}"))) % 2
    return ("b", "a") if flip else ARMS


def pair_id(cell: Cell, run_id: str) -> str:
    return f"{run_id}/{cell.stage}/{cell.m}x{cell.n}x{cell.k}/{cell.repeat}"


class Measurer(Protocol):
    """What a GPU worker runs. farm.measure.gpu.GpuMeasurer is the real one; tests use a stand-in.

    Built as Measurer(options, prewarm): the plan's validated MeasureOptions (farm.measure.cell_timer), as the plan
    holds them, and the names of the plan's stages, to compile while the first cells run."""

    startup: dict[str, float]  # seconds each step of building it took, in order (the sweep's start-up log line)

    def device_info(self) -> dict:
        """Provenance columns of this GPU (gpu_name, gpu_uuid, arch, ...): see farm.data.schema."""

    def measure(self, cell: Cell, run_id: str) -> dict:
        """Compile (cached), verify and time one cell; one result row, whatever the outcome."""

    def measure_pair(self, cell: Cell, run_ids: tuple[str, str], stage_b: Any = None) -> list[dict]:
        """A paired sweep's cell: arm a (the catalog's stage) and arm b (`stage_b`, another tree's stage of the same
        name; None: the same stage) verified each and timed as series of ONE interleaved timing with the baseline
        (batches alternating, arm_order(cell) first), so both see the same clock and power state batch by batch;
        the rows of runs run_ids[0] and run_ids[1], arm a's first, whatever the outcome."""

    def needs_restart(self) -> bool:
        """True once a kernel fault has poisoned the CUDA context: the worker must be restarted."""
