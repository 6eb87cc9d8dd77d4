"""On a GPU: the baseline's FP64 check sized for the card (farm/measure/sizing.py) catches the planted errors it
claims to, whole and in blocks, through the harness's kernels (farm/measure/checks.cu) and cuBLAS.

An H100's whole product is cheap, so a smaller time budget forces the block check: a quarter of the rows, as a
1/64-rate GeForce card checks at 4096^3. `pytest -m gpu -s` shows each check's time.
"""

import time

import numpy as np
import pytest

from farm.measure.sizing import BLOCK_ROWS, check_fp64, reference_plan
from farm.measure.tolerance import tolerance

pytestmark = pytest.mark.gpu
SIZE = 4096


@pytest.fixture(scope="module")
def setup():
    import cupy

    from farm.measure.checks import Checks, compile_checks

    cupy.cuda.Device(0).use()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    arch = f"sm_{props['major']}{props['minor']}"
    checks = Checks(compile_checks(arch).module, props["multiProcessorCount"])
    device = {"arch": arch, "sm_count": props["multiProcessorCount"], "memory_bytes": props["totalGlobalMem"]}
    a, b = checks.random_operands("fp32", SIZE, SIZE, SIZE, seed=29)
    out = a @ b  # cuBLAS FP32: the baseline's output
    cupy.cuda.get_current_stream().synchronize()
    full = reference_plan(SIZE, SIZE, SIZE, device, budget_s=1e9)
    quarter = reference_plan(SIZE, SIZE, SIZE, device, budget_s=full.full_seconds / 4 * 1.001)
    assert full.full and not quarter.full and quarter.rows == SIZE // 4
    return checks, a, b, out, full, quarter


def _check(setup, plan, planted=None, seed=3):
    """check_fp64 on a copy of the baseline's output, `planted(c)` first."""
    import cupy

    checks, a, b, out, _, _ = setup
    c = out.copy()
    if planted:
        planted(c)
    began = time.perf_counter()
    got = check_fp64(checks, c, a, b, "fp32", tolerance("fp32", SIZE), plan, np.random.default_rng(seed))
    cupy.cuda.get_current_stream().synchronize()
    print(
        f"\n{plan.rows} of {SIZE} rows ({'whole' if plan.full else 'blocks'}): {time.perf_counter() - began:.4f} s, "
        f"{got['mismatches']} mismatches; {got['verify_reference']}"
    )
    return got


def test_a_clean_baseline_passes_both_checks(setup):
    for plan in setup[4:]:
        got = _check(setup, plan)
        assert got["verified"] and got["mismatches"] == 0 and got["max_scaled_error"] < 1


def _rows_checked(plan, seed=3) -> set[int]:
    return {r for first, n in plan.blocks(np.random.default_rng(seed)) for r in range(first, first + n)}


def test_planted_errors_are_caught_where_the_check_looks(setup):
    _, _, _, _, full, quarter = setup
    checked = sorted(_rows_checked(quarter))
    unchecked = sorted(set(range(SIZE)) - set(checked))
    rng = np.random.default_rng(7)

    def element(row, value):
        def plant(c):
            c[row, int(rng.integers(SIZE))] += value

        return plant

    for row in (0, SIZE - 1, int(rng.choice(checked))):  # both edge blocks, one drawn
        for plan in (full, quarter):
            assert not _check(setup, plan, element(row, 1.0))["verified"]
            assert _check(setup, plan, element(row, float("nan")))["mismatches"] == 1
    # Not claimed by the block check: one element in a row it did not draw (the whole check's).
    row = int(rng.choice(unchecked))
    assert _check(setup, quarter, element(row, 1.0))["verified"]
    assert not _check(setup, full, element(row, 1.0))["verified"]


def test_a_wrong_tile_or_a_wrong_scale_is_caught(setup):
    _, _, _, _, full, quarter = setup
    block = sorted(_rows_checked(quarter))[len(_rows_checked(quarter)) // 2] // BLOCK_ROWS * BLOCK_ROWS
    tile = block // 128 * 128  # the 128 x 128 tile of a drawn block, zeroed (cuBLAS never wrote it)

    def zero_tile(c):
        c[tile : tile + 128, 256:384] = 0

    def scaled(c):  # every element off 0.1 %: alpha or a reduction wrong
        c *= 1.001

    for plan in (full, quarter):
        assert _check(setup, plan, zero_tile)["mismatches"] >= 0.99 * BLOCK_ROWS * 128  # bar an element near 0
        assert not _check(setup, plan, scaled)["verified"]
