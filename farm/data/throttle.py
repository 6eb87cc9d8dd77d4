"""Classify NVML clock-event (throttle) reasons and SM clocks into the flags a row carries.

Pure functions of recorded samples, so they are tested on the CPU from recorded bitmasks. A sample's field is None
where the GPU did not report it: each flag is judged on what was reported, and is None when nothing it needs was.
"""

from __future__ import annotations

import statistics

# nvmlClocksEventReason* bits (nvml.h)
REASON_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
IDLE = 0x1
POWER = 0x4
THERMAL = 0x20 | 0x40
HW_SLOWDOWN = 0x8 | 0x80
LOW_CLOCK_FRACTION = 0.75  # a sample below this fraction of the max SM clock is flagged
# The fields of a telemetry sample (farm.measure.telemetry.SAMPLED), any of which a GPU may not report.
SAMPLED_FIELDS = ("sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "reasons")


def reason_names(mask: int) -> list[str]:
    return [name for bit, name in REASON_BITS.items() if mask & bit]


def sample_flags(
    reasons: int | None, sm_clock_mhz: float | None, max_sm_clock_mhz: float | None
) -> dict[str, bool | None]:
    """Flags of one sample: idle (clocks not ramped), power cap, thermal, hardware slowdown, low clock; None where
    the GPU did not report what a flag needs (the reasons, or the SM clock and its maximum)."""
    known = reasons is not None
    return {
        "idle": bool(reasons & IDLE) if known else None,
        "power": bool(reasons & POWER) if known else None,
        "thermal": bool(reasons & THERMAL) if known else None,
        "hw_slowdown": bool(reasons & HW_SLOWDOWN) if known else None,
        "low_clock": sm_clock_mhz < LOW_CLOCK_FRACTION * max_sm_clock_mhz
        if sm_clock_mhz is not None and max_sm_clock_mhz
        else None,
    }


def is_throttled(flags: dict[str, bool | None]) -> bool | None:
    """Throttled: anything that lowers the clock under load (idle alone is not throttling), judged on what the sample
    reported; None when it reported none of it."""
    seen = [flags[f] for f in ("power", "thermal", "hw_slowdown", "low_clock") if flags[f] is not None]
    return any(seen) if seen else None


def _reported(samples: list[dict], field: str) -> list:
    return [s[field] for s in samples if s.get(field) is not None]


def _any(flags: list[dict], name: str) -> bool | None:
    seen = [f[name] for f in flags if f[name] is not None]
    return any(seen) if seen else None


def _fraction(values: list[bool | None]) -> float | None:
    seen = [v for v in values if v is not None]
    return sum(seen) / len(seen) if seen else None


def summarize_samples(samples: list[dict], max_sm_clock_mhz: float | None, unreported: tuple[str, ...] = ()) -> dict:
    """Row columns from the telemetry samples of one series' timed windows. A field no sample has (the GPU or driver
    does not report it, or it failed throughout) is named in `nvml_unreported`, with `unreported` (fields the
    sampler knows this GPU lacks, those read outside samples included), and its columns are null; the throttle
    flags and fractions are judged on what was reported."""
    missing = set(unreported) | {f for f in SAMPLED_FIELDS if samples and not _reported(samples, f)}
    if max_sm_clock_mhz is None:
        missing.add("max_sm_clock_mhz")
    out = {"telemetry_samples": len(samples), "nvml_unreported": sorted(missing)}
    if not samples:
        return out
    flags = [sample_flags(s.get("reasons"), s.get("sm_clock_mhz"), max_sm_clock_mhz) for s in samples]
    reasons = _reported(samples, "reasons")
    union = 0
    for r in reasons:
        union |= r
    clocks = _reported(samples, "sm_clock_mhz")
    mem, power, temp = (_reported(samples, f) for f in ("mem_clock_mhz", "power_w", "temp_c"))
    return {
        **out,
        "sm_clock_min_mhz": min(clocks) if clocks else None,
        "sm_clock_median_mhz": statistics.median(clocks) if clocks else None,
        "sm_clock_max_mhz": max(clocks) if clocks else None,
        "max_sm_clock_mhz": max_sm_clock_mhz,
        "mem_clock_median_mhz": statistics.median(mem) if mem else None,
        "power_mean_w": statistics.fmean(power) if power else None,
        "temp_max_c": max(temp) if temp else None,
        "clock_event_reasons": union if reasons else None,
        "clock_event_names": reason_names(union) if reasons else None,
        "throttle_idle": _any(flags, "idle"),
        "throttle_power": _any(flags, "power"),
        "throttle_thermal": _any(flags, "thermal"),
        "throttle_hw_slowdown": _any(flags, "hw_slowdown"),
        "low_clock_fraction": _fraction([f["low_clock"] for f in flags]),
        "throttled_fraction": _fraction([is_throttled(f) for f in flags]),
    }
