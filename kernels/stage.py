"""What the catalog holds: kernel stages (a .cu file and its launches) and library baselines, and their parts.

A dataset's `stage` column names one of them: `Stage` is a kernel of ours, compiled from its source; `Baseline` a
library's GEMM (cuBLAS, cuBLASLt, PyTorch, Triton), launched by farm/measure. Both are a `Measured` (name, family,
ladder position, precision, baseline, shapes, compute capability, `is_baseline`). kernels/registry.py gathers them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class ShapeRule:
    """Shapes a stage accepts: each dimension a multiple of its step (1 = any)."""

    m_multiple: int = 1
    n_multiple: int = 1
    k_multiple: int = 1
    min_k: int = 1

    def rejects(self, m: int, n: int, k: int) -> str | None:
        """Why (m, n, k) is unsupported, or None when it is supported."""
        reasons = []
        for dim, value, step in (("M", m, self.m_multiple), ("N", n, self.n_multiple), ("K", k, self.k_multiple)):
            if value % step:
                reasons.append(f"{dim}={value} is not a multiple of {step}")
        if k < self.min_k:
            reasons.append(f"K={k} is below the minimum {self.min_k}")
        return "; ".join(reasons) or None

    def describe(self) -> str:
        if (self.m_multiple, self.n_multiple, self.k_multiple, self.min_k) == (1, 1, 1, 1):
            return "any shape"
        parts = [
            f"{d} % {s} == 0"
            for d, s in (("M", self.m_multiple), ("N", self.n_multiple), ("K", self.k_multiple))
            if s > 1
        ]
        if self.min_k > 1:
            parts.append(f"K >= {self.min_k}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Published:
    """A figure a write-up published for a stage (a fact we cite, not a measurement of ours)."""

    device: str
    m: int
    n: int
    k: int
    ms: float | None
    pct_of_baseline: float | None
    source: str


@dataclass(frozen=True)
class LaunchPlan:
    """What a launch decided on the host for one shape and grid (a `Launch.planner`'s answer): int arguments by
    name, passed beside M, N and K, and the workspace W those choices need, in floats (0: none)."""

    args: Mapping[str, int]
    workspace_floats: int = 0


NO_PLAN = LaunchPlan({})


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a stage. Arguments are named, resolved by the harness:

    A, B, C: device matrices; W: the stage's workspace; M, N, K, SPLITS: ints;
    TMA_A, TMA_B: tensor maps over A and B (farm/measure/tma.py; TMA_C over C, TMA_A128 over A in 128-row boxes,
    TMA_B64 over B in 64-row boxes);
    SCALE_A, SCALE_B: FP8 stages' per-tensor dequantisation factors, one float each on the device; any other name: an
    int of the launch's plan.
    A launch with a `planner` has its choices (tile width, K slices...) made once per shape on the host, not by
    every block: planner(m, n, k, blocks) -> LaunchPlan, blocks being the grid's size (`plan`).
    The grid covers C in tiles: (cdiv(N, tile_n), cdiv(M, tile_m), splits); a persistent
    launch is one block per SM (fewer if there are fewer tiles times splits), each looping over tiles.
    A fixed kernel's threads, tile, dynamic shared memory and cluster are read from its .cu
    (kernels/sources.py); a template kernel's come from the template arguments its family writes.
    """

    kernel: str
    threads: tuple[int, int] | int
    tile_m: int
    tile_n: int
    args: tuple[str, ...] = ("A", "B", "C", "M", "N", "K")
    splits: int = 1
    dynamic_smem: int = 0
    persistent: bool = False
    cluster: int = 1  # blocks per thread-block cluster (the kernel's __cluster_dims__), along x
    # programmatic dependent launch (farm/measure/dependent_launch.py): it may start before the kernel before it
    # ends, so it runs griddepcontrol.wait before it touches global memory
    dependent: bool = False
    # per-shape choices made on the host (`plan`); module-level: stages travel by pickle
    planner: Callable[[int, int, int, int], LaunchPlan] | None = None

    def plan(self, m: int, n: int, k: int, sm_count: int) -> LaunchPlan:
        """The host's choices for an m x n x k product on a chip of `sm_count` SMs (none without a planner)."""
        if self.planner is None:
            return NO_PLAN
        return self.planner(m, n, k, math.prod(self.grid(m, n, sm_count)))

    def block(self) -> tuple[int, int, int]:
        t = self.threads if isinstance(self.threads, tuple) else (self.threads, 1)
        return (t[0], t[1], 1)

    def grid(self, m: int, n: int, sm_count: int = 0) -> tuple[int, int, int]:
        if self.persistent:
            return (
                min(
                    sm_count // self.cluster,
                    cdiv(cdiv(n, self.tile_n) * cdiv(m, self.tile_m) * self.splits, self.cluster),
                )
                * self.cluster,
                1,
                1,
            )
        return (cdiv(n, self.tile_n), cdiv(m, self.tile_m), self.splits)

    def describe_grid(self) -> str:
        if self.persistent and self.cluster > 1:
            return "(%d * min(SMs / %d, ceil(ceil(N/%d) * ceil(M/%d) / %d)), 1, 1) in clusters of %d" % (
                self.cluster,
                self.cluster,
                self.tile_n,
                self.tile_m,
                self.cluster,
                self.cluster,
            )
        if self.persistent:
            if self.splits > 1:
                return "(min(SMs, ceil(N/%d) * ceil(M/%d) * %d), 1, 1)" % (self.tile_n, self.tile_m, self.splits)
            return "(min(SMs, ceil(N/%d) * ceil(M/%d)), 1, 1)" % (self.tile_n, self.tile_m)
        return "(ceil(N/%d), ceil(M/%d), %d)" % (self.tile_n, self.tile_m, self.splits)


@dataclass(frozen=True, kw_only=True)
class Measured:
    """What the farm measures, kernel or library: the fields a row, a plan and a report read of either."""

    is_baseline: ClassVar[bool]
    name: str
    family: str
    walk: str
    group: str  # ladder | traits | did_not_pan_out | geometry | tuning | baseline | baseline_extra
    position: int
    what_changed: str
    dtype: str = "fp32"  # input precision; output is always fp32
    baseline: str = "cublas_fp32"  # the library a kernel's % is against (a baseline: its own name)
    shapes: ShapeRule = field(default_factory=ShapeRule)
    min_cc: int = 70  # compute capability as major*10+minor
    published: Published | None = None

    def flops(self, m: int, n: int, k: int) -> int:
        return 2 * m * n * k

    def workspace_floats(self, m: int, n: int, k: int, sm_count: int) -> int:
        """Floats of workspace W an m x n x k cell needs on a chip of `sm_count` SMs."""
        return 0

    def padded_n(self, n: int) -> int:
        """The N its launches run at for an N-column product (a Stage's `pad_n_to`; a library: N itself)."""
        return n

    def describe_shapes(self) -> str:
        return self.shapes.describe()

    def unsupported_reason(self, m: int, n: int, k: int, cc: int) -> str | None:
        if cc < self.min_cc:
            return f"needs compute capability {self.min_cc / 10:.1f}, device has {cc / 10:.1f}"
        return self.shapes.rejects(m, n, k)

    def _describe(self) -> dict:
        return {
            "name": self.name,
            "family": self.family,
            "walk": self.walk,
            "group": self.group,
            "position": self.position,
            "dtype": self.dtype,
            "baseline": self.baseline,
        }


@dataclass(frozen=True, kw_only=True)
class Stage(Measured):
    """A kernel stage of an optimisation ladder: a numbered .cu file of a family folder and how it is launched."""

    is_baseline: ClassVar[bool] = False
    source_path: Path  # the .cu file: kernels/<family>/NN_name.cu
    launches: tuple[Launch, ...]
    workspace_floats_per_mn: int = 0  # split-K partials: workspace = this * M * N floats (a planned launch: its plan's)
    requires_arch: str | None = None  # e.g. "sm_90a": compiled for that arch-specific target alone
    # N not a multiple of this runs padded: B copied into a zero-padded K x padded_n(N) buffer and C out of an
    # M x padded_n(N) one, inside the timed sequence (farm/measure/padding.py)
    pad_n_to: int = 1
    # preprocessor defines (NAME or NAME=VALUE): one source built as several stages (walk F's E4M3 x E5M2 stages)
    defines: tuple[str, ...] = ()

    @property
    def compile_options(self) -> tuple[str, ...]:
        """NVRTC options of this stage's own, beside the farm's (farm/measure/compiler.py)."""
        return tuple(f"-D{d}" for d in self.defines)

    @property
    def source(self) -> str:
        """The source as the catalog names it: <family folder>/<file>."""
        return f"{self.source_path.parent.name}/{self.source_path.name}"

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(l.kernel for l in self.launches))

    def workspace_floats(self, m: int, n: int, k: int, sm_count: int) -> int:
        n = self.padded_n(n)  # what the launches see
        planned = [l.plan(m, n, k, sm_count).workspace_floats for l in self.launches if l.planner is not None]
        return max(planned) if planned else self.workspace_floats_per_mn * m * n

    def padded_n(self, n: int) -> int:
        return cdiv(n, self.pad_n_to) * self.pad_n_to

    def describe_shapes(self) -> str:
        rule = self.shapes.describe()
        if self.pad_n_to == 1:
            return rule
        return f"{rule}, any N (pad to {self.pad_n_to})"  # farm/measure/padding.py

    @property
    def takes_workspace(self) -> bool:
        return any("W" in l.args for l in self.launches)

    def compile_arch(self, arch: str) -> str | None:
        """The target to compile for on a chip of `arch` (sm_XX), or None where the stage cannot run there."""
        if self.requires_arch is None:
            return arch
        return self.requires_arch if self.requires_arch.rstrip("a") == arch.rstrip("a") else None

    def unsupported_reason(self, m: int, n: int, k: int, cc: int) -> str | None:
        if self.compile_arch(f"sm_{cc}") is None:
            return f"needs {self.requires_arch} (Hopper's wgmma/TMA/setmaxnreg), this GPU is sm_{cc}"
        return super().unsupported_reason(m, n, k, cc)

    def describe(self) -> dict:
        """A JSON-ready description (for `farm catalog --json` and the dashboard)."""
        first = self.launches[0]
        return {
            **self._describe(),
            "source": self.source,
            "kernels": list(self.kernel_names),
            "threads_per_block": math.prod(first.block()),
            "block_tile": [first.tile_m, first.tile_n],
            "grid": first.describe_grid(),
            "launches": len(self.launches),
            "dynamic_smem_bytes": first.dynamic_smem,
            "shapes": self.describe_shapes(),
            "min_compute_capability": self.min_cc / 10,
            "requires_arch": self.requires_arch,
            "defines": list(self.defines),
            "what_changed": self.what_changed,
            "published": None if self.published is None else self.published.__dict__,
        }


@dataclass(frozen=True, kw_only=True)
class Baseline(Measured):
    """A library GEMM every kernel of its precision class is compared with, itself timed like a stage.

    Catalog data only (kernels/baselines.py): farm/measure/cublas.py and extra_baselines.py run it.
    """

    is_baseline: ClassVar[bool] = True
    family: str = "baseline"
    walk: str = "-"
    library: str  # cuBLAS, cuBLASLt, PyTorch or Triton
    compute_type: str  # cuBLAS's compute type (CUBLAS_COMPUTE_32F...), or what PyTorch / Triton compute

    def describe(self) -> dict:
        return {
            **self._describe(),
            "library": self.library,
            "compute_type": self.compute_type,
            "shapes": self.shapes.describe(),
            "min_compute_capability": self.min_cc / 10,
            "what_changed": self.what_changed,
            "published": None,
        }
