"""Measurement rules on recorded numbers."""

import math

import pytest

from farm.analysis import compare
from farm.data.throttle import reason_names, sample_flags, summarize_samples
from farm.measure.cell_timer import MeasureOptions
from farm.measure.stats import summarize
from farm.measure.stopping import StoppingRule, WarmupRule, relative_noise


def test_summarize_quartiles_and_cv():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["median_ms"] == 3.0 and s["q1_ms"] == 2.0 and s["q3_ms"] == 4.0 and s["iqr_ms"] == 2.0
    assert s["min_ms"] == 1.0 and s["max_ms"] == 100.0 and s["cv"] > 1.5
    with pytest.raises(ValueError):
        summarize([])


def test_relative_noise_is_robust_to_one_outlier():
    steady = [1.0, 1.001, 0.999, 1.0005, 0.9995, 1.0, 1.0002, 0.9998, 1.0, 1.0]
    assert relative_noise(steady) < 0.0005
    assert relative_noise(steady + [5.0]) < 0.0006
    assert relative_noise([1.0, 1.0]) == math.inf


def test_stopping_rule_reasons():
    rule = StoppingRule(min_samples=5, target_noise=0.005, min_time_s=0.1, max_time_s=2.0, max_samples=50)
    steady = [1.0, 1.001, 0.999, 1.0, 1.0]
    noisy = [1.0, 1.3, 0.8, 1.2, 0.9]
    assert rule.decide([steady, steady], 0.5) == "converged"
    assert rule.decide([steady, noisy], 0.5) is None  # all must converge
    assert rule.decide([steady[:4], steady], 0.5) is None  # min samples
    assert rule.decide([steady, steady], 0.05) is None  # min time
    assert rule.decide([noisy, noisy], 2.5) == "max_time"
    assert rule.decide([noisy * 10, noisy * 10], 1.0) == "max_samples"
    assert rule.decide([[1.0, 2.0], [1.0, 2.0]], 5.0) is None  # needs 3+ samples


def test_warmup_waits_for_the_clock_to_settle():
    rule = WarmupRule(min_s=0.1, max_s=3.0, tolerance=0.02)
    ramping = [1200.0, 1500.0, 1800.0, 1980.0, 1980.0]
    settled = [1980.0, 1975.0, 1980.0, 1965.0, 1980.0]
    assert rule.decide(0.05, settled) is None
    assert rule.decide(0.5, ramping) is None
    assert rule.decide(0.5, settled) == "clock_settled"
    assert rule.decide(3.5, ramping) == "max_time"
    assert rule.decide(0.5, None) == "no_telemetry"
    assert rule.decide(0.0, settled, busy=True) == "clock_settled_earlier"  # under load (last cell, its check)
    assert rule.decide(0.0, settled, busy=False) is None  # idled in the window: may yet ramp
    assert rule.decide(0.0, ramping, busy=True) is None


def test_throttle_classes_from_recorded_bitmasks():
    assert reason_names(0x4 | 0x40) == ["sw_power_cap", "hw_thermal_slowdown"]
    assert sample_flags(0x1, 345, 1980)["idle"] and sample_flags(0x1, 345, 1980)["low_clock"]
    assert sample_flags(0x4, 1900, 1980) == {
        "idle": False,
        "power": True,
        "thermal": False,
        "hw_slowdown": False,
        "low_clock": False,
    }
    assert sample_flags(0x20, 1900, 1980)["thermal"] and sample_flags(0x80, 1900, 1980)["hw_slowdown"]
    samples = [
        {"reasons": r, "sm_clock_mhz": c, "mem_clock_mhz": 3201.0, "temp_c": t, "power_w": p}
        for r, c, t, p in [(0, 1980, 40, 500), (0x4, 1700, 45, 700), (0, 1400, 50, 600), (0, 1980, 41, 500)]
    ]
    s = summarize_samples(samples, 1980.0)
    assert s["telemetry_samples"] == 4 and s["sm_clock_min_mhz"] == 1400 and s["sm_clock_max_mhz"] == 1980
    assert s["clock_event_reasons"] == 0x4 and s["clock_event_names"] == ["sw_power_cap"]
    assert s["throttle_power"] and not s["throttle_thermal"] and not s["throttle_idle"]
    assert s["low_clock_fraction"] == 0.25  # 1400 < 0.75 * 1980
    assert s["throttled_fraction"] == 0.5  # power-capped + low-clock
    assert s["temp_max_c"] == 50 and s["power_mean_w"] == 575


def test_measure_options_from_a_plan_table():
    o = MeasureOptions.from_dict(
        {"mode": "cold", "target_noise": 0.01, "warmup_max_s": 1.5, "throttle_policy": "remeasure"}
    )
    assert o.timing.mode == "cold" and o.timing.stopping.target_noise == 0.01 and o.timing.warmup.max_s == 1.5
    assert o.throttle_policy == "remeasure"
    with pytest.raises(ValueError, match="unknown measure option colder"):
        MeasureOptions.from_dict({"colder": 1})
    with pytest.raises(ValueError, match="'hot' or 'cold'"):
        MeasureOptions.from_dict({"mode": "lukewarm"})
    with pytest.raises(ValueError, match="'flag' or 'remeasure'"):
        MeasureOptions.from_dict({"throttle_policy": "ignore"})


