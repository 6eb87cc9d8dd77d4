"""On a real GPU: the harness's own inputs and verification (farm/measure/checks.py) against NumPy on the host.

Run with `pytest -m gpu`; skipped cleanly where no GPU is present.
"""

import numpy as np
import pytest

from farm.measure.tolerance import Tolerance, tolerance

pytestmark = pytest.mark.gpu

# Past the grid-stride loop's widest grid on any chip (32 blocks x 256 threads per SM, 132 SMs), and no
# multiple of a block.
BIG = 32 * 256 * 132 * 2 + 7


@pytest.fixture(scope="module")
def checks():
    import cupy

    from farm.measure.checks import Checks, compile_checks

    cupy.cuda.Device(0).use()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    return Checks(compile_checks(f"sm_{props['major']}{props['minor']}").module, props["multiProcessorCount"])


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    u = x.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_operands_are_fresh_normals_and_narrow_by_round_to_nearest_even(checks):
    a32, b32 = (x.get() for x in checks.random_operands("fp32", 300, 200, 500, seed=7))
    assert a32.shape == (300, 500) and b32.shape == (500, 200) and a32.dtype == np.float32
    assert np.count_nonzero(a32) == a32.size and abs(a32.mean()) < 0.02 and abs(a32.std() - 1) < 0.02
    again, _ = checks.random_operands("fp32", 300, 200, 500, seed=7)
    other, _ = checks.random_operands("fp32", 300, 200, 500, seed=8)
    assert np.array_equal(again.get(), a32) and not np.array_equal(other.get(), a32)
    a16, b16 = (x.get() for x in checks.random_operands("fp16", 300, 200, 500, seed=7))
    assert (
        a16.dtype == np.float16
        and np.array_equal(a16, a32.astype(np.float16))
        and np.array_equal(b16, b32.astype(np.float16))
    )
    abf, bbf = (x.get() for x in checks.random_operands("bf16", 300, 200, 500, seed=7))
    assert abf.dtype == np.uint16 and np.array_equal(abf, _bf16_bits(a32)) and np.array_equal(bbf, _bf16_bits(b32))
    odd, _ = checks.random_operands("fp32", 1, 1, 1, seed=3)  # an odd count (cuRAND makes normals in pairs)
    assert odd.shape == (1, 1) and np.isfinite(odd.get()).all()
    with pytest.raises(KeyError):
        checks.random_operands("int8", 4, 4, 4, seed=1)


@pytest.mark.parametrize("dtype", ["fp32", "tf32", "fp16", "bf16"])
def test_float64_values_are_exact(checks, dtype):
    a, _ = checks.random_operands(dtype, 257, 3, 129, seed=11)
    host = a.get()
    exact = (
        (host.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        if dtype == "bf16"
        else host.astype(np.float64)
    )
    wide = checks.to_float64(a, dtype)
    assert wide.dtype == np.float64 and np.array_equal(wide.get(), exact)


def test_poison_fills_every_element_with_nan(checks):
    import cupy

    c = cupy.zeros((BIG,), dtype=cupy.float32)
    checks.poison(c)
    assert np.isnan(c.get()).all()


def _host_compare(out: np.ndarray, ref: np.ndarray, tol: Tolerance) -> tuple[int, float, float]:
    ref = ref.astype(np.float64)
    err = np.abs(out.astype(np.float64) - ref)
    bound = tol.atol + tol.rtol * np.abs(ref)
    with np.errstate(invalid="ignore"):
        failed = int(np.count_nonzero(~(err <= bound)))
    err = np.where(np.isnan(err), np.inf, err)
    scaled = err / bound
    return failed, float(err.max()), float(np.where(np.isnan(scaled), np.inf, scaled).max())


@pytest.mark.parametrize("ref_dtype", [np.float32, np.float64])
def test_compare_counts_every_element_out_of_tolerance_as_numpy_does(checks, ref_dtype):
    import cupy

    rng = np.random.default_rng(5)
    ref = rng.standard_normal(BIG).astype(ref_dtype) * 30
    tol = tolerance("fp32", 4096)
    out = (ref + rng.uniform(-0.5, 0.5, BIG) * tol.atol).astype(np.float32)  # within tolerance everywhere
    row = checks.compare(cupy.asarray(out), cupy.asarray(ref), tol)
    failed, worst, worst_scaled = _host_compare(out, ref, tol)
    assert row["verified"] and row["mismatches"] == failed == 0
    assert row["max_abs_error"] == pytest.approx(worst, rel=1e-12) and row["max_scaled_error"] == pytest.approx(
        worst_scaled, rel=1e-12
    )
    assert 0 < row["max_scaled_error"] <= 1 and (row["atol"], row["rtol"]) == (tol.atol, tol.rtol)
    bad = out.copy()
    bad[[0, 1234, BIG - 1]] += 10 * tol.atol + 1e-3 * np.abs(ref[[0, 1234, BIG - 1]]).astype(np.float32)
    bad[77] = np.nan  # an element never written: NaN never passes
    row = checks.compare(cupy.asarray(bad), cupy.asarray(ref), tol)
    failed, worst, worst_scaled = _host_compare(bad, ref, tol)
    assert not row["verified"] and row["mismatches"] == failed == 4
    assert row["max_abs_error"] == worst == np.inf and row["max_scaled_error"] == worst_scaled == np.inf
    bad[77] = out[77]
    row = checks.compare(cupy.asarray(bad), cupy.asarray(ref), tol)  # the counters start again from zero
    failed, worst, worst_scaled = _host_compare(bad, ref, tol)
    assert row["mismatches"] == failed == 3 and row["max_abs_error"] == pytest.approx(worst, rel=1e-12)
    assert row["max_scaled_error"] == pytest.approx(worst_scaled, rel=1e-12) and row["max_scaled_error"] > 5


def test_compare_rejects_mismatched_arrays(checks):
    import cupy

    with pytest.raises(ValueError, match="one shape"):
        checks.compare(cupy.zeros((4, 4), cupy.float32), cupy.zeros((4, 5), cupy.float32), Tolerance(1e-3, 0))
    with pytest.raises(ValueError, match="FP32 output"):
        checks.compare(cupy.zeros((4, 4), cupy.float16), cupy.zeros((4, 4), cupy.float32), Tolerance(1e-3, 0))
