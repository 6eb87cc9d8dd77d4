"""Expected cell times on recorded sweeps: the ETA's accuracy and the short tail of longest-first queues.

The recordings are the shipped reference datasets (schema 3): every cell's own host time (cell_seconds) on one
H200 and one H100, for the whole catalog at 256^3 to 8192^3, three repeats; and, for cells timed in blocks at the power
cap, run h100-llmf8c's cell times (h100_llmf8c_cells.csv beside this file).
"""

from __future__ import annotations

import csv
import heapq
from pathlib import Path

import pytest

from farm.cells import Cell
from farm.cluster.cost import CostModel, Eta, blocks_per_series
from farm.data.dataset import read_table
from farm.measure.cell_timer import MeasureOptions
from kernels.registry import stage_named

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


# The recorded sweeps, one run of a dataset each, and how close the ETA must be from the tenth cell on: the
# reference plan's 1170 cells, and walk D's walkd2 runs on each card.
RECORDINGS = [
    ("h200-reference", "h200-ref3", 0.25),
    ("h100-reference", "h100-ref3", 0.25),
    ("h200-reference", "h200-walkd2", 0.45),
    ("h100-reference", "h100-walkd2", 0.7),
]
# The walkd2 runs (plans/walkd.toml with issue 31's tails, 1092 cells): its stages' priors come from the cubes, and the
# tails (1 x 4096 x 4096, 8193 x 8200 x 8...) cost what no cube predicts: 0.65 worst on the H100, at cell 81 (docs/running.md); 0.40 on the H200, at cell 342


def recorded(name: str, run: str) -> tuple[CostModel, dict[Cell, dict]]:
    rows = [r for r in read_table(str(DATASETS / name)).to_pylist() if r["run_id"] == run and r["status"] == "ok"]
    cells = {Cell(r["stage"], r["m"], r["n"], r["k"], r["repeat"]): r for r in rows}
    assert len(cells) == len(rows) > 250 and all(r["cell_seconds"] for r in rows)
    return CostModel({r["stage"]: stage_named(r["stage"]) for r in rows}), cells


@pytest.mark.parametrize("name, run, bound", RECORDINGS, ids=[run for _, run, _ in RECORDINGS])
def test_eta_tracks_the_real_remaining_time_from_the_tenth_cell(name, run, bound):
    model, cells = recorded(name, run)
    order = [c for c, _ in model.longest_first(list(cells))]
    eta = Eta([(c.key()[:4], model.seconds(c)) for c in order])
    left = sum(r["cell_seconds"] for r in cells.values())
    errors = []
    for i, cell in enumerate(order[:-1], 1):
        r = cells[cell]
        eta.add(cell.key()[:4], model.seconds(cell), r["cell_seconds"], r["cell_seconds"] - r["verify_seconds"])
        left -= r["cell_seconds"]
        if i >= 10:
            errors.append(abs(eta.seconds_left() - left) / left)
    assert max(errors) <= bound, f"worst {max(errors):.2f} at cell {10 + errors.index(max(errors))}"


def naive_eta_worst_error(cells: dict[Cell, dict], order: list[Cell]) -> float:
    """Worst relative error, from the tenth cell on, of 'mean of the cells so far x cells left' (the old ETA)."""
    times = [cells[c]["cell_seconds"] for c in order]
    return max(
        abs(sum(times[:i]) / i * (len(times) - i) - sum(times[i:])) / sum(times[i:]) for i in range(10, len(times))
    )


def test_the_old_eta_was_off_on_the_same_recording():
    """The mean of the cells so far misjudges the rest, in the old queue order and in the new: the estimator is needed."""
    model, cells = recorded("h200-reference", "h200-ref3")
    assert naive_eta_worst_error(cells, [c for c, _ in model.longest_first(list(cells))]) > 0.5
    assert naive_eta_worst_error(cells, sorted(cells, key=lambda c: (c.repeat, c.m * c.n * c.k, c.stage))) > 0.5


def finish_times(durations: list[float], gpus: int) -> list[float]:
    """Each GPU's finish time when every idle GPU takes the next cell of the queue."""
    free = [0.0] * gpus
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + d)
    return free


