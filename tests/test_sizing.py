"""Checks sized for the card (farm/measure/sizing.py): the FP64 check a baseline gets on each emulated GeForce
card and an H100, its cost and proof, and the memory rule skipping a cell before it allocates."""

import numpy as np
import pytest
from fp8_host import e4m3_values

from farm.cluster.emulated_geforce import CARDS
from farm.measure.checks import SCALE_SLOT
from farm.measure.sizing import BLOCK_ROWS, FP64_BUDGET_S, bytes_needed, check_fp64, memory_skip_reason, reference_plan
from farm.measure.tolerance import tolerance
from kernels.registry import stage_named


def device(card) -> dict:
    return {key: getattr(card, key) for key in ("arch", "sm_count", "memory_bytes", "max_sm_clock_mhz")}


LAPTOP_3050 = device(CARDS["NVIDIA GeForce RTX 3050 Laptop GPU"])
RTX4090 = device(CARDS["NVIDIA GeForce RTX 4090"])
LAPTOP_5060 = device(CARDS["NVIDIA GeForce RTX 5060 Laptop GPU"])
H100 = {"arch": "sm_90", "sm_count": 132, "memory_bytes": 80 * 2**30, "max_sm_clock_mhz": 1980.0}


@pytest.mark.parametrize(
    "dev, size, full, full_s",
    [
        (LAPTOP_3050, 2048, True, 0.154),  # 16 SMs x 4 FP64 FLOP/clock x 1.74 GHz = 0.11 TFLOPS
        (LAPTOP_3050, 4096, False, 1.23),
        (LAPTOP_3050, 8192, False, 9.87),
        (RTX4090, 4096, True, 0.107),
        (RTX4090, 8192, False, 0.852),
        (LAPTOP_5060, 4096, False, 0.529),
        (H100, 8192, True, 0.0329),  # 132 SMs x 128 x 1.98 GHz
    ],
)
def test_the_whole_product_only_where_it_is_cheap(dev, size, full, full_s):
    plan = reference_plan(size, size, size, dev)
    assert plan.full == full and plan.full_seconds == pytest.approx(full_s, rel=0.01)
    if not full:  # the blocks the budget buys
        assert plan.rows % BLOCK_ROWS == 0 and 2 * BLOCK_ROWS <= plan.rows < size
        assert plan.rows / size * full_s <= FP64_BUDGET_S
        assert f"{plan.rows} of {size} rows" in plan.describe() and "missed" in plan.describe()
    else:
        assert "every element" in plan.describe()


def test_the_whole_product_needs_memory_too():
    # Cheap on a fast card, yet its FP64 operands (1.5 GiB) are over a quarter of a 4 GiB card.
    small_fast = {**H100, "memory_bytes": 4 * 2**30}
    plan = reference_plan(8192, 8192, 8192, small_fast)
    assert not plan.full and plan.rows == 8192 and "every element, in blocks" in plan.describe()
    assert len(plan.blocks(np.random.default_rng(0))) == 8192 // BLOCK_ROWS
    assert plan.device_bytes == 8 * (8192 * 8192 + 2 * BLOCK_ROWS * 8192)
    assert reference_plan(8192, 8192, 8192, H100).full


def test_blocks_take_first_and_last_and_never_repeat():
    plan = reference_plan(4096, 4096, 4096, LAPTOP_3050)
    draws = [plan.blocks(np.random.default_rng(seed)) for seed in range(20)]
    for blocks in draws:
        starts = [s for s, _ in blocks]
        assert starts[0] == 0 and starts[-1] == 4096 - BLOCK_ROWS and len(set(starts)) == len(starts)
        assert sum(r for _, r in blocks) == plan.rows and all(s % BLOCK_ROWS == 0 for s in starts)
    assert len({tuple(b) for b in draws}) == 20  # fresh rows every check
    odd = reference_plan(1000, 4096, 4096, LAPTOP_3050)
    assert odd.blocks(np.random.default_rng(1))[-1] == (992, 8)  # the partial edge block


