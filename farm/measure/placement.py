"""Where a cell's operands land in device memory, drawn afresh inside the cell: what a run used to draw once.

On an H100, two runs of one commit differed per cell by more than the repeats of either run showed (issue 26: robust
spread 0.73 %, some SIMT kernels at 1024^3 3-4 % faster in one run at the same clock, their repeats agreeing to
0.05 %; the kernel and its cuBLAS baseline, which read the same A and B, moved together). Each worker process used to
get the same physical pages back for every cell of one size (the memory pool is emptied after each cell and the
driver hands out the same pages again), so a run drew one placement per size and its repeats could not show it.
Which physical pages hold A, B and C decides which DRAM channels and L2 slices serve them.

So a cell times its launches at several placements, each allocated behind a pad of random size (raw cudaMalloc,
freed once the operands are in place) so that it lands on other pages, and its batches take the placements in turn
(farm/measure/timing.py): a cell's median then averages over placements, as a run's cells do over runs.
`.ci/placement_probe.py` measures the effect per cell (README, "Telling a change from noise").
"""
from __future__ import annotations

import contextlib

import numpy as np

# Operand memory all placements of one cell may take together: a cell whose operands span hundreds of 2 MiB pages
# averages placement over its own pages (2048^3 SIMT cells moved 0.4 % between runs, 1024^3 ones up to 4 %).
BUDGET_BYTES = 1 << 30
PAD_STEP_BYTES = 2 << 20  # the driver maps device memory in 2 MiB pages
PAD_MAX_BYTES = 1 << 30


def count(most: int, set_bytes: int, free_bytes: int) -> int:
    """Placements for a cell whose operands take `set_bytes`: at most `most`, within BUDGET_BYTES and half the free
    memory; at least one."""
    return max(1, min(most, BUDGET_BYTES // max(set_bytes, 1), free_bytes // 2 // max(set_bytes, 1)))


@contextlib.contextmanager
def elsewhere(rng: np.random.Generator, free_bytes: int):
    """Allocations inside land behind a pad of random size (0 to PAD_MAX_BYTES, at most a quarter of `free_bytes`):
    on other physical pages than without it. The memory pool's cached blocks are released first, so that the
    allocations inside come from the driver, not from blocks an earlier placement freed."""
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()
    steps = min(PAD_MAX_BYTES, free_bytes // 4) // PAD_STEP_BYTES
    pad_bytes = int(rng.integers(0, steps + 1)) * PAD_STEP_BYTES
    pad = cupy.cuda.runtime.malloc(pad_bytes) if pad_bytes else 0
    try:
        yield
    finally:
        if pad:
            cupy.cuda.runtime.free(pad)
