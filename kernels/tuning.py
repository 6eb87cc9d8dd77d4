"""Tile autotuning for walk C: candidate configurations of the tunable kernels, checked before compiling.

A tunable kernel is a ladder stage whose source is a template over its tile
(BM x BN x BK block, WM x WN warp tile, STAGES shared-memory buffers):

  c_warptile                 simt_fp32_c/06 (STAGES 1: load then compute; 2: register-staged double buffer)
  h_wmma_dbuf_fp16 / _bf16   half_c/03 (always 2 buffers: the tag says s2)
  h_wmma_pipe_fp16 / _bf16   half_c/04 (cp.async ring of STAGES buffers)

Each kernel has a grid of candidates; `candidates()` returns every one with the reason
it is rejected (None when valid), so a rejected configuration is never compiled.
Valid ones become Stage objects in group "tuning", named
<kernel>_tune_<BM>x<BN>x<BK>_<WM>x<WN>_s<STAGES>, with the tuned kernel's family,
baseline and shape rule. They are not in catalog(): plans ask for them with
`tune = [...]` (farm/plan.py) and `python -m farm compile --tuning` compiles them.

Validity depends on the arch only through shared memory: `arch=None` means valid on
every CI arch (what a plan runs on a mixed cluster); `arch="sm_90"` admits the
configurations that only fit its 227 KB.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from kernels.half_c import stages as half
from kernels.simt_fp32_c import stages as fp32
from kernels.stage import Stage

# Largest dynamic shared memory one block may opt in to, per arch (CUDA programming guide, compute capabilities).
SMEM_LIMIT = {
    "sm_70": 96 * 1024,
    "sm_75": 64 * 1024,
    "sm_80": 163 * 1024,
    "sm_86": 99 * 1024,
    "sm_87": 163 * 1024,
    "sm_89": 99 * 1024,
    "sm_90": 227 * 1024,
    "sm_100": 227 * 1024,
    "sm_120": 99 * 1024,
}
PORTABLE_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_120")  # farm.measure.compiler.CI_ARCHS
REGISTERS_PER_SM = 65536
MAX_REGISTERS = 255  # per thread; above it ptxas spills to local memory


@dataclass(frozen=True)
class Config:
    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    stages: int

    @property
    def tag(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}_{self.wm}x{self.wn}_s{self.stages}"

    @property
    def warps(self) -> int:
        return (self.bm // self.wm) * (self.bn // self.wn) if self.bm % self.wm == 0 and self.bn % self.wn == 0 else 0

    @property
    def threads(self) -> int:
        return 32 * self.warps


TUNE_SEP = "_tune_"


def stage_name(kernel: str, config: Config) -> str:
    """A configuration's stage name: <kernel>_tune_<BMxBNxBK_WMxWN_sS>."""
    return f"{kernel}{TUNE_SEP}{config.tag}"


def split_name(name) -> tuple[str, str] | None:
    """(tuned kernel, configuration tag) of a tuning stage's name; None for any other name (or a non-string)."""
    kernel, sep, tag = str(name).partition(TUNE_SEP)
    return (kernel, tag) if sep and kernel and tag else None


@dataclass(frozen=True)
class Candidate:
    """One configuration of a tunable kernel: `reason` says why it is rejected, None when valid."""

    kernel: str
    config: Config
    reason: str | None
    smem_bytes: int
    registers_estimate: int

    @property
    def name(self) -> str:
        return stage_name(self.kernel, self.config)


@dataclass(frozen=True)
class Tunable:
    kernel: str  # the ladder stage tuned
    space: Callable[[], Iterable[Config]]
    smem: Callable[[Config], int]
    registers: Callable[[Config], int]
    structure: Callable[[Config], str | None]  # divisibility and thread-count rules of the template
    launch: Callable[[Config], object]


def _div(what: str, a: int, b: int) -> str | None:
    return None if b and a % b == 0 else f"{what}: {a} is not a multiple of {b}"


def _first(*reasons: str | None) -> str | None:
    return next((r for r in reasons if r), None)


# --- c_warptile (common/walkc_warptile.cuh) -------------------------------------------------------------------
BLOCKS = ((64, 64), (64, 128), (128, 64), (128, 128), (128, 256), (256, 128))  # (BM, BN) searched
WARPS_SEARCHED = (4, 8)  # warps per block searched (128 or 256 threads)


def _warps_rule(c: Config) -> str | None:
    lo, hi = WARPS_SEARCHED
    return (
        None
        if lo <= c.warps <= hi
        else f"{c.warps} warp{'s' if c.warps != 1 else ''} per block: outside the {lo}..{hi} searched"
    )


def _warptile_space() -> Iterable[Config]:
    for (bm, bn), bk, (wm, wn), s in itertools.product(BLOCKS, (8, 16, 32), ((32, 64), (64, 64)), (1, 2)):
        yield Config(bm, bn, bk, wm, wn, s)