@pytest.mark.parametrize("gpus", [4, 8])
def test_longest_first_leaves_a_short_tail(gpus):
    model, cells = recorded("h200-reference", "h200-ref3")
    plan_order = sorted(cells, key=lambda c: (c.repeat, c.m * c.n * c.k, c.stage))  # the old queue order
    tails = {}
    for label, order in (("plan", plan_order), ("longest first", [c for c, _ in model.longest_first(list(cells))])):
        done = finish_times([cells[c]["cell_seconds"] for c in order], gpus)
        tails[label] = max(done) - min(done)
    longest_cell = max(r["cell_seconds"] for r in cells.values())
    assert tails["longest first"] < tails["plan"] / 3, tails
    assert tails["longest first"] < longest_cell / 4, tails


def test_every_family_has_a_prior_share_of_its_baseline():
    """A new family without one would be priced at the default share: its cells misplaced in the longest-first order."""
    from farm.cluster.cost import FAMILY_SHARE
    from kernels.registry import catalog

    assert {s.family for s in catalog()} <= set(FAMILY_SHARE)


def test_unseen_sizes_take_recent_speed_ups_but_never_slow_downs():
    """seconds_left prices a size none of whose cells ran at the recent sizes' actual/expected capped at 1 (the
    first, largest cells' costs must not inflate the small ones; cells far faster than expected show at once);
    work_left, for batch sizing, scales every cell left by the queue's actual/expected, as the dispatcher prices
    a batch's cells."""
    from farm.cluster.cost import Eta

    cells = [(("naive", 64, 64, k), 1.0) for k in range(1, 11)]  # ten sizes, one cell each, 1 s expected
    slow, fast = Eta(cells), Eta(cells)
    for key, expected in cells[:5]:
        slow.add(key, expected, 3.0, 3.0)
        fast.add(key, expected, 0.1, 0.1)
    assert slow.seconds_left() == pytest.approx(5.0) and slow.work_left() == pytest.approx(15.0)
    assert fast.seconds_left() == pytest.approx(0.5) and fast.work_left() == pytest.approx(0.5)


def test_a_paired_cell_costs_its_second_arm():
    """A paired sweep's cell times two arms and the baseline together: its launches cost 3/2 of a kernel cell's and
    twice a baseline cell's, the floor of timed seconds the same."""
    from farm.cells import Cell
    from farm.cluster.cost import CELL_OVERHEAD_S, UNTIMED_LAUNCHES, CostModel

    stages = {name: stage_named(name) for name in ("naive", "cublas_fp32")}
    one, two = CostModel(stages), CostModel(stages, paired=True)
    for name, factor in (("naive", 1.5), ("cublas_fp32", 2.0)):
        big = Cell(name, 8192, 8192, 8192)
        assert two.seconds(big) - CELL_OVERHEAD_S == pytest.approx(factor * (one.seconds(big) - CELL_OVERHEAD_S))
        small = Cell(name, 64, 64, 64)  # timed on the floor: only the untimed launches cost more
        assert two.seconds(small) > one.seconds(small)
        assert two.seconds(small) - one.seconds(small) < UNTIMED_LAUNCHES * 1e-3


# Run h100-llmf8c: plans/llm_fp8.toml on an H100 under the default cap_block_s = 1.0, 253 recorded cells of which 252 in
# blocks (about 4.2 s a kernel cell, 2.2 s a baseline's: two blocks of 1 s per series). Before blocks were priced, the
# sweep expected 84 s of them (10.7x short) and its ETA was 91 % low at cell 108; priced, 886 s and within 5 %.
LLMF8C = Path(__file__).resolve().parent / "h100_llmf8c_cells.csv"
H100 = "H100-80GB-HBM3"


def recorded_in_blocks() -> dict[Cell, float]:
    """h100-llmf8c's cell_seconds by cell."""
    lines = [line for line in LLMF8C.read_text().splitlines() if not line.startswith("#")]
    cells = {}
    for row in csv.DictReader(lines):
        m, n, k = (int(row.pop(d)) for d in "mnk")
        cells.update({Cell(stage, m, n, k): float(s) for stage, s in row.items() if s})
    return cells


