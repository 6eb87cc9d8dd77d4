"""Walk D's host plans, made once per shape, passed to the kernel (11 on: WIDTH, DP, SK; later stages more).

11's cost model is 09's (`stream_k::plan_cost`, 09_stream_k.cu): tiles 256, 128 or 64 wide in whole waves, or whole
waves then the last `tiles % blocks` tiles (all if tiles < blocks) as stream-K, their k tiles end to end cut into a
range a block; costs in estimated k-tile times a block, the cheapest taken (`plan`). 09's caps (256 blocks, 8192 k
tiles) become the bound sk * KT * blocks < 2^31. Later stages (their X_launch_plan): 16, stream-K k tiles at
STREAM_K_PRICE; 17 (half), or whole 64-row tiles; 20 (tall), or 256 x 192 tiles; 21 (ordered), group height by
`wave_reads`; 22 (mixed), or tall tiles beside 128 x 256 ones; 23 (halves), or tall tiles, the last part-filled
round's in 128-row halves."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.stage import LaunchPlan, cdiv

BM, BK = 128, 64  # a tile's rows, a k tile's depth (kernels/common/persistent_ws.cuh)
HALF_ROWS = 64  # 17's whole-tile rows (kernels/common/stream_k.cuh's ROWS)
TALL_ROWS, TALL_WIDTH = 256, 192  # 20's tall tiles (kernels/common/host_plan.cuh), 128 rows a consumer warpgroup
TALL_K = TALL_WIDTH * TALL_ROWS // BM + 32  # 07's model: a tall k tile's cost (`candidate`'s tile_k)
SPLITS = (2, 3, 4)  # 20's stream-K ranges: 1/2, 1/3 or 1/4 of a tile
# ... each >= 64 k tiles: at the LLM shapes (h100-tall5) ranges of 16-32 lost 3-9 points to 19, 64+ gained: the
# fix-up (a 256 x 192 partial out and back through L2) too dear for shorter ones
MIN_SPLIT_KT = 64
WIDTHS = (256, 128, 64)  # widest first: preferred on a tie
MAX_SEGMENTS = 8  # a shared tile's segments at most: its workspace planes
ARRIVALS = 8 * 1024  # arrival counters (persistent_ws::ARRIVALS), one a consumer warp of a shared tile: 16 rows
INT32 = 2**31  # the kernel's range arithmetic is 32-bit
GROUP = 16  # tile rows a group in the grouped order (persistent_ws::GROUP); 21's on a tie
MAX_GROUP = 32  # 21's tallest: a wave of 132 tiles reads least near sqrt(132 x width / rows) rows, 23 at most
SPAN = 768  # 22's tall (192) and wide (256) tile columns meet at its multiples (22_mixed_tiles.cu)
# 16's price of a stream-K k tile in whole ones': on an H100 12's stream-K k tiles took 1.8-3.1x whole tiles', reading
# A and B from DRAM up to 8 times over (README.md, 16); 11, 12 and 15 keep 1.
STREAM_K_PRICE = 2


@dataclass(frozen=True)
class Plan:
    """One candidate: tiles `width` wide, the first `dp` walked whole, the next `sk` shared (stream-K) in at most
    `segments` pieces each; its `cost`."""

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
    """`rows` x `width` tiles' plan, whole waves or with stream-K (k tiles at `price` whole ones'), or None where it
    can't run. `split` (20): blocks / split tiles shared, each block's range exactly 1 / split of a tile's k tiles, the
    same part of each, read in step; the whole tiles before them in waves maybe part full."""
    tiles, kt = cdiv(m, rows) * cdiv(n, width), cdiv(k, BK)
    tile_k = width * rows // BM + 32  # width term (128-row tiles' columns) + 32 fixed costs
    if not stream_k:  # 07's model: waves x k tiles x tile_k
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
    least = total // blocks  # shortest range; longest: one more
    if least < 1 or total * blocks >= INT32 or sk > ARRIVALS // (rows // 16):
        return None
    segments = (kt - 1) // least + 2  # a tile's interior holds range starts at least `least` apart
    if segments > MAX_SEGMENTS:
        return None
    # Fix-up: two partials written, `segments` read back, floats at twice a k tile's 16-bit load rate; one for fences
    fixup = 1 + cdiv((2 + segments) * min(m, rows) * width * 4, 2 * (rows + width) * BK * 2)
    dp = tiles - sk
    return Plan(width, dp, sk, segments, (cdiv(dp, blocks) * kt + cdiv(total, blocks) * price + fixup) * tile_k)


def plan(m: int, n: int, k: int, blocks: int, price: int = 1) -> Plan:
    """The cheapest candidate on `blocks` persistent blocks (ties: earlier in WIDTHS, whole waves first); 256 wide whole
    waves always run."""
    found = [c for w in WIDTHS for sk in (False, True) if (c := candidate(m, n, k, blocks, w, sk, price)) is not None]
    return min(found, key=lambda c: c.cost)  # min keeps the first of equals


def launch_plan(m: int, n: int, k: int, blocks: int, price: int = 1) -> LaunchPlan:
    """d_host_plan's launch args and workspace (kernels.stage.Launch.planner); 16's with `price`."""
    p = plan(m, n, k, blocks, price)
    return LaunchPlan({"WIDTH": p.width, "DP": p.dp, "SK": p.sk}, p.workspace_floats(m, n))


def half_cost(m: int, n: int, k: int, blocks: int, width: int) -> int:
    """17's cost of whole 64-row tiles `width` wide: a k tile at half a 128-row tile's width term (half the math and,
    at its shapes, A's bytes) plus 32."""
    return cdiv(cdiv(m, HALF_ROWS) * cdiv(n, width), blocks) * cdiv(k, BK) * (width // 2 + 32)


def half_plan(m: int, n: int, k: int, blocks: int) -> tuple[int, Plan]:
    """17's tile rows and plan: 16's, or the cheapest whole 64-row tiles where cheaper (ties: 16's, then wider)."""
    whole = plan(m, n, k, blocks, STREAM_K_PRICE)
    costs = {w: half_cost(m, n, k, blocks, w) for w in WIDTHS}
    width = min(costs, key=costs.get)  # min keeps the first of equals: the wider
    if costs[width] < whole.cost:
        return HALF_ROWS, Plan(width, cdiv(m, HALF_ROWS) * cdiv(n, width), 0, 1, costs[width])
    return BM, whole


def tall_plan(m: int, n: int, k: int, blocks: int) -> tuple[int, Plan]:
    """20's: 17's, or 256 x 192 tiles where cheaper: whole, stream-K at 16's price, or stream-K in SPLITS ranges at
    whole tiles' price (ties: 17's, then that order)."""
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
    """Rows of A plus columns of B read per wave of `p`'s tiles, summed; tiles walked `group` tile rows at a time, rows
    first (hopper.cuh's grouped_tile): about DRAM's traffic a wave where its k tiles stay in L2. Whole tiles go
    round-robin, `blocks` a wave, then stream-K tiles as one."""
    waves = [(a, min(a + blocks, p.dp)) for a in range(0, p.dp, blocks)] + ([(p.dp, p.dp + p.sk)] if p.sk else [])
    per_group, total = group * tiles_n, 0
    for a, b in waves:
        for g in range(a // per_group, (b - 1) // per_group + 1):  # each group the wave meets: its tiles [i0, i1)
            down = min(group, tiles_m - g * group)  # the group's rows: its columns' height
            i0, i1 = max(a - g * per_group, 0), min(b - g * per_group, per_group)
            total += min(down, i1 - i0) * rows + ((i1 - 1) // down - i0 // down + 1) * p.width
    return total


def least_reads_group(m: int, n: int, blocks: int, rows: int, p: Plan) -> int:
    """The group height whose waves of `p`'s tiles read least (wave_reads; ties: GROUP, then lower)."""
    tiles_m, tiles_n = cdiv(m, rows), cdiv(n, p.width)
    reads = {g: wave_reads(tiles_m, tiles_n, blocks, rows, p, g) for g in range(1, MAX_GROUP + 1)}  # past tiles_m: all
    return min(reads, key=lambda g: (reads[g], g != GROUP, g))


def ordered_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_tile_order's: 20's plan (tall_plan) and GROUP (least_reads_group)."""
    rows, p = tall_plan(m, n, k, blocks)
    group = least_reads_group(m, n, blocks, rows, p)
    twenty = _rows_launch(m, n, rows, p)
    return LaunchPlan({**twenty.args, "GROUP": group}, twenty.workspace_floats)


def mixed_tiles(m: int, n: int, spans: int) -> tuple[int, int]:
    """22's 256 x 192 tiles over the first `spans` x SPAN columns, and all its tiles, 128 x 256 over the rest."""
    tall = cdiv(m, TALL_ROWS) * spans * (SPAN // TALL_WIDTH)
    return tall, tall + cdiv(m, BM) * cdiv(n - spans * SPAN, WIDTHS[0])


def mixed_cost(m: int, n: int, k: int, blocks: int, spans: int) -> int:
    """22's tiles' cost (mixed_tiles; 07's model, as `candidate`'s), round-robin, tall first: block 0 holds the most
    of both."""
    tall, units = mixed_tiles(m, n, spans)
    first_talls = cdiv(tall, blocks)
    return cdiv(k, BK) * (first_talls * TALL_K + (cdiv(units, blocks) - first_talls) * (WIDTHS[0] + 32))


def mixed_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_mixed_tiles's: the first SPANS x SPAN columns in tall tiles, the rest wide, where cheaper than 21's plan
    (fewest spans on a tie); else 21's, SPANS 0."""
    costs = {spans: mixed_cost(m, n, k, blocks, spans) for spans in range(1, cdiv(n, SPAN))}  # wide tiles left
    spans = min(costs, key=costs.get, default=0)
    if spans and costs[spans] < tall_plan(m, n, k, blocks)[1].cost:
        units = mixed_tiles(m, n, spans)[1]
        return LaunchPlan({"ROWS": TALL_ROWS, "WIDTH": WIDTHS[0], "DP": units, "SK": 0, "GROUP": GROUP, "SPANS": spans})
    ordered = ordered_launch_plan(m, n, k, blocks)
    return LaunchPlan({**ordered.args, "SPANS": 0}, ordered.workspace_floats)


def halves_cost(m: int, n: int, k: int, blocks: int) -> int | None:
    """23's cost: tall tiles whole, the last part-filled round's as two 128 x 192 units each (a k tile at 192 + 32);
    None where whole rounds fill every block."""
    tiles = cdiv(m, TALL_ROWS) * cdiv(n, TALL_WIDTH)
    if tiles % blocks == 0:
        return None
    return cdiv(k, BK) * (tiles // blocks * TALL_K + cdiv(2 * (tiles % blocks), blocks) * (TALL_WIDTH + 32))


def halves_launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_tail_halves's: 22's plan with HALVES 0, or HALVES 1 (DP: tall tiles walked whole) where halves_cost beats
    22's choice's; GROUP as 21's."""
    mixed = mixed_launch_plan(m, n, k, blocks)
    spans = mixed.args["SPANS"]
    chosen = mixed_cost(m, n, k, blocks, spans) if spans else tall_plan(m, n, k, blocks)[1].cost
    cost = halves_cost(m, n, k, blocks)
    if cost is None or cost >= chosen:
        return LaunchPlan({**mixed.args, "HALVES": 0}, mixed.workspace_floats)
    tiles = cdiv(m, TALL_ROWS) * cdiv(n, TALL_WIDTH)
    group = least_reads_group(m, n, blocks, TALL_ROWS, Plan(TALL_WIDTH, tiles, 0, 1, cost))
    dp = tiles - tiles % blocks
    return LaunchPlan(
        {"ROWS": TALL_ROWS, "WIDTH": TALL_WIDTH, "DP": dp, "SK": 0, "GROUP": group, "SPANS": 0, "HALVES": 1}
    )


def launch_is_not_21s(m: int, n: int, k: int, blocks: int) -> bool:
    """Where 22's or 23's launch is not 21's (tiles mixed, or the last round in halves): the LLM shapes the llm-tail
    step of .ci/gpu-session.sh measures them at."""
    args = halves_launch_plan(m, n, k, blocks).args
    return bool(args["SPANS"] or args["HALVES"])