def _warptile_structure(c: Config) -> str | None:
    threads = c.threads
    return _first(
        _div("BM / WM", c.bm, c.wm),
        _div("BN / WN", c.bn, c.wn),
        _div("warp tile rows (16-row sub-tiles) WM", c.wm, 16),
        _div("warp tile columns (32-column sub-tiles) WN", c.wn, 32),
        None if c.stages in (1, 2) else f"stages {c.stages}: the SIMT warptile has 1 or 2 buffers",
        _warps_rule(c),
        _div("A tile copy: 16-row bands BM", c.bm, 16),
        _div("A tile copy: two 4-float chunks per row, BK", c.bk, 8),
        _div(f"A tile chunks BM*BK/4 = {c.bm * c.bk // 4} over threads", c.bm * c.bk // 4, threads),
        _div(f"B tile chunks BK*BN/4 = {c.bk * c.bn // 4} over threads", c.bk * c.bn // 4, threads),
    )


def _warptile_registers(c: Config) -> int:
    """Accumulators (WM*WN/32) + one k-step's A and B float4s + (2 stages) the next tile's staged chunks,
    counted twice, + 2*BK for the loads ptxas hoists from later steps of the unrolled k loop, + 40 for
    addressing. Calibrated against ptxas: every configuration that spilled (NVRTC 13.5 on sm_80/86/90/120,
    NVRTC 13.0 on an H200: the 64x64-warp, BK 32 single-stage tiles) estimates above 255."""
    threads = max(c.threads, 32)
    acc = c.wm * c.wn // 32
    frags = 4 * (c.wm // 16 + c.wn // 32)
    staged = 4 * (c.bm * c.bk + c.bk * c.bn) // 4 // threads if c.stages == 2 else 0
    return acc + frags + 2 * staged + 2 * c.bk + 40


# --- h_wmma_dbuf / h_wmma_pipe (common/walkc_wmma.cuh) --------------------------------------------------------
def _wmma_space(
    bks: tuple[int, ...], warp_tiles: tuple[tuple[int, int], ...], stages: tuple[int, ...]
) -> Callable[[], Iterable[Config]]:
    def space() -> Iterable[Config]:
        for (bm, bn), bk, (wm, wn), s in itertools.product(BLOCKS, bks, warp_tiles, stages):
            yield Config(bm, bn, bk, wm, wn, s)

    return space


def _wmma_structure(c: Config) -> str | None:
    threads = c.threads
    return _first(
        _div("BM / WM", c.bm, c.wm),
        _div("BN / WN", c.bn, c.wn),
        _div("WM (16x16 fragments)", c.wm, 16),
        _div("WN (16x16 fragments)", c.wn, 16),
        _div("BK (k steps of 16)", c.bk, 16),
        _warps_rule(c),
        _div(f"A tile chunks BM*BK/8 = {c.bm * c.bk // 8} over threads", c.bm * c.bk // 8, threads),
        _div(f"B tile chunks BK*BN/8 = {c.bk * c.bn // 8} over threads", c.bk * c.bn // 8, threads),
    )


def _wmma_registers(staged: bool) -> Callable[[Config], int]:
    def estimate(c: Config) -> int:
        """Accumulator fragments (8 floats per 16x16 per lane) + FM A fragments and one B fragment (4 registers
        each) + per 16-byte chunk a thread copies: its staged uint4 counted twice (register-staged copy) or
        its 3 address registers (cp.async), + 48 for addressing and margin. Calibrated like
        _warptile_registers: every configuration that spilled estimates above 255."""
        threads = max(c.threads, 32)
        fm, fn = c.wm // 16, c.wn // 16
        chunks = (c.bm * c.bk + c.bk * c.bn) // 8 // threads
        return 8 * fm * fn + 4 * (fm + 1) + (8 if staged else 3) * chunks + 48

    return estimate


def _dbuf(dtype: str) -> Tunable:
    t = half.DTYPES[dtype][0]
    return Tunable(
        kernel=f"h_wmma_dbuf_{dtype}",
        space=_wmma_space((16, 32, 64), ((32, 32), (32, 64), (64, 32), (64, 64)), (2,)),
        smem=lambda c: half.wmma_smem(c.bm, c.bn, c.bk, c.wm, c.wn, 2),
        registers=_wmma_registers(True),
        structure=_wmma_structure,
        launch=lambda c: half.dbuf_launch(t, c.bm, c.bn, c.bk, c.wm, c.wn),
    )


def _pipe(dtype: str) -> Tunable:
    t = half.DTYPES[dtype][0]
    return Tunable(
        kernel=f"h_wmma_pipe_{dtype}",
        space=_wmma_space((32, 64), ((32, 64), (64, 32), (64, 64)), (2, 3, 4)),
        smem=lambda c: half.wmma_smem(c.bm, c.bn, c.bk, c.wm, c.wn, c.stages),
        registers=_wmma_registers(False),
        structure=_wmma_structure,
        launch=lambda c: half.pipe_launch(t, c.bm, c.bn, c.bk, c.wm, c.wn, c.stages),
    )


TUNABLES: dict[str, Tunable] = {
    t.kernel: t
    for t in (
        Tunable(
            kernel="c_warptile",
            space=_warptile_space,
            smem=lambda c: fp32.warptile_smem(c.bm, c.bn, c.bk, c.stages),
            registers=_warptile_registers,
            structure=_warptile_structure,
            launch=lambda c: fp32.warptile_launch(c.bm, c.bn, c.bk, c.wm, c.wn, c.stages),
        ),
        _dbuf("fp16"),
        _dbuf("bf16"),
        _pipe("fp16"),
        _pipe("bf16"),
    )
}


def _smem_limit(arch: str | None) -> tuple[int, str]:
    if arch is None:
        limit = min(SMEM_LIMIT[a] for a in PORTABLE_ARCHS)
        return limit, f"the {limit // 1024} KB every CI arch ({', '.join(PORTABLE_ARCHS)}) allows"
    if arch not in SMEM_LIMIT:
        raise ValueError(f"no shared-memory limit known for {arch}; known: {', '.join(SMEM_LIMIT)}")
    return SMEM_LIMIT[arch], f"the {SMEM_LIMIT[arch] // 1024} KB of {arch}"


def _check(t: Tunable, c: Config, arch: str | None) -> Candidate:
    reason = t.structure(c)
    smem = t.smem(c) if reason is None else 0
    regs = t.registers(c) if reason is None else 0
    if reason is None:
        limit, where = _smem_limit(arch)
        if smem > limit:
            reason = f"needs {smem} bytes of shared memory, over {where}"
        elif regs > MAX_REGISTERS:
            reason = f"needs ~{regs} registers per thread (estimate), over {MAX_REGISTERS}: would spill"
        elif regs * c.threads > REGISTERS_PER_SM:
            reason = (
                f"~{regs} registers x {c.threads} threads = {regs * c.threads}, over the {REGISTERS_PER_SM} of an SM"
            )
    return Candidate(kernel=t.kernel, config=c, reason=reason, smem_bytes=smem, registers_estimate=regs)


def tunable(kernel: str) -> Tunable:
    if kernel not in TUNABLES:
        raise KeyError(f"kernel {kernel} has no tuning space; tunable: {', '.join(TUNABLES)}")
    return TUNABLES[kernel]


def candidates(kernel: str, arch: str | None = None) -> list[Candidate]:
    """Every configuration of `kernel`'s grid, valid or not, with the reason for each rejection."""
    t = tunable(kernel)
    return [_check(t, c, arch) for c in t.space()]


def _base(kernel: str) -> Stage:
    """The ladder stage `kernel` names, from its own family (the catalog gathers every family and this module)."""
    return next(s for s in (*fp32.STAGES, *half.STAGES) if s.name == kernel)


def make_stage(kernel: str, config: Config, base: Stage | None = None) -> Stage:
    """The tuning Stage of one configuration (not checked: see candidates()); `base` is the tuned ladder stage."""
    base, t = base or _base(kernel), tunable(kernel)
    c = config
    return replace(
        base,
        name=stage_name(kernel, c),
        group="tuning",
        launches=(t.launch(c),),
        published=None,
        what_changed=f"tuning {kernel}: {c.bm}x{c.bn}x{c.bk} block tile, {c.wm}x{c.wn} warp tile, "
        f"{c.threads} threads, {c.stages} shared-memory stage{'s' if c.stages > 1 else ''}",
    )


def tuning_stages(kernels: Iterable[str] | None = None, arch: str | None = None) -> list[Stage]:
    """Stages of the valid configurations of `kernels` (default: every tunable kernel), in grid order."""
    names = list(TUNABLES) if kernels is None else list(dict.fromkeys(kernels))
    for k in names:
        tunable(k)  # unknown names raise one KeyError listing the tunable kernels
    bases = {k: _base(k) for k in names}
    return [make_stage(k, cand.config, bases[k]) for k in names for cand in candidates(k, arch) if cand.reason is None]


def find(name: str) -> Stage | None:
    """The tuning stage called `name` (valid on at least one known arch), or None."""
    kernel, tag = split_name(name) or (None, None)
    if kernel not in TUNABLES:
        return None
    for arch in (None, *SMEM_LIMIT):
        for cand in candidates(kernel, arch):
            if cand.reason is None and cand.config.tag == tag:
                return make_stage(kernel, cand.config)
    return None


def main(argv: list[str] | None = None) -> int:
    """`python -m kernels.tuning [KERNEL ...] [--arch sm_90] [--valid]`: the candidates, valid or with their reason."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m kernels.tuning", description=main.__doc__)
    p.add_argument("kernels", nargs="*", help=f"tunable kernels (default: all of {', '.join(TUNABLES)})")
    p.add_argument("--arch", help="judge shared memory against this arch (default: every CI arch)")
    p.add_argument("--valid", action="store_true", help="list only the valid configurations")
    args = p.parse_args(argv)
    for kernel in args.kernels or TUNABLES:
        cands = candidates(kernel, args.arch)
        print(f"{kernel}: {sum(c.reason is None for c in cands)} valid of {len(cands)} candidates")
        for c in cands:
            if c.reason is None:
                print(
                    f"  ok      {c.name:<48} {c.config.threads:>4} threads  {c.smem_bytes:>6} B smem  ~{c.registers_estimate} regs"
                )
            elif not args.valid:
                print(f"  reject  {c.name:<48} {c.reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
