"""Checks sized for the card: a cell's device memory (skipped with the reason before allocating if it won't fit) and how
much of a baseline's output is checked against FP64.

A baseline row (cuBLAS, cuBLASLt, PyTorch, Triton) is checked against the FP64 product of its inputs. FP64 runs at 1/2
the FP32 rate on data-centre chips (ms for a whole product), 1/64 on GeForce (CUDA_GUIDE): an RTX 3050 Laptop would take
~10 s for an 8192^3 product, whose FP64 A, B, C (1.5 GiB) fill 40 % of its 3.68 GiB. So the product is checked whole
only if it takes <= `FP64_BUDGET_S` at the FP64 peak and its operands <= 1/4 of the card's memory; else on
`BLOCK_ROWS`-row blocks of C (first and last for the edge tiles, the rest random per check), as many as the budget
buys, each element checked as before (same tolerance, NaN never passes); `verify_reference` gives the rows checked and
the whole product's cost. Wrong elements elsewhere are missed; a fault spanning f rows (a wrong tile) is caught with
probability 1 - (1 - checked/M)^(f/BLOCK_ROWS). Kernel rows are still compared element-wise with their baseline,
exposing a baseline wrong in unchecked rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from farm.measure.tolerance import Tolerance
from kernels.stage import Measured

CUDA_GUIDE = (
    "CUDA C++ Programming Guide, Arithmetic Instructions throughput table: 64-bit floating-point add, "
    "multiply, multiply-add results per clock per SM: 32 on 8.0, 2 on 8.6, 8.9 and 12.0, 64 on 9.0 and 10.0, "
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"
)
# FP64 FLOP/clock/SM (FMA = 2) per arch (CUDA_GUIDE); unknown ones count as the slowest.
FP64_FLOP_PER_CLOCK = {"sm_80": 64, "sm_86": 4, "sm_89": 4, "sm_90": 128, "sm_100": 128, "sm_120": 4}
SLOWEST_FP64 = 4
FALLBACK_CLOCK_MHZ = 1000.0  # max SM clock unknown: low, so the estimate errs long
FP64_BUDGET_S = 0.25  # est. FP64 s a baseline's check may cost at the chip's peak
FULL_MEMORY_SHARE = 0.25  # of card memory the whole product's FP64 operands may take
BLOCK_ROWS = 32
MEMORY_HEADROOM = 0.85  # of free memory a cell may plan to use


@dataclass(frozen=True)
class ReferencePlan:
    """How a baseline's m x n output is checked: `rows` of its m rows (all m: the whole product)."""

    m: int
    n: int
    k: int
    rows: int  # rows of C checked
    full: bool  # whole product at once (else BLOCK_ROWS blocks)
    full_seconds: float  # whole product's est. FP64 s at the chip's peak
    arch: str

    @property
    def device_bytes(self) -> int:
        """Peak FP64 memory: B widened once, plus A's rows and product of one block (or all)."""
        rows = self.m if self.full else BLOCK_ROWS
        return 8 * (self.k * self.n + rows * self.k + rows * self.n)

    def blocks(self, rng: np.random.Generator) -> list[tuple[int, int]]:
        """(first row, rows) per block: all of C, or first, last and random aligned blocks, none twice."""
        if self.full:
            return [(0, self.m)]
        starts = list(range(0, self.m, BLOCK_ROWS))
        if self.rows == self.m:
            return [(s, min(BLOCK_ROWS, self.m - s)) for s in starts]
        middle = starts[1:-1]
        picked = (
            rng.choice(len(middle), size=min(self.rows // BLOCK_ROWS - 2, len(middle)), replace=False) if middle else []
        )
        chosen = sorted({starts[0], starts[-1], *(middle[i] for i in picked)})
        return [(s, min(BLOCK_ROWS, self.m - s)) for s in chosen]

    def describe(self) -> str:
        what = "fp64 product of the same inputs (cupy float64 matmul)"
        if self.full:
            return f"{what}, every element (est. {self.full_seconds:.3g} s of FP64 at the chip's peak)"
        if self.rows == self.m:
            return (
                f"{what}, every element, in blocks of {BLOCK_ROWS} rows: the whole product's FP64 operands would take "
                f"over {FULL_MEMORY_SHARE:.0%} of the card's memory (est. {self.full_seconds:.3g} s of FP64)"
            )
        share = self.rows / self.m
        tile = 1 - (1 - share) ** (128 / BLOCK_ROWS)
        return (
            f"{what} on {self.rows} of {self.m} rows of C, blocks of {BLOCK_ROWS} (first, last, the rest at random): "
            f"the whole product would take est. {self.full_seconds:.3g} s at {self.arch}'s FP64 rate, "
            f"{FP64_FLOP_PER_CLOCK.get(self.arch, SLOWEST_FP64)} FLOP/clock/SM; a wrong element elsewhere is missed, "
            f"a wrong 128-row tile caught with probability {tile:.0%}"
        )


def _fp64_flops_per_s(device: dict) -> float:
    per_clock = FP64_FLOP_PER_CLOCK.get(device.get("arch", ""), SLOWEST_FP64)
    return per_clock * device["sm_count"] * (device.get("max_sm_clock_mhz") or FALLBACK_CLOCK_MHZ) * 1e6


def reference_plan(m: int, n: int, k: int, device: dict, budget_s: float = FP64_BUDGET_S) -> ReferencePlan:
    """FP64 check of an m x n x k baseline on `device` (provenance: arch, sm_count, memory_bytes, max_sm_clock_mhz)."""
    rate = _fp64_flops_per_s(device)
    full_s = 2.0 * m * n * k / rate
    full_bytes = 8 * (m * k + k * n + m * n)
    fits = full_bytes <= FULL_MEMORY_SHARE * device["memory_bytes"]
    if full_s <= budget_s:
        return ReferencePlan(m, n, k, m, fits, full_s, device.get("arch", "?"))
    # whole blocks the budget buys, at least first and last
    afford = int(budget_s * rate / (2.0 * n * k)) // BLOCK_ROWS * BLOCK_ROWS
    return ReferencePlan(m, n, k, min(max(afford, 2 * BLOCK_ROWS), m), False, full_s, device.get("arch", "?"))


def bytes_needed(stage: Measured, m: int, n: int, k: int, device: dict, flush_bytes: int = 0) -> int:
    """A cell's device memory: inputs (FP32 before narrowing), output, reference, workspace (as the stage's
    plan sizes it per SM count), a padded stage's B and C copies (farm/measure/padding.py), a baseline's FP64
    check (reference_plan) and cold mode's L2 flush buffer."""
    padded = stage.padded_n(n)
    copies = (k + m) * padded if padded != n else 0
    fp32 = 4 * (m * k + k * n + 2 * m * n + copies + stage.workspace_floats(m, n, k, device["sm_count"]))
    fp64 = reference_plan(m, n, k, device).device_bytes if stage.is_baseline else 0
    return fp32 + fp64 + flush_bytes


def memory_skip_reason(
    stage: Measured, m: int, n: int, k: int, device: dict, free_bytes: int, flush_bytes: int = 0
) -> str | None:
    """Why the cell can't run in `free_bytes` of device memory (a `skipped` row's reason); None if it fits."""
    need = bytes_needed(stage, m, n, k, device, flush_bytes)
    if need <= MEMORY_HEADROOM * free_bytes:
        return None
    return f"needs {need / 2**30:.2f} GiB of device memory, {free_bytes / 2**30:.2f} GiB free"


def check_fp64(
    checks, out, a, b, dtype: str, tol: Tolerance, plan: ReferencePlan, rng: np.random.Generator, scales=None
) -> dict:
    """Verification columns of a baseline's FP32 `out` = a.b vs FP64 on `plan`'s rows
    (farm.measure.checks.Checks.compare per block, merged). FP8 (`scales`): dequantised inputs' product, B N x K."""
    if scales is None:
        b64 = checks.to_float64(b, dtype)
        widen_a = lambda rows: checks.to_float64(rows, dtype)  # noqa: E731
    else:
        b64 = checks.to_float64(b, dtype, scales, operand=1).T
        widen_a = lambda rows: checks.to_float64(rows, dtype, scales, operand=0)  # noqa: E731
    merged: dict | None = None
    for first, rows in plan.blocks(rng):
        exact = widen_a(a[first : first + rows]) @ b64
        cols = checks.compare(out[first : first + rows], exact, tol)
        del exact
        merged = (
            cols
            if merged is None
            else {
                **merged,
                "verified": merged["verified"] and cols["verified"],
                "mismatches": merged["mismatches"] + cols["mismatches"],
                "max_abs_error": max(merged["max_abs_error"], cols["max_abs_error"]),  # compare counts NaN as infinite
                "max_scaled_error": max(merged["max_scaled_error"], cols["max_scaled_error"]),
            }
        )
    return {**merged, "verify_reference": plan.describe()}
