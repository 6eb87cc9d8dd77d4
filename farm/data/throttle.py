"""Classify NVML clock-event (throttle) reasons and SM clocks into the flags a row carries.

Pure functions of recorded samples, so they are tested on the CPU from recorded bitmasks.
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


def reason_names(mask: int) -> list[str]:
    return [name for bit, name in REASON_BITS.items() if mask & bit]


def sample_flags(reasons: int, sm_clock_mhz: float, max_sm_clock_mhz: float) -> dict[str, bool]:
    """Flags of one sample: idle (clocks not ramped), power cap, thermal, hardware slowdown, low clock."""
    return {
        "idle": bool(reasons & IDLE),
        "power": bool(reasons & POWER),
        "thermal": bool(reasons & THERMAL),
        "hw_slowdown": bool(reasons & HW_SLOWDOWN),
        "low_clock": sm_clock_mhz < LOW_CLOCK_FRACTION * max_sm_clock_mhz,
    }


def is_throttled(flags: dict[str, bool]) -> bool:
    """Throttled: anything that lowers the clock under load (idle alone is not throttling)."""
    return flags["power"] or flags["thermal"] or flags["hw_slowdown"] or flags["low_clock"]


def summarize_samples(samples: list[dict], max_sm_clock_mhz: float) -> dict:
    """Row columns from the telemetry samples of one series' timed windows."""
    if not samples:
        return {"telemetry_samples": 0}
    flags = [sample_flags(s["reasons"], s["sm_clock_mhz"], max_sm_clock_mhz) for s in samples]
    union = 0
    for s in samples:
        union |= s["reasons"]
    clocks = [s["sm_clock_mhz"] for s in samples]
    n = len(samples)
    return {
        "telemetry_samples": n,
        "sm_clock_min_mhz": min(clocks),
        "sm_clock_median_mhz": statistics.median(clocks),
        "sm_clock_max_mhz": max(clocks),
        "max_sm_clock_mhz": max_sm_clock_mhz,
        "mem_clock_median_mhz": statistics.median(s["mem_clock_mhz"] for s in samples),
        "power_mean_w": statistics.fmean(s["power_w"] for s in samples),
        "temp_max_c": max(s["temp_c"] for s in samples),
        "clock_event_reasons": union,
        "clock_event_names": reason_names(union),
        "throttle_idle": any(f["idle"] for f in flags),
        "throttle_power": any(f["power"] for f in flags),
        "throttle_thermal": any(f["thermal"] for f in flags),
        "throttle_hw_slowdown": any(f["hw_slowdown"] for f in flags),
        "low_clock_fraction": sum(f["low_clock"] for f in flags) / n,
        "throttled_fraction": sum(is_throttled(f) for f in flags) / n,
    }
