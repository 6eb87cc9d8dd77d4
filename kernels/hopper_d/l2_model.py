"""An LRU model of L2 under walk D 19-22's plans: A and B's bytes a launch reads from DRAM.

The blocks walk their units (whole tiles round-robin, then stream-K; 22's tall tiles, then wide) a k tile at a time
in lock step, reading A in 64-row boxes and B in 64-column panels as TMA does (none past M or N); with GROUP (21,
22) odd units walk k backward. A miss in an LRU L2 of `l2_bytes` reads DRAM. At 25 MB (half the H100's L2) 19 /
20 / 21 read 1.22 / 1.11 / 0.92 GB at 8192^3; ncu 1.25 / 1.12 / 0.98 (README.md, 21).
"""

from __future__ import annotations

import sys
from collections import OrderedDict

from kernels.hopper_d.host_plan import BK, BM, GROUP, SPAN, TALL_ROWS, TALL_WIDTH, WIDTHS
from kernels.stage import cdiv

BOX = 64  # rows of A or columns of B an access
BYTES = BOX * BK * 2


def grouped_tile(t: int, tiles_m: int, tiles_n: int, group: int) -> tuple[int, int]:
    """hopper.cuh's: tile t's row and column."""
    per, first = group * tiles_n, t // (group * tiles_n) * group
    rows, i = min(group, tiles_m - first), t % per
    return first + i % rows, i // rows


def units(args: dict, m: int, n: int, k: int, blocks: int, b: int):
    """Block b's units in order: (row0, rows, col0, columns, k0, k1)."""
    kt, group = cdiv(k, BK), args.get("GROUP", GROUP)
    if args.get("SPANS"):  # 22's tall tiles, then wide, all whole
        cut = args["SPANS"] * SPAN
        kinds = [(TALL_ROWS, TALL_WIDTH, cdiv(m, TALL_ROWS), cut // TALL_WIDTH, 0)]
        kinds += [(BM, WIDTHS[0], cdiv(m, BM), cdiv(n - cut, WIDTHS[0]), cut)]
        for (rows, width, tiles_m, tiles_n, col), t in [(c, t) for c in kinds for t in range(c[2] * c[3])][b::blocks]:
            tm, tn = grouped_tile(t, tiles_m, tiles_n, group)
            yield tm * rows, rows, col + tn * width, width, 0, kt
        return
    rows, width, dp, sk = args.get("ROWS", BM), args["WIDTH"], args["DP"], args["SK"]
    whole = [(t, 0, kt) for t in range(b, dp, blocks)]
    x, end = sk * kt * b // blocks, sk * kt * (b + 1) // blocks  # stream_k.cuh's begin
    while x < end:
        j, k0 = divmod(x, kt)
        whole.append((dp + j, k0, min(kt, k0 + end - x)))
        x += whole[-1][2] - k0
    for t, k0, k1 in whole:
        tm, tn = grouped_tile(t, cdiv(m, rows), cdiv(n, width), group)
        yield tm * rows, rows, tn * width, width, k0, k1


def accesses(args: dict, m: int, n: int, k: int, blocks: int, b: int):
    """Block b's boxes, a k tile at a time."""
    for i, (r0, rows, c0, width, k0, k1) in enumerate(units(args, m, n, k, blocks, b)):
        for kk in range(k1 - 1, k0 - 1, -1) if "GROUP" in args and i % 2 else range(k0, k1):
            yield [("a", r, kk) for r in range(r0, min(r0 + rows, m), BOX)] + [
                ("b", c, kk) for c in range(c0, min(c0 + width, n), BOX)
            ]


def dram_bytes(args: dict, m: int, n: int, k: int, blocks: int, l2_bytes: int) -> int:
    """DRAM bytes of A and B under a walk D planner's `args`."""
    walks, cache, read = [accesses(args, m, n, k, blocks, b) for b in range(blocks)], OrderedDict(), 0
    while walks:
        steps = [next(w, None) for w in walks]
        walks = [w for w, s in zip(walks, steps) if s is not None]
        for key in (key for s in steps if s for key in s):
            if key in cache:
                cache.move_to_end(key)
                continue
            read, cache[key] = read + BYTES, None
            if len(cache) * BYTES > l2_bytes:
                cache.popitem(last=False)
    return read


def main(shape: str = "8192x8192x8192", l2_mb: str = "25") -> None:
    """`python -m kernels.hopper_d.l2_model [MxNxK] [L2 MB]`: 19-22's plans on 132 SMs, DRAM reads."""
    from kernels.registry import stage_named

    m, n, k = map(int, shape.split("x"))
    for stage in ("d_lean_k_loop_bf16", "d_tall_tiles_bf16", "d_tile_order_bf16", "d_mixed_tiles_bf16"):
        args = stage_named(stage).launches[0].plan(m, n, k, 132).args
        print(f"{stage} {args}: {dram_bytes(args, m, n, k, 132, int(float(l2_mb) * 2**20)) / 1e9:.3f} GB")


if __name__ == "__main__":
    main(*sys.argv[1:])
