"""What else differed between the two sides of a comparison: the card, its clocks and limits, the software stack, the
commit, the library's algorithm. A FASTER or SLOWER that comes with a different card or a power-capped clock reads as
such; and where sound, time compares at equal SM clocks."""

from __future__ import annotations

import math
import statistics

# (what it is called, row column), in the order a reader wants them: hardware first, then software, the code last.
PROVENANCE = (
    ("card", "gpu_uuid"),
    ("host", "host"),
    ("driver", "driver_version"),
    ("CUDA runtime", "cuda_runtime_version"),
    ("NVRTC", "nvrtc_version"),
    ("CuPy", "cupy_version"),
    ("library algorithm", "library_algorithm"),
    ("launch", "launch_method"),
    ("compile options", "compile_options"),
    ("code", "code_sha256"),
    ("commit", "git_commit"),
)
# Differences that are the change under test, not something else that could explain a verdict (a paired sweep's arms
# share the commit and differ in the kernels' machine code: code_sha256).
CODE = ("commit", "compile options", "code")
CLOCK_STEP = 0.01  # SM or memory clock medians this far apart are named
CLOCK_STEADY = 0.02  # (max - min) / median of a row's SM clock samples: steady enough to scale time by
FLAGS = (
    ("power cap", "throttle_power"),
    ("thermal slowdown", "throttle_thermal"),
    ("hardware slowdown", "throttle_hw_slowdown"),
)


def _value(col: str, v):
    """A column's value as compared: compile options without their -I header paths (a Ray job's working directory
    is a fresh temporary path each time; the headers' contents are in the CUBIN cache key, not their path)."""
    if col == "compile_options":
        return " ".join(t for t in str(v).split() if not t.startswith("-I"))
    return v


def _values(rows: list[dict], col: str) -> set:
    return {
        _value(col, r[col]) for r in rows if r.get(col) is not None and r.get(col) == r.get(col) and r.get(col) != ""
    }


def _short(label: str, values: set) -> str:
    shown = sorted(f"…{v[-8:]}" if label in ("card", "code") else str(v) for v in values)
    return ", ".join(shown) if len(shown) <= 3 else f"{len(shown)} values"


def _median(rows: list[dict], col: str) -> float | None:
    xs = [r[col] for r in rows if isinstance(r.get(col), (int, float)) and r[col] == r[col] and r[col] > 0]
    return statistics.median(xs) if xs else None


def differences(rows_a: list[dict], rows_b: list[dict]) -> list[tuple[str, str]]:
    """(what, how) for everything but the timing that differed between side A's rows and side B's."""
    out = []
    for label, col in PROVENANCE:
        a, b = _values(rows_a, col), _values(rows_b, col)
        if a and b and a != b:
            out.append((label, f"{label} {_short(label, a)} → {_short(label, b)}"))
    for label, col in (("SM clock", "sm_clock_median_mhz"), ("memory clock", "mem_clock_median_mhz")):
        fa, fb = _median(rows_a, col), _median(rows_b, col)
        if fa and fb and abs(fb / fa - 1) >= CLOCK_STEP:
            out.append((label, f"{label} {fa:.0f} → {fb:.0f} MHz ({100 * (fb / fa - 1):+.1f} %)"))
    for label, col in FLAGS:
        na, nb = sum(bool(r.get(col)) for r in rows_a), sum(bool(r.get(col)) for r in rows_b)
        if (na > 0) != (nb > 0) or (na and nb and na / len(rows_a) != nb / len(rows_b)):
            out.append((label, f"{label} A {na}/{len(rows_a)} rows, B {nb}/{len(rows_b)}"))
    return out


def confounded(diffs: list[tuple[str, str]]) -> bool:
    """Something besides the code differed: a verdict may be that, not the change."""
    return any(label not in CODE for label, _ in diffs)


def _swing(rows: list[dict]) -> float:
    """The largest (max - min) / median of the SM clock within one row's timing; 0 where rows do not say."""
    out = 0.0
    for r in rows:
        lo, med, hi = (r.get(c) for c in ("sm_clock_min_mhz", "sm_clock_median_mhz", "sm_clock_max_mhz"))
        if all(isinstance(v, (int, float)) and v == v for v in (lo, med, hi)) and med > 0:
            out = max(out, (hi - lo) / med)
    return out


def clock_ratio(rows_a: list[dict], rows_b: list[dict]) -> tuple[float | None, str]:
    """(B's SM clock median / A's, '') where scaling time by it is sound, else (None, why not).

    Scaling assumes the kernel's time follows the SM clock: compute or on-chip bound, at one memory clock, the clock
    steady while it was timed. It is not sound without clock telemetry on both sides, where the clock moved by more
    than CLOCK_STEADY within a row's timing (a power cap swinging it: the median then does not stand for the clock
    the kernel ran at), across memory clocks (memory-bound time does not scale with the SM clock), or where the
    clocks differ by more than 2x (other limits take over)."""
    fa, fb = _median(rows_a, "sm_clock_median_mhz"), _median(rows_b, "sm_clock_median_mhz")
    if not fa or not fb:
        return None, "no SM clock telemetry on " + (
            "either side" if not fa and not fb else "side A" if not fa else "side B"
        )
    swing = _swing([*rows_a, *rows_b])
    if swing > CLOCK_STEADY:
        return (
            None,
            f"the SM clock moved by up to {100 * swing:.0f} % within a timing window: its median is not the kernel's clock",
        )
    ma, mb = _median(rows_a, "mem_clock_median_mhz"), _median(rows_b, "mem_clock_median_mhz")
    if ma and mb and abs(mb / ma - 1) >= CLOCK_STEP:
        return None, f"memory clocks differ ({ma:.0f} vs {mb:.0f} MHz): time does not follow the SM clock alone"
    if not 0.5 <= fb / fa <= 2:
        return None, f"SM clocks {fa:.0f} and {fb:.0f} MHz are too far apart to scale"
    return fb / fa, ""


def log_clock_shift(rows_a: list[dict], rows_b: list[dict]) -> tuple[float, str]:
    """What to add to B's log time to compare at A's SM clock (0 where not sound), and a note saying which."""
    ratio, why_not = clock_ratio(rows_a, rows_b)
    if ratio is None:
        return 0.0, f"not at equal clocks: {why_not}"
    return math.log(ratio), f"at equal clocks: B's time x {ratio:.4f} (its SM clock over A's)"
