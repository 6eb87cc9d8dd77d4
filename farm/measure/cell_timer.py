"""Time one cell with telemetry: the timing columns, telemetry summary and raw samples of a row.

Wraps farm.measure.timing with the NVML sampler, the L2 flush of cold mode and the throttle
policy: `flag` keeps the measurement and flags the row; `remeasure` measures again
(up to `max_remeasures` times) while any timed sample was throttled, and keeps the
least throttled attempt, flagged if it still is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Literal

from pydantic import Field, Strict, TypeAdapter, ValidationError

from farm.data.throttle import summarize_samples
from farm.measure.stats import summarize
from farm.measure.stopping import StoppingRule, WarmupRule
from farm.measure.telemetry import NvmlSampler
from farm.measure.timing import CellTiming, TimingConfig, launches_in, time_interleaved

POLICIES = ("flag", "remeasure")
# Cold mode writes this many times the L2's size before every launch: NVIDIA's GEMM measurement guideline asks for
# at least 2x (CUTLASS's gemm_performance_measurement_methodology_guidelines); tests/test_gpu_cold.py checks with
# Nsight Compute that the first launch after it reads its operands from DRAM.
FLUSH_L2_MULTIPLE = 2


@dataclass(frozen=True)
class PostCheck:
    """What was timed is what is checked: prepare() writes fresh inputs into the same buffers and poisons the outputs
    (on the current stream), each measured series (the keys of `checks`: one, or a paired cell's two arms) times one
    last batch of its captured graph, then its check compares that batch's output with a reference of the fresh
    inputs and returns the verification columns."""

    prepare: Callable[[], None]
    checks: dict[str, Callable[[], dict]]


@dataclass(frozen=True)
class MeasureOptions:
    timing: TimingConfig = field(default_factory=TimingConfig)
    telemetry: Annotated[bool, Strict()] = True
    telemetry_interval_s: Annotated[float, Strict(), Field(ge=0.001, le=1.0)] = 0.01  # NVML updates every few ms
    throttle_policy: Literal[POLICIES] = "flag"
    max_remeasures: Annotated[int, Strict(), Field(ge=0, le=10)] = 2

    def __post_init__(self):
        if self.throttle_policy not in POLICIES:
            raise ValueError(f"throttle policy {self.throttle_policy!r} is not one of {', '.join(POLICIES)}")

    @classmethod
    def from_dict(cls, raw: dict) -> MeasureOptions:
        """From a plan's flat [measure] table: this class's fields plus those of TimingConfig,
        StoppingRule (stopping) and WarmupRule (prefixed warmup_), each checked for its type and range, once, where
        the plan is read (farm/plan.py); the object then travels to the measurer as it is. ValueError with every
        problem, one line each ("name: what is wrong")."""
        unknown = sorted(set(raw) - set(_OPTION_GROUPS))
        if unknown:
            raise ValueError(
                f"unknown measure option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                f"valid: {', '.join(sorted(_OPTION_GROUPS))}"
            )
        try:
            return _adapter().validate_python(_nested(raw))
        except ValidationError as exc:
            raise ValueError(
                "\n".join(
                    f"{_flat_name(e['loc'])}: {e['msg'].removeprefix('Value error, ')}, got {e['input']!r}"
                    for e in exc.errors()
                )
            ) from None


# Each flat [measure] name and the group it belongs to: MeasureOptions itself, TimingConfig, its StoppingRule, its
# WarmupRule (names prefixed warmup_).
_OPTION_GROUPS = {
    **{f.name: "options" for f in dataclasses.fields(MeasureOptions) if f.name != "timing"},
    **{f.name: "timing" for f in dataclasses.fields(TimingConfig) if f.name not in ("warmup", "stopping")},
    **{f.name: "stopping" for f in dataclasses.fields(StoppingRule)},
    **{f"warmup_{f.name}": "warmup" for f in dataclasses.fields(WarmupRule)},
}


def _nested(raw: dict) -> dict:
    """The flat table as MeasureOptions' nested fields."""
    timing: dict = {"stopping": {}, "warmup": {}}
    options: dict = {"timing": timing}
    for name, value in raw.items():
        group = _OPTION_GROUPS[name]
        target = {"options": options, "timing": timing, "stopping": timing["stopping"], "warmup": timing["warmup"]}[
            group
        ]
        target[name.removeprefix("warmup_") if group == "warmup" else name] = value
    return options


def _flat_name(loc: tuple) -> str:
    """A validation error's location as the [measure] table names it."""
    name = str(loc[-1]) if loc else "measure"
    return f"warmup_{name}" if "warmup" in loc[:-1] else name


@cache
def _adapter() -> TypeAdapter:
    return TypeAdapter(MeasureOptions)


def _label(t: float, timing: CellTiming) -> str:
    """Which part of the cell a telemetry sample's host time falls in."""
    lo, hi = timing.warmup_window
    if lo <= t <= hi:
        return "warmup"
    for name, s in timing.series.items():
        if any(b.t0 <= t <= b.t1 for b in s.batches):
            return name
    return "gap"


class CellTimer:
    def __init__(self, options: MeasureOptions, pci_bus_id: str, l2_bytes: int):
        self.options = options
        self.sampler = NvmlSampler(pci_bus_id, options.telemetry_interval_s) if options.telemetry else None
        # A baseline at a shape (the caller's key): whether it is held at the power cap when it runs alone, learnt from
        # its own cell or from a partner cell's probe (TimingConfig.cap_block_s).
        self._capped_alone: dict[tuple, bool] = {}
        self._flush_buffer = None
        # Cold mode's flush buffer (a buffer the cell's memory counts); none in hot mode.
        self.flush_bytes = FLUSH_L2_MULTIPLE * l2_bytes if options.timing.mode == "cold" else 0

    def flush(self) -> None:
        """Evict L2: a write of FLUSH_L2_MULTIPLE x its size on the current stream (before a cold launch)."""
        import cupy

        if self._flush_buffer is None:
            self._flush_buffer = cupy.empty(self.flush_bytes, dtype=cupy.uint8)
        cupy.cuda.runtime.memsetAsync(
            self._flush_buffer.data.ptr, 0, self.flush_bytes, cupy.cuda.get_current_stream().ptr
        )

    def _attempt(
        self, launches: dict, post: PostCheck, capped_alone: bool | None
    ) -> tuple[CellTiming, list[dict], dict[str, dict]]:
        s = self.sampler
        if s:
            s.start()
        try:
            timing = time_interleaved(
                launches,
                self.options.timing,
                recent_clocks=s.recent_sm_clocks if s else None,
                energy_mj=s.energy_mj if s else None,
                flush=self.flush if self.options.timing.mode == "cold" else None,
                last=(tuple(post.checks), post.prepare),
                near_power_cap=s.near_power_cap if s else None,
                capped_alone=capped_alone,
            )
        finally:
            samples = s.stop() if s else []
        return timing, samples, {own: check() for own, check in post.checks.items()}

    def time(
        self, launches: dict, flops: int, post: PostCheck, baseline_at: tuple | None = None, baseline_only: bool = False
    ) -> dict[str, tuple[dict, list[dict], dict]]:
        """Per measured series (the keys of post.checks; the other series are their baselines, the one named
        "baseline" theirs where there is one, else each its own): its row columns, the cell's raw telemetry samples
        and the verification columns of its last timed batch. All come from one interleaved timing (one attempt of
        it: with `remeasure`, the attempt whose series all verified and whose most throttled series was least so).
        baseline_at: the cell's baseline and shape, under which this timer remembers whether that baseline alone is held
        at the power cap (None: nothing remembered, never probed); baseline_only: every series is that baseline, so
        this cell's own timing says."""
        attempts = []
        for _ in range(1 + (self.options.max_remeasures if self.options.throttle_policy == "remeasure" else 0)):
            known = self._capped_alone.get(baseline_at) if baseline_at else False
            timing, samples, checked = self._attempt(launches, post, known)
            seen = timing.power_capped if baseline_only else timing.alone_capped
            if baseline_at and seen is not None:
                self._capped_alone[baseline_at] = seen
            for sample in samples:
                sample["series"] = _label(sample["t"], timing)
            teles = {
                own: summarize_samples(
                    [x for x in samples if x["series"] == own],
                    self.sampler.max_sm_clock_mhz,
                    tuple(self.sampler.unreported),
                )
                if self.sampler
                else {"telemetry_samples": 0}
                for own in post.checks
            }
            all_verified = all(c["verified"] for c in checked.values())
            throttled = max(t.get("throttled_fraction") or 0.0 for t in teles.values())
            attempts.append((timing, samples, teles, checked, all_verified, throttled))
            if not throttled or not all_verified:
                break
        timing, samples, teles, checked, _, _ = min(attempts, key=lambda a: (a[4], a[5]))
        raw = self._raw(samples, timing)
        return {
            own: (self._columns(timing, teles[own], own, flops, len(attempts) - 1), raw, checked[own])
            for own in post.checks
        }

    def _columns(self, timing: CellTiming, tele: dict, own: str, flops: int, remeasures: int) -> dict:
        mine, base = timing.series[own], timing.series.get("baseline", timing.series[own])
        stats = summarize(mine.samples_ms)
        base_median = summarize(base.samples_ms)["median_ms"]
        return {
            "timing_mode": self.options.timing.mode,
            "flush_bytes": self.flush_bytes or None,
            "launch_method": mine.launch_method,
            "baseline_launch_method": base.launch_method,
            "warmup_launches": mine.warmup_launches,
            "warmup_reason": timing.warmup_reason,
            "warmup_seconds": timing.warmup_window[1] - timing.warmup_window[0],
            "launches_per_batch": mine.launches_per_batch,
            "batches": len(mine.samples_ms),
            "launches_timed": launches_in(mine),
            "timed_seconds": sum(
                sum(x.samples_ms[i] * x.batches[i].launches for i in range(len(x.batches)))
                for x in timing.series.values()
            )
            / 1e3,
            "stop_reason": timing.stop_reason,
            "samples_ms": mine.samples_ms,
            **stats,
            "tflops": flops / (stats["median_ms"] * 1e9),
            "baseline_median_ms": base_median,
            "pct_of_baseline": 100.0 * base_median / stats["median_ms"],
            "telemetry": self.sampler is not None,
            **tele,
            # The energy counter moves in coarse steps, so per launch we use sampled power x time;
            # the counter's difference over the whole timed phase is kept as a cross-check.
            "energy_per_launch_mj": tele["power_mean_w"] * stats["median_ms"] if tele.get("power_mean_w") else None,
            "energy_timed_j": None if timing.energy_mj is None else timing.energy_mj / 1e3,
            "throttle_policy": self.options.throttle_policy,
            "remeasures": remeasures,
        }

    @staticmethod
    def _raw(samples: list[dict], timing: CellTiming) -> list[dict]:
        t0 = timing.warmup_window[0]
        whole = lambda v: None if v is None else int(v)  # noqa: E731 - a field the GPU did not report stays null
        return [
            {
                "series": x["series"],
                "t_ms": round(1000 * (x["t"] - t0), 3),
                "sm_clock_mhz": whole(x["sm_clock_mhz"]),
                "mem_clock_mhz": whole(x["mem_clock_mhz"]),
                "temp_c": whole(x["temp_c"]),
                "power_w": x["power_w"],
                "reasons": x["reasons"],
            }
            for x in samples
        ]
