"""Stage 11's plan (d_host_plan), made once per shape on the host and passed to the kernel as WIDTH, DP and SK.

The cost model is 09's (`stream_k::plan_cost` in 09_stream_k.cu, which 09 keeps so that its CUBIN stays the same):
for each tile width, 256, 128 or 64 columns, either whole waves of tiles, or the whole waves and then the last
`tiles % blocks` tiles (all of them where tiles < blocks) as stream-K, their k tiles laid end to end and cut into
one range per block. Each candidate is costed in estimated k-tile times a block; the cheapest wins, ties to the
wider tile, then to whole waves. The one change: 09 caps blocks at 256 and K at 8192 k tiles to keep its 32-bit
range arithmetic (`Schedule::begin`) from overflowing; here the bound itself, sk * KT * blocks < 2^31, is checked.
The workspace is sized from the plan: the most segments a shared tile can be cut into, planes of M x N floats, and
none where nothing is shared (08-10 always get 8 planes). Stage 16's plan is the same with a stream-K k tile priced
at STREAM_K_PRICE whole ones'; 17's is 16's, or whole 64-row tiles where those cost less (half_launch_plan); 20's is
17's, or 256 x 192 tiles, whole or with stream-K, where those cost less (tall_launch_plan); 21's is 20's with the
height of its tile order's groups chosen by `wave_reads` (ordered_launch_plan); 22's is 21's, or 256 x 192 tiles over the
first spans of SPAN columns beside 128 x 256 tiles over the rest, all whole, where those cost less (mixed_launch_plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.stage import LaunchPlan, cdiv

BM, BK = 128, 64  # a tile's rows, a k tile's depth (kernels/common/persistent_ws.cuh)
HALF_ROWS = 64  # 17's whole tiles of 64 rows (kernels/common/stream_k.cuh's ROWS)
TALL_ROWS, TALL_WIDTH = 256, 192  # 20's tall tiles (kernels/common/host_plan.cuh), 128 rows a consumer warpgroup
SPLITS = (2, 3, 4)  # 20's stream-K ranges: a half, a third or a quarter of a tile
# ... each at least 64 k tiles: at the LLM shapes (run h100-tall5) ranges of 16-32 k tiles lost 3-9 points to 19, ranges
# of 64 or more gained, their fix-up (a 256 x 192 partial out and back through L2) too dear for shorter ranges
MIN_SPLIT_KT = 64
WIDTHS = (256, 128, 64)  # tile widths, widest first (the preferred on a tie)
MAX_SEGMENTS = 8  # a shared tile's segments at most: its workspace planes
ARRIVALS = 8 * 1024  # arrival counters (persistent_ws::ARRIVALS), one a consumer warp of a shared tile: 16 rows
INT32 = 2**31  # the kernel's range arithmetic is 32-bit
GROUP = 16  # tile rows a group of the grouped tile order (persistent_ws::GROUP), 21's on a tie
MAX_GROUP = 32  # 21's tallest: a wave of 132 tiles reads least near sqrt(132 x width / rows) rows, 23 at most
SPAN = 768  # 22's tall (192) and wide (256) tile columns meet at its multiples (22_mixed_tiles.cu)
# 16's price of a stream-K k tile in whole tiles' k-tile times: on an H100 12's stream-K plans took 1.8-3.1 times as
# long a k tile as whole tiles of the same width, and read A and B from DRAM up to 8 times over (README.md, 16);
# 11, 12 and 15 keep 1.
STREAM_K_PRICE = 2


@dataclass(frozen=True)
class Plan:
    """One candidate: tiles `width` columns wide, the first `dp` walked whole, the next `sk` shared (stream-K) in
    at most `segments` pieces each, at `cost` estimated k-tile times a block."""

    width: int
    dp: int
    sk: int
    segments: int
    cost: int

    def workspace_floats(self, m: int, n: int) -> int:
        return self.segments * m * n if self.sk else 0


def candidate(
    m: int, n: int, k: int, blocks: int, width: int, stream_k: bool, price: int = 1, rows: int = BM, split: int = 0
) -> Plan | None:
    """The plan of `rows` x `width` tiles, whole waves only or with stream-K (its k tiles at `price` whole ones'), or
    None where it may not run. `split` (20): blocks / split tiles shared, so that each block's range is exactly
    1 / split of a tile's k tiles, the same part of each, read at the same time; the whole tiles before them in
    waves that may end part full."""
    tiles, kt = cdiv(m, rows) * cdiv(n, width), cdiv(k, BK)
    tile_k = width * rows // BM + 32  # a k tile's width term, in 128-row tiles' columns, and its fixed costs
    if not stream_k:  # 07's model: waves x k tiles x (width + 32), the 32 standing for a k tile's fixed costs
        return Plan(width, tiles, 0, 1, cdiv(tiles, blocks) * kt * tile_k)
    if split:
        if blocks % split or kt % split or kt // split < MIN_SPLIT_KT or blocks // split >= tiles:
            return None
        sk = blocks // split
    elif tiles % blocks == 0:  # whole waves already fill every block
        return None
    else:
        sk = tiles if tiles < blocks else tiles % blocks
    total = sk * kt
    least = total // blocks  # the shortest range; the longest is one more
    if least < 1 or total * blocks >= INT32 or sk > ARRIVALS // (rows // 16):
        return None
    segments = (kt - 1) // least + 2  # a tile's interior holds range starts at least `least` apart
    if segments > MAX_SEGMENTS:
        return None
    # Fix-up: two partial tiles written and `segments` read back, floats at twice a k tile's (rows + width) x BK
    # 16-bit load rate; plus one for the fences and the count.
    fixup = 1 + cdiv((2 + segments) * min(m, rows) * width * 4, 2 * (rows + width) * BK * 2)
    dp = tiles - sk
    return Plan(width, dp, sk, segments, (cdiv(dp, blocks) * kt + cdiv(total, blocks) * price + fixup) * tile_k)


def plan(m: int, n: int, k: int, blocks: int, price: int = 1) -> Plan:
    """The cheapest candidate for an m x n x k product on `blocks` persistent blocks (ties: the earlier in
    WIDTHS, whole waves before stream-K); 256 columns in whole waves always runs."""
    found = [c for w in WIDTHS for sk in (False, True) if (c := candidate(m, n, k, blocks, w, sk, price)) is not None]
    return min(found, key=lambda c: c.cost)  # min keeps the first of equals


def launch_plan(m: int, n: int, k: int, blocks: int, price: int = 1) -> LaunchPlan:
    """d_host_plan's launch arguments and workspace (kernels.stage.Launch.planner); 16's with `price`."""
    p = plan(m, n, k, blocks, price)
    return LaunchPlan({"WIDTH": p.width, "DP": p.dp, "SK": p.sk}, p.workspace_floats(m, n))


def half_cost(m: int, n: int, k: int, blocks: int, width: int) -> int:
    """17's whole 64-row tiles `width` wide, in estimated k-tile times a block: a k tile at half a 128-row tile's
    width term (half its math; at the shapes it is for, half the bytes of A) and the same fixed 32."""
    return cdiv(cdiv(m, HALF_ROWS) * cdiv(n, width), blocks) * cdiv(k, BK) * (width // 2 + 32)


def half_plan(m: int, n: int, k: int, blocks: int) -> tuple[int, Plan]:
    """17's tile rows and plan: 16's plan, or the cheapest whole 64-row tiles where they cost less (ties: 16's, then
    the wider tile), walked whole with no workspace."""
    whole = plan(m, n, k, blocks, STREAM_K_PRICE)
    costs = {w: half_cost(m, n, k, blocks, w) for w in WIDTHS}
    width = min(costs, key=costs.get)  # min keeps the first of equals: the wider
    if costs[width] < whole.cost:
        return HALF_ROWS, Plan(width, cdiv(m, HALF_ROWS) * cdiv(n, width), 0, 1, costs[width])
    return BM, whole


def tall_plan(m: int, n: int, k: int, blocks: int) -> tuple[int, Plan]:
    """20's: 17's, or 256 x 192 tiles where those cost less: whole, with stream-K at 16's price, or with stream-K in
    ranges of a half, a third or a quarter of a tile (`split`) at whole tiles' price (ties: 17's, then that order)."""
    rows, best = half_plan(m, n, k, blocks)
    tall = [candidate(m, n, k, blocks, TALL_WIDTH, sk, STREAM_K_PRICE, TALL_ROWS) for sk in (False, True)]
    tall += [candidate(m, n, k, blocks, TALL_WIDTH, True, 1, TALL_ROWS, split) for split in SPLITS]
    for c in tall:
        if c is not None and c.cost < best.cost:
            rows, best = TALL_ROWS, c
    return rows, best


def _rows_launch(m: int, n: int, rows: int, p: Plan) -> LaunchPlan:
    return LaunchPlan({"ROWS": rows, "WIDTH": p.width, "DP": p.dp, "SK": p.sk}, p.workspace_floats(m, n))


def half_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_half_tiles's ROWS, WIDTH, DP, SK and workspace (half_plan)."""
    return _rows_launch(m, n, *half_plan(m, n, k, blocks))


