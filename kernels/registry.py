"""What a kernel stage is: its source, launch geometry, supported shapes and published figure.

Each family folder (kernels/<family>/) holds numbered .cu files and a ``stages.py``
that lists its Stage objects in ladder order; ``catalog()`` gathers every family.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent
COMMON_INCLUDE_DIR = KERNELS_DIR / "common"


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
        parts = [f"{d} % {s} == 0" for d, s in (("M", self.m_multiple), ("N", self.n_multiple), ("K", self.k_multiple)) if s > 1]
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
class Launch:
    """One kernel launch of a stage. Arguments are named, resolved by the harness:

    A, B, C: device matrices; W: the stage's workspace; M, N, K, SPLITS: ints;
    TMA_A, TMA_B: tensor maps over A and B (farm/measure/tma.py); SCALE_A, SCALE_B: FP8 stages' per-tensor
    dequantisation factors, one float each on the device.
    The grid covers C in tiles: (cdiv(N, tile_n), cdiv(M, tile_m), splits); a persistent
    launch is one block per SM (fewer if there are fewer tiles), each looping over tiles.
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

    def block(self) -> tuple[int, int, int]:
        t = self.threads if isinstance(self.threads, tuple) else (self.threads, 1)
        return (t[0], t[1], 1)

    def grid(self, m: int, n: int, sm_count: int = 0) -> tuple[int, int, int]:
        if self.persistent:
            return (min(sm_count // self.cluster, cdiv(cdiv(n, self.tile_n) * cdiv(m, self.tile_m), self.cluster)) * self.cluster, 1, 1)
        return (cdiv(n, self.tile_n), cdiv(m, self.tile_m), self.splits)

    def describe_grid(self) -> str:
        if self.persistent and self.cluster > 1:
            return "(%d * min(SMs / %d, ceil(ceil(N/%d) * ceil(M/%d) / %d)), 1, 1) in clusters of %d" % (
                self.cluster, self.cluster, self.tile_n, self.tile_m, self.cluster, self.cluster)
        if self.persistent:
            return "(min(SMs, ceil(N/%d) * ceil(M/%d)), 1, 1)" % (self.tile_n, self.tile_m)
        return "(ceil(N/%d), ceil(M/%d), %d)" % (self.tile_n, self.tile_m, self.splits)


@dataclass(frozen=True)
class Stage:
    """A kernel stage of an optimisation ladder."""

    name: str
    family: str
    walk: str
    group: str  # ladder | traits | did_not_pan_out | geometry
    position: int
    source: str  # path relative to kernels/
    launches: tuple[Launch, ...]
    what_changed: str
    dtype: str = "fp32"  # input precision; output is always fp32
    baseline: str = "cublas_fp32"
    shapes: ShapeRule = field(default_factory=ShapeRule)
    min_cc: int = 70  # compute capability as major*10+minor
    published: Published | None = None
    workspace_floats_per_mn: int = 0  # split-K partials: workspace = this * M * N floats
    cublas_compute: str | None = None  # set on vendor baselines: the cuBLAS compute type they run with
    library: str = ""  # set on baselines: the library that computes them (cuBLAS, cuBLASLt, PyTorch, Triton)
    requires_arch: str | None = None  # e.g. "sm_90a": compiled for that arch-specific target alone

    @property
    def source_path(self) -> Path:
        return KERNELS_DIR / self.source

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(l.kernel for l in self.launches))

    def workspace_floats(self, m: int, n: int) -> int:
        return self.workspace_floats_per_mn * m * n

    def flops(self, m: int, n: int, k: int) -> int:
        return 2 * m * n * k

    def compile_arch(self, arch: str) -> str | None:
        """The target to compile for on a chip of `arch` (sm_XX), or None where the stage cannot run there."""
        if self.requires_arch is None:
            return arch
        return self.requires_arch if self.requires_arch.rstrip("a") == arch.rstrip("a") else None

    def unsupported_reason(self, m: int, n: int, k: int, cc: int) -> str | None:
        if self.compile_arch(f"sm_{cc}") is None:
            return f"needs {self.requires_arch} (Hopper's wgmma/TMA/setmaxnreg), this GPU is sm_{cc}"
        if cc < self.min_cc:
            return f"needs compute capability {self.min_cc / 10:.1f}, device has {cc / 10:.1f}"
        return self.shapes.rejects(m, n, k)

    @property
    def is_baseline(self) -> bool:
        return self.cublas_compute is not None

    def describe(self) -> dict:
        """A JSON-ready description (for `farm catalog --json` and the dashboard)."""
        if self.is_baseline:
            return {"name": self.name, "family": self.family, "walk": self.walk, "group": self.group,
                    "position": self.position, "dtype": self.dtype, "baseline": self.baseline,
                    "library": self.library, "compute_type": self.cublas_compute,
                    "shapes": self.shapes.describe(), "min_compute_capability": self.min_cc / 10,
                    "what_changed": self.what_changed, "published": None}
        first = self.launches[0]
        return {
            "name": self.name,
            "family": self.family,
            "walk": self.walk,
            "group": self.group,
            "position": self.position,
            "dtype": self.dtype,
            "baseline": self.baseline,
            "source": self.source,
            "kernels": list(self.kernel_names),
            "threads_per_block": math.prod(first.block()),
            "block_tile": [first.tile_m, first.tile_n],
            "grid": first.describe_grid(),
            "launches": len(self.launches),
            "dynamic_smem_bytes": first.dynamic_smem,
            "shapes": self.shapes.describe(),
            "min_compute_capability": self.min_cc / 10,
            "requires_arch": self.requires_arch,
            "what_changed": self.what_changed,
            "published": None if self.published is None else self.published.__dict__,
        }


def catalog() -> list[Stage]:
    """Every stage: baselines, then each family folder's stages.py (its ORDER, then ladder order)."""
    import importlib

    from kernels.baselines import BASELINES

    modules = [importlib.import_module(f"kernels.{p.parent.name}.stages") for p in sorted(KERNELS_DIR.glob("*/stages.py"))]
    stages = [*BASELINES]
    for module in sorted(modules, key=lambda m: m.ORDER):
        stages += module.STAGES
    names = [s.name for s in stages]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise RuntimeError(f"stage names must be unique, repeated: {sorted(duplicated)}")
    return stages


@functools.lru_cache(maxsize=None)  # the catalog is built per call: workers look a stage up per cell
def stage_named(name: str) -> Stage:
    """Any stage by name: the catalog's, or a tile configuration of a tunable kernel (kernels/tuning.py)."""
    from kernels import tuning

    stage = next((s for s in catalog() if s.name == name), None) or tuning.find(name)
    if stage is None:
        raise KeyError(f"unknown stage {name}")
    return stage


def select(names: list[str] | None = None, families: list[str] | None = None) -> list[Stage]:
    """Stages named in `names` and every stage of `families` (both given: the union), in catalog order; neither
    given: every stage. Unknown names raise one error listing the valid ones."""
    stages = catalog()
    known_families = sorted({s.family for s in stages})
    unknown = [f for f in families or () if f not in known_families]
    if unknown:
        raise KeyError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; valid: {', '.join(known_families)}")
    by_name = {s.name: s for s in stages}
    unknown = [n for n in names or () if n not in by_name]
    if unknown:
        raise KeyError(f"unknown kernel{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; valid: {', '.join(by_name)}")
    if not names and not families:
        return stages
    return [s for s in stages if s.name in set(names or ()) or s.family in set(families or ())]