def test_cells_in_blocks_are_priced_at_their_blocks():
    """The up-front expectation (what --max-gpu-hours gates on) within 15 % of what the cells took, and the ETA within
    10 % of the real remaining time from the tenth cell on (of 10 s while less remains: the last cell, 0.7 s)."""
    cells = recorded_in_blocks()
    assert len(cells) == 253
    measure = MeasureOptions.from_dict({"max_time_s": 2.0})  # plans/llm_fp8.toml's [measure] when the run was made
    model = CostModel({c.stage: stage_named(c.stage) for c in cells}, measure=measure)
    order = [c for c, _ in model.longest_first(list(cells), H100)]
    left = sum(cells.values())
    expected = sum(model.seconds(c, H100) for c in order)
    assert 1 / 1.15 <= left / expected <= 1.15, f"{expected:.0f} s expected, {left:.0f} s taken"
    eta = Eta([(c.key()[:4], model.seconds(c, H100)) for c in order])
    errors = []
    for i, cell in enumerate(order[:-1], 1):
        eta.add(cell.key()[:4], model.seconds(cell, H100), cells[cell], cells[cell])
        left -= cells[cell]
        if i >= 10:
            errors.append(abs(eta.seconds_left() - left) / max(left, 10.0))
    assert max(errors) <= 0.1, f"worst {max(errors):.2f} at cell {10 + errors.index(max(errors))}"


def test_blocks_are_priced_only_where_the_timer_runs_them():
    """Blocks at the cap: 16-bit, 8-bit and TF32 cells of 8 GFLOP or more on a data-centre GPU, each series two blocks
    of cap_block_s; none where cap_block_s is 0 or no telemetry finds the cap (every cell priced as before), none on
    GeForce boards or in FP32. block_s > 0: every cell in blocks of it."""
    stages = {name: stage_named(name) for name in ("cublas_bf16", "d_tma_store_bf16", "naive", "cublas_fp32")}
    unblocked = CostModel(stages)
    capped = CostModel(stages, measure=MeasureOptions())
    paired = CostModel(stages, paired=True, measure=MeasureOptions())
    for options in (MeasureOptions.from_dict({"cap_block_s": 0.0}), MeasureOptions.from_dict({"telemetry": False})):
        off = CostModel(stages, measure=options)
        for name in stages:
            for size in (64, 2048, 8192):
                cell = Cell(name, size, size, size)
                assert off.seconds(cell, H100) == unblocked.seconds(cell, H100)
    big, small = 8192, 1024  # 1.1 TFLOP and 2.1 GFLOP
    for name, series in (("d_tma_store_bf16", 2), ("cublas_bf16", 1)):
        cell = Cell(name, big, big, big)
        assert capped.seconds(cell, H100) == pytest.approx(2 * series + 0.18, abs=0.01)
        assert paired.seconds(cell, H100) == pytest.approx(2 * (series + 1) + 0.18, abs=0.01)
        assert capped.seconds(cell, "GeForce-RTX-4090") == unblocked.seconds(cell, "GeForce-RTX-4090")
        assert capped.seconds(Cell(name, small, small, small), H100) == unblocked.seconds(
            Cell(name, small, small, small), H100
        )
    for name in ("naive", "cublas_fp32"):
        assert capped.seconds(Cell(name, big, big, big), H100) == unblocked.seconds(Cell(name, big, big, big), H100)
    every = CostModel(stages, measure=MeasureOptions.from_dict({"block_s": 0.5, "cap_block_s": 0.0}))
    assert every.seconds(Cell("cublas_fp32", small, small, small), H100) == pytest.approx(2 * 0.5 + 0.18, abs=0.01)


def test_slow_launches_take_more_blocks_until_max_time():
    """A block keeps the batches of its second half: where they are fewer than min_samples / 2, the series runs more
    blocks, until the round that passes max_time_s."""
    timing = MeasureOptions().timing  # min_samples 10, max_time_s 20
    assert blocks_per_series(0.001, 2, 1.0, timing) == 2  # 10 ms batches: 51 kept a block
    assert blocks_per_series(0.3, 2, 1.0, timing) == 5  # 2 kept a block
    assert blocks_per_series(0.3, 2, 1.0, MeasureOptions.from_dict({"max_time_s": 6.0}).timing) == 3
