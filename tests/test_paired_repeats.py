"""Adaptive pairs of a paired sweep (farm/cluster/repeats.py): a power-capped cell gets at least two pairs, an
unthrottled one no more than its one. On synthetic noise shaped like an H100's paired A/A (power-capped pairs 0.28 %
robust spread, unthrottled 0.11 %, heavy tails), one pair a capped cell catches a 3 % step in about 8 % of cells (the
H100's interleaved paired A/A: 8.5 %), two or three pairs in about 80 % (not 90 %: a cell whose pairs disagree widens
its own band), identical code staying at or under 1 % false differences."""

from __future__ import annotations

import math
import random

import pyarrow as pa

from farm.analysis import compare
from farm.analysis.noise import NoiseModel
from farm.cells import Cell, pair_id
from farm.cluster.repeats import MIN_CAPPED_PAIRS, AdaptiveRepeats, pair_outcomes

# A pair's log ratio B/A on an H100 (docs/verdicts.md, "arms interleaved"): robust spread 0.11 % unthrottled, 0.28 %
# power-capped, and heavy tails (|d|'s 99th percentile 11-14 robust spreads): here 5 % of pairs 10x wider.
CORE_SD = {False: 0.0011, True: 0.0028}
TAIL_SHARE, TAIL_WIDTH = 0.05, 10.0
SHAPES = [(2048, 2048, 2048), (2048, 2048, 2080), (1024, 1024, 1024), (256, 256, 256)]


def _batch(rows: list[dict]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{c: r[c] for c in ("pair", "status", "status_reason", "median_ms", "throttle_power")} for r in rows]
    )


def paired_sweep(
    sweep: str, rng: random.Random, cells: int, capped_share: float, step: float = 0.0, most: int = 3
) -> tuple[list[dict], list[dict]]:
    """Runs SWEEP-a and SWEEP-b of a paired sweep of one pair a cell planned and `most` at most, the driver's adaptive
    repeats deciding each cell's further pairs from the pairs so far; the first `capped_share` of the cells are
    power-capped (both arms' rows flagged). Each pair draws a level both arms share (what the pair cancels) and a
    log ratio from the noise above; arm b is slower by `step` and runs other code where it is."""
    repeats = AdaptiveRepeats(planned=1, most=most, target=0.0025, paired=True)
    arms: tuple[list[dict], list[dict]] = ([], [])
    for c in range(cells):
        capped = c < capped_share * cells
        m, n, k = SHAPES[c % len(SHAPES)]
        todo = [Cell(f"d_stage{c // len(SHAPES)}", m, n, k, 0)]
        while todo:
            cell = todo.pop()
            shared = 0.3 * math.exp(rng.gauss(0, 0.02))
            d = rng.gauss(0, CORE_SD[capped] * (TAIL_WIDTH if rng.random() < TAIL_SHARE else 1.0))
            pair = []
            for i, (arm, ms, code) in enumerate(
                (("a", shared, "k0"), ("b", shared * math.exp(d) * (1 + step), "k1" if step else "k0"))
            ):
                row = {
                    "run_id": f"{sweep}-{arm}",
                    "pair": pair_id(cell, sweep),
                    "arm": arm,
                    "repeat": cell.repeat,
                    "gpu_model": "H100-80GB-HBM3",
                    "gpu_uuid": "GPU-aaaa0001",
                    "family": "hopper_d",
                    "stage": cell.stage,
                    "m": m,
                    "n": n,
                    "k": k,
                    "timing_mode": "hot",
                    "status": "ok",
                    "status_reason": None,
                    "throttle_power": capped,
                    "git_commit": "c0",
                    "code_sha256": f"{code}-{c}",
                    "samples_ms": [ms] * 15,
                    "median_ms": ms,
                }
                arms[i].append(row)
                pair.append(row)
            _, judged = pair_outcomes(_batch(pair[:1]), [_batch(pair[1:])])
            todo += [more for more, _ in repeats.more("q", [(cell, 1.0)], judged)]
    return arms