def test_the_stated_tile_catch_rate_is_what_the_blocks_give():
    plan = reference_plan(4096, 4096, 4096, LAPTOP_3050)
    stated = float(plan.describe().split("probability ")[1].rstrip("%")) / 100
    rng = np.random.default_rng(0)
    caught = 0
    trials = 2000
    for _ in range(trials):
        tile = rng.integers(1, 4096 // 128 - 1) * 128  # a wrong 128-row tile off the edges
        caught += any(s < tile + 128 and tile < s + r for s, r in plan.blocks(rng))
    assert caught / trials == pytest.approx(stated, abs=0.04)


class NumpyChecks:
    """farm.measure.checks.Checks' contract on the host, to test the blocks' merging without a GPU."""

    def to_float64(self, x, dtype, scales=None, operand=0):
        if scales is not None:  # FP8: E4M3 codes times the operand's factor
            return e4m3_values()[x] * float(scales[operand, 0])
        return np.asarray(x, dtype=np.float64)

    def compare(self, out, ref, tol):
        err = np.abs(out.astype(np.float64) - ref)
        bad = ~(err <= tol.atol + tol.rtol * np.abs(ref))
        scaled = np.where(np.isnan(err), np.inf, err / (tol.atol + tol.rtol * np.abs(ref)))
        return {
            "verified": not bad.any(),
            "mismatches": int(bad.sum()),
            "max_abs_error": float(np.nan_to_num(err, nan=np.inf).max()),
            "max_scaled_error": float(scaled.max()),
            "atol": tol.atol,
            "rtol": tol.rtol,
        }


def test_block_checks_catch_what_they_cover_and_say_what_they_missed():
    m = n = k = 256
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    out = (a.astype(np.float64) @ b).astype(np.float32)
    slow = {**LAPTOP_3050, "sm_count": 1, "max_sm_clock_mhz": 1.0}  # so that even 256^3 is checked in blocks
    plan = reference_plan(m, n, k, slow)
    assert not plan.full and plan.rows == 2 * BLOCK_ROWS
    tol = tolerance("fp32", k)
    clean = check_fp64(NumpyChecks(), out, a, b, "fp32", tol, plan, np.random.default_rng(1))
    assert clean["verified"] and clean["mismatches"] == 0 and "64 of 256 rows" in clean["verify_reference"]
    for row, caught in ((0, True), (m - 1, True), (100, False)):  # first and last blocks, and a row no block covers
        bad = out.copy()
        bad[row, 7] = np.nan
        got = check_fp64(NumpyChecks(), bad, a, b, "fp32", tol, plan, np.random.default_rng(1))
        assert got["verified"] is not caught and got["mismatches"] == int(caught)
        assert got["max_scaled_error"] == (np.inf if caught else clean["max_scaled_error"])
    full = check_fp64(NumpyChecks(), bad, a, b, "fp32", tol, reference_plan(m, n, k, H100), np.random.default_rng(1))
    assert not full["verified"] and "every element" in full["verify_reference"]


def test_fp8_baselines_are_checked_against_the_dequantised_product_with_b_stored_n_by_k():
    m, n, k = 64, 40, 96
    rng = np.random.default_rng(8)
    a, b = (
        rng.integers(0, 0x7F, size=shape).astype(np.uint8)
        | np.uint8(0x80) * rng.integers(0, 2, size=shape).astype(np.uint8)
        for shape in ((m, k), (n, k))
    )
    scales = np.zeros((2, SCALE_SLOT), dtype=np.float32)
    scales[:, 0] = 0.0123, 0.0071
    exact = (e4m3_values()[a] * float(scales[0, 0])) @ (e4m3_values()[b] * float(scales[1, 0])).T
    tol, plan = tolerance("fp8_e4m3", k), reference_plan(m, n, k, H100)
    clean = check_fp64(
        NumpyChecks(), exact.astype(np.float32), a, b, "fp8_e4m3", tol, plan, np.random.default_rng(1), scales
    )
    assert clean["verified"] and clean["max_scaled_error"] < 1e-3
    unscaled = (e4m3_values()[a] @ e4m3_values()[b].T).astype(np.float32)  # the scales forgotten
    assert (
        check_fp64(NumpyChecks(), unscaled, a, b, "fp8_e4m3", tol, plan, np.random.default_rng(1), scales)["mismatches"]
        > 0.99 * m * n
    )


def test_memory_rule_skips_before_allocating_on_a_4gb_card():
    naive, cublas = stage_named("naive"), stage_named("cublas_fp32")
    free_3050 = LAPTOP_3050["memory_bytes"] - 300 * 2**20  # context and cuBLAS's workspace
    assert memory_skip_reason(naive, 8192, 8192, 8192, LAPTOP_3050, free_3050) is None  # 1 GiB
    assert memory_skip_reason(cublas, 8192, 8192, 8192, LAPTOP_3050, free_3050) is None  # + 0.5 GiB of FP64 blocks
    reason = memory_skip_reason(naive, 16384, 16384, 16384, LAPTOP_3050, free_3050)
    assert reason == "needs 4.00 GiB of device memory, 3.39 GiB free"
    # The whole FP64 product needed 1.5 GiB more at 8192^3; its blocks need B and one block.
    assert bytes_needed(cublas, 8192, 8192, 8192, LAPTOP_3050) - bytes_needed(
        naive, 8192, 8192, 8192, LAPTOP_3050
    ) == 8 * (8192 * 8192 + 2 * BLOCK_ROWS * 8192)
    # Cold mode's flush buffer is part of the cell: the L2's size.
    assert (
        bytes_needed(naive, 64, 64, 64, RTX4090, flush_bytes=72 * 2**20) - bytes_needed(naive, 64, 64, 64, RTX4090)
        == 72 * 2**20
    )