def tall_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_tall_tiles's ROWS, WIDTH, DP, SK and workspace (tall_plan)."""
    return _rows_launch(m, n, *tall_plan(m, n, k, blocks))


def wave_reads(tiles_m: int, tiles_n: int, blocks: int, rows: int, p: Plan, group: int) -> int:
    """Rows of A plus columns of B that the blocks read in each wave of `p`'s tiles, summed over the waves, with the
    tiles walked `group` tile rows at a time, down the rows first (hopper.cuh's grouped_tile): the waves' A and B
    panels, which DRAM delivers about once a wave where a wave's k tiles stay in L2. Whole tiles go round-robin, a
    wave of `blocks` at a time; the stream-K tiles after them are shared by all the blocks at once, one wave."""
    waves = [(a, min(a + blocks, p.dp)) for a in range(0, p.dp, blocks)] + ([(p.dp, p.dp + p.sk)] if p.sk else [])
    per_group, total = group * tiles_n, 0
    for a, b in waves:
        for g in range(a // per_group, (b - 1) // per_group + 1):  # each group the wave meets: its tiles [i0, i1)
            down = min(group, tiles_m - g * group)  # the group's rows: its columns' height
            i0, i1 = max(a - g * per_group, 0), min(b - g * per_group, per_group)
            total += min(down, i1 - i0) * rows + ((i1 - 1) // down - i0 // down + 1) * p.width
    return total


def ordered_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_tile_order's: 20's plan (tall_plan) and GROUP, the group height whose waves read least (wave_reads; ties:
    GROUP, then the lower)."""
    rows, p = tall_plan(m, n, k, blocks)
    tiles_m, tiles_n = cdiv(m, rows), cdiv(n, p.width)
    reads = {g: wave_reads(tiles_m, tiles_n, blocks, rows, p, g) for g in range(1, MAX_GROUP + 1)}  # past tiles_m: all
    group = min(reads, key=lambda g: (reads[g], g != GROUP, g))
    twenty = _rows_launch(m, n, rows, p)
    return LaunchPlan({**twenty.args, "GROUP": group}, twenty.workspace_floats)


def mixed_tiles(m: int, n: int, spans: int) -> tuple[int, int]:
    """22's 256 x 192 tiles over the first `spans` x SPAN columns, and all its tiles, 128 x 256 over the rest."""
    tall = cdiv(m, TALL_ROWS) * spans * (SPAN // TALL_WIDTH)
    return tall, tall + cdiv(m, BM) * cdiv(n - spans * SPAN, WIDTHS[0])


def mixed_cost(m: int, n: int, k: int, blocks: int, spans: int) -> int:
    """22's tiles (mixed_tiles) in estimated k-tile times a block (07's model, as `candidate`'s), walked round-robin,
    the tall ones first. Block 0 holds the most of both, so its sum is the launch's."""
    tall, units = mixed_tiles(m, n, spans)
    tall_k, wide_k = TALL_WIDTH * TALL_ROWS // BM + 32, WIDTHS[0] + 32
    first_talls = cdiv(tall, blocks)
    return cdiv(k, BK) * (first_talls * tall_k + (cdiv(units, blocks) - first_talls) * wide_k)


def mixed_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_mixed_tiles's: SPANS, the spans of SPAN columns in tall tiles, the rest in wide ones, where some split of N
    costs less than 21's plan (the fewest spans on a tie); else 21's plan (ordered_launch_plan) with SPANS 0."""
    costs = {spans: mixed_cost(m, n, k, blocks, spans) for spans in range(1, cdiv(n, SPAN))}  # wide tiles left
    spans = min(costs, key=costs.get, default=0)
    if spans and costs[spans] < tall_plan(m, n, k, blocks)[1].cost:
        units = mixed_tiles(m, n, spans)[1]
        return LaunchPlan({"ROWS": TALL_ROWS, "WIDTH": WIDTHS[0], "DP": units, "SK": 0, "GROUP": GROUP, "SPANS": spans})
    ordered = ordered_launch_plan(m, n, k, blocks)
    return LaunchPlan({**ordered.args, "SPANS": 0}, ordered.workspace_floats)