def _history(seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [r for i in range(2) for arm in paired_sweep(f"h{i}", rng, 400, capped_share=0.3) for r in arm]


def _verdicts(step: float, most: int, seeds=range(3)) -> tuple[dict, float]:
    """Summary over the capped cells of a few paired sweeps judged with A/A history, and their pairs a cell."""
    comps, pairs = [], []
    for seed in seeds:
        a, b = paired_sweep("x", random.Random(100 + seed), 100, capped_share=1.0, step=step, most=most)
        comps += compare.compare_rows(a, b, model=NoiseModel.learn([*_history(seed), *a, *b], apart=(a, b)))
        pairs.append(len(a) / 100)
    return compare.summary(comps), sum(pairs) / len(pairs)


def test_a_capped_pair_asks_for_a_second_an_unthrottled_one_does_not_and_the_plan_bounds_both():
    def pair(p: str, ratio: float, capped: bool) -> tuple[pa.RecordBatch, list[pa.RecordBatch]]:
        row = {"pair": p, "status": "ok", "status_reason": None, "median_ms": 1.0, "throttle_power": False}
        return _batch([row]), [_batch([{**row, "median_ms": ratio, "throttle_power": capped}])]  # arm b's flag only

    rep = AdaptiveRepeats(planned=1, most=3, target=0.0025, paired=True)
    steady, capped = Cell("steady", 1, 1, 1, 0), Cell("capped", 1, 1, 1, 0)
    assert rep.more("q", [(steady, 1.0)], pair_outcomes(*pair("s/0", 1.001, False))[1]) == []
    [(second, _)] = rep.more("q", [(capped, 1.0)], pair_outcomes(*pair("c/0", 1.001, True))[1])
    assert second == Cell("capped", 1, 1, 1, 1) and MIN_CAPPED_PAIRS == 2
    assert rep.more("q", [(second, 1.0)], pair_outcomes(*pair("c/1", 1.0015, False))[1]) == []  # two that agree
    capped_again = Cell("capped2", 1, 1, 1, 0)
    [(nxt, _)] = rep.more("q", [(capped_again, 1.0)], pair_outcomes(*pair("d/0", 1.0, True))[1])
    [(third, _)] = rep.more("q", [(nxt, 1.0)], pair_outcomes(*pair("d/1", 1.02, True))[1])  # two 2 % apart
    assert third.repeat == 2 and rep.more("q", [(third, 1.0)], pair_outcomes(*pair("d/2", 1.0, True))[1]) == []
    one = AdaptiveRepeats(planned=1, most=1, target=0.0025, paired=True)  # the plan allows one pair: one
    assert one.more("q", [(capped, 1.0)], pair_outcomes(*pair("c/0", 1.001, True))[1]) == []
    sequential = AdaptiveRepeats(planned=1, most=2, target=0.0025)  # unpaired: one repeat shows no spread, so more
    assert len(sequential.more("q", [(steady, 1.0)], _batch([pair("s/0", 1.0, False)[0].to_pylist()[0]]))) == 1


def test_capped_cells_catch_a_three_percent_step_with_adaptive_pairs_and_not_with_one():
    same, pairs_aa = _verdicts(0.0, most=3)
    assert same["difference_rate"] <= 0.01 and same["unclear_rate"] <= 0.15, same
    slower, pairs = _verdicts(0.03, most=3)
    assert slower["SLOWER"] / slower["comparisons"] >= 0.75 and slower["FASTER"] == 0, slower
    # cost: two pairs a capped cell, a third where they disagree
    assert 2.0 <= pairs <= 2.6 and 2.0 <= pairs_aa <= 2.6, (pairs, pairs_aa)
    one, _ = _verdicts(0.03, most=1)
    assert one["SLOWER"] / one["comparisons"] <= 0.15, one  # one pair a capped cell: its band (about 3 %) too wide
