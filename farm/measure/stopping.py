"""When to stop warming up and sampling: pure (CPU-tested) rules over recorded numbers."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, Strict

# [measure] option types (cell_timer.MeasureOptions.from_dict); strict: a TOML string or bool is never a number
Count = Annotated[int, Strict(), Field(ge=1, le=1_000_000)]
Seconds = Annotated[float, Strict(), Field(gt=0, le=3600)]
Fraction = Annotated[float, Strict(), Field(gt=0, lt=1)]


def relative_noise(samples: list[float], measured: int | None = None) -> float:
    """Noise: robust relative SE of the median (normal-theory, MAD for SD: an outlier batch cannot stall or end a run);
    inf below 3 samples. `measured`: all batches where `samples` is an even subset (`farm compact --max-samples`)."""
    if len(samples) < 3:
        return math.inf
    med = statistics.median(samples)
    mad = statistics.median(abs(x - med) for x in samples)
    n = max(len(samples), measured or 0)
    return 1.2533 * 1.4826 * mad / math.sqrt(n) / med if med > 0 else math.inf


@dataclass(frozen=True)
class StoppingRule:
    min_samples: Count = 10
    target_noise: Fraction = 0.005  # stop once every series' noise is <= this
    min_time_s: Annotated[float, Strict(), Field(ge=0, le=3600)] = 0.2  # of timed batches, per cell
    max_time_s: Seconds = 20.0  # per cell, warm-up excluded
    max_samples: Count = 1000

    def decide(self, series: list[list[float]], elapsed_s: float) -> str | None:
        """Why to stop now ('converged', 'max_time', 'max_samples'), or None to go on."""
        n = min(len(s) for s in series)
        if n >= self.max_samples:
            return "max_samples"
        if elapsed_s >= self.max_time_s and n >= 3:
            return "max_time"
        if (
            n >= self.min_samples
            and elapsed_s >= self.min_time_s
            and max(relative_noise(s) for s in series) <= self.target_noise
        ):
            return "converged"
        return None


@dataclass(frozen=True)
class WarmupRule:
    """Warm up until the SM clock settles (small spread over the last window).

    The window predates the first launch (the sampler runs all the worker's life): if the GPU was busy throughout
    (no GPU-idle sample), e.g. just after the previous cell or verification, a settled clock ends warm-up at once
    ('clock_settled_earlier'); else it takes >= `min_s`, as always when no clock-event reasons are reported. With no
    SM clock (some GeForce laptops, drivers) it takes a fixed `fixed_s` ('fixed_no_clock'), not `max_s` every cell.
    """

    min_s: Annotated[float, Strict(), Field(ge=0, le=60)] = 0.05
    max_s: Annotated[float, Strict(), Field(gt=0, le=60)] = 3.0
    window_s: Annotated[float, Strict(), Field(gt=0, le=60)] = 0.1
    tolerance: Fraction = 0.02  # (max - min) / max of window SM clocks
    fixed_s: Annotated[float, Strict(), Field(gt=0, le=60)] = 0.5

    def settled(self, clocks: list[float]) -> bool:
        return len(clocks) >= 5 and (max(clocks) - min(clocks)) <= self.tolerance * max(clocks)

    def decide(
        self, elapsed_s: float, recent_clocks: list[float] | None, busy: bool = False, telemetry: bool = False
    ) -> str | None:
        """Why warm-up ends ('clock_settled_earlier', 'clock_settled', 'max_time', 'fixed_no_clock', 'no_telemetry'),
        or None to go on. `recent_clocks`: window SM clocks; None: unreadable (with `telemetry` on,
        the GPU reports none). `busy`: all window samples had clock-event reasons, none GPU-idle."""
        if recent_clocks is None and telemetry:
            return "fixed_no_clock" if elapsed_s >= self.fixed_s else None
        if elapsed_s < self.min_s:
            return "clock_settled_earlier" if busy and recent_clocks and self.settled(recent_clocks) else None
        if recent_clocks is None:
            return "no_telemetry"
        if self.settled(recent_clocks):
            return "clock_settled"
        return "max_time" if elapsed_s >= self.max_s else None