def _row(ms, spread=0.001, run="a", repeat=0, uuid="GPU-1", stage="naive", n=20):
    samples = [ms * (1 + spread * ((i % 5) - 2) / 2) for i in range(n)]
    return {
        "run_id": run,
        "repeat": repeat,
        "gpu_uuid": uuid,
        "gpu_model": "H200",
        "stage": stage,
        "m": 1024,
        "n": 1024,
        "k": 1024,
        "status": "ok",
        "samples_ms": samples,
        "median_ms": sorted(samples)[n // 2],
    }


def _quiet_history():
    """A/A history of _row(1.0)'s class (0.3-1 ms): 30 cells, 2 runs (1 commit), 3 repeats 0.1% apart."""
    from farm.analysis.noise import NoiseModel

    return NoiseModel.learn(
        [
            {**_row(0.9 + 0.0009 * ((r + run) % 3 - 1), run=f"h{run}", repeat=r), "m": 64 * c, "git_commit": "x"}
            for c in range(1, 31)
            for run in range(2)
            for r in range(3)
        ]
    )


def test_compare_verdicts():
    quiet = _quiet_history()
    assert compare.compare_sides(("c",), [_row(1.0)], [_row(1.001)], model=quiet).verdict == "SAME"
    assert compare.compare_sides(("c",), [_row(1.0)], [_row(1.10)], model=quiet).verdict == "SLOWER"
    assert compare.compare_sides(("c",), [_row(1.0)], [_row(0.90)], model=quiet).verdict == "FASTER"
    # 2 % in 10 % noise: not same, not different
    assert compare.compare_sides(("c",), [_row(1.0, 0.3)], [_row(1.02, 0.3)], model=quiet).verdict == "UNCLEAR"
    # repeats that disagree widen the band
    drift = compare.compare_sides(("c",), [_row(1.0), _row(1.04)], [_row(1.02), _row(1.06)], model=quiet)
    assert drift.verdict == "UNCLEAR" and drift.band > 0.02
    unknown = compare.compare_sides(("c",), [_row(1.0)], [_row(1.10)])  # no history, 1 repeat a side
    assert unknown.verdict == "UNCLEAR" and "no A/A history" in unknown.reason


def test_aa_and_gpu_to_gpu_pairs_and_summary():
    rows = [
        _row(1.0, repeat=0),
        _row(1.0005, repeat=1),
        _row(1.2, repeat=2),
        _row(1.0, uuid="GPU-2"),
        _row(2.0, stage="tiled"),
        {**_row(1.0, repeat=3), "status": "failed_verification"},
    ]
    aa = compare.compare_repeats(rows, "a", model=_quiet_history())
    assert len(aa) == 3 + 0  # naive repeats 0-2 on GPU-1 (tiled, GPU-2: one each)
    s = compare.summary(aa)
    # one repeat 20 % off widens the band: none different, none same
    assert s["comparisons"] == 3 and s["SLOWER"] + s["FASTER"] == 0 and s["UNCLEAR"] == 3
    assert s["difference_rate"] == 0 and s["unclear_rate"] == 1
    g2g = compare.compare_gpus(rows, "a")
    assert [c.key[:2] for c in g2g] == [("H200", "naive")]
    runs = compare.compare_runs(rows + [_row(1.5, run="b")], "a", "b", model=_quiet_history())
    assert [c.verdict for c in runs] == ["SLOWER"]


def test_tolerances_per_precision_class():
    from farm.measure.tolerance import tolerance

    assert tolerance("fp32", 4096).atol == pytest.approx(4 * 2**-23 * 4096)
    assert tolerance("fp16", 1024).atol == tolerance("bf16", 1024).atol == pytest.approx(16 * 2**-23 * 1024)
    assert tolerance("tf32", 4096).atol == pytest.approx(10 * 2**-11 * 64)  # grows with sqrt(K)
    assert tolerance("tf32", 16384).atol == pytest.approx(2 * tolerance("tf32", 4096).atol)
    # FP8: Hopper's ~13-bit accumulator truncated per k32 instr., <= 4 sqrt(K) deep: K^1.5
    assert tolerance("fp8_e4m3", 4096).atol == pytest.approx(2**-13 * (4096 / 32) * 4 * 64) == 4.0
    assert tolerance("fp8_e4m3", 16384).atol == pytest.approx(8 * tolerance("fp8_e4m3", 4096).atol)
    assert tolerance("fp8_e4m3", 4096).atol < 32**0.5  # < one lost k32 instr.'s rms error
    # B in E5M2: its rounding is in the reference's inputs; same truncation
    assert tolerance("fp8_e4m3_e5m2", 4096) == tolerance("fp8_e4m3", 4096)
    with pytest.raises(KeyError):
        tolerance("fp8", 128)
