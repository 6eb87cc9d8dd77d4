"""Timing with CUDA events: warm-up until clocks settle, then interleaved batches until the noise target.

hot:  a batch is `launches_per_batch` back-to-back launches, captured once as a CUDA
      graph and replayed between two events (Python's launch overhead never shows
      between launches).
cold: before every launch, a write of exactly the device's L2 size evicts the operands;
      the flush sits outside the events, so a sample is one launch from a cold L2. The
      launch is a captured graph of one launch too, so a library call's host-side cost
      is no more part of the sample than a kernel launch's.
If capture fails, batches are direct launches, and the row says which method produced
its numbers (a kernel row also says how its baseline was launched).

Series (a kernel and its cuBLAS baseline; a paired sweep's two arms and their baseline) alternate
batch by batch, in the order given, so all see the same clocks, power state and temperature; or in blocks of seconds
(block_s, cap_block_s) whose first half settles the clock at the series' own draw and is not kept (docs/verdicts.md).
Each batch's host-time window is kept to attribute telemetry samples to the series that ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field, Strict

from farm.measure.stopping import Count, Fraction, StoppingRule, WarmupRule

MODES = ("hot", "cold")
CAP_PROBE_S = 0.05  # the least warm-up that gives near_power_cap a few of the cell's own samples
CAP_PROBE_ALONE_S = 0.3  # a baseline alone: long enough for the controller to hold its clock
MIN_BLOCK_ROUNDS = 2  # blocks: A B A B (or A A) at least, so drift cancels


@dataclass(frozen=True)
class TimingConfig:
    mode: Literal[MODES] = "hot"
    target_batch_ms: Annotated[float, Strict(), Field(gt=0, le=10_000)] = (
        10.0  # hot: launches per batch chosen so a batch lasts about this long
    )
    max_launches_per_batch: Count = 200
    use_graphs: Annotated[bool, Strict()] = True
    # > 0: every cell in blocks (module docstring), each series at its own clock.
    block_s: Annotated[float, Strict(), Field(ge=0, le=60)] = 0.0
    # Else blocks of cap_block_s (0: never) for a cell at the power cap (time_interleaved says when;
    # cap_power_fraction: near_power_cap's share of the enforced limit).
    cap_block_s: Annotated[float, Strict(), Field(ge=0, le=60)] = 1.0
    cap_power_fraction: Fraction = 0.9
    warmup: WarmupRule = field(default_factory=WarmupRule)
    stopping: StoppingRule = field(default_factory=StoppingRule)

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"timing mode {self.mode!r} is not one of {', '.join(MODES)}")


@dataclass
class Batch:
    t0: float  # host perf_counter before the first event
    t1: float  # host perf_counter after the last event completed
    launches: int


@dataclass
class SeriesTiming:
    samples_ms: list[float]  # per-launch time of each batch
    batches: list[Batch]
    launches_per_batch: int
    warmup_launches: int
    launch_method: str  # cuda_graph | direct | direct_cold


@dataclass
class CellTiming:
    series: dict[str, SeriesTiming]
    warmup_reason: str
    stop_reason: str
    warmup_window: tuple[float, float]
    energy_mj: float | None  # energy counter difference over the whole timed phase (every series)
    power_capped: bool = False  # the cell saw the power cap
    alone_capped: bool | None = None  # the series "baseline" held at the cap by itself, where known


class _Series:
    """One launchable thing on a dedicated stream, with its batch (graph or loop)."""

    def __init__(self, launch: Callable[[], None], stream, cfg: TimingConfig, flush: Callable[[], None] | None):
        self.launch, self.stream, self.cfg, self.flush = launch, stream, cfg, flush
        self.graph = None
        self.per_batch = 1
        self.warmup = 0
        self.method = "direct_cold" if cfg.mode == "cold" else "direct"

    def timed_ms(self, body: Callable[[], None]) -> float:
        import cupy

        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        with self.stream:
            start.record(self.stream)
            body()
            end.record(self.stream)
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end)

    def warm_launch(self) -> None:
        with self.stream:
            self.launch()
        self.warmup += 1

    def prepare(self) -> None:
        """Size the hot batch from one warm launch (cold: one launch a sample) and capture it as a graph."""
        if self.cfg.mode == "hot":
            per_launch = self.timed_ms(self.launch)
            self.warmup += 1
            self.per_batch = max(
                1, min(self.cfg.max_launches_per_batch, round(self.cfg.target_batch_ms / max(per_launch, 1e-4)))
            )
        if self.cfg.use_graphs:
            self._capture()

    def _loop(self) -> None:
        for _ in range(self.per_batch):
            self.launch()

    def _capture(self) -> None:
        try:
            with self.stream:
                self.stream.begin_capture()
                try:
                    self._loop()
                finally:
                    graph = self.stream.end_capture()
            graph.launch(self.stream)  # first replay uploads the graph: keep it out of the samples
            self.stream.synchronize()
            self.graph, self.method = graph, "cuda_graph"
        except Exception:  # noqa: BLE001 - any capture failure means: time direct launches
            self.graph, self.method = None, "direct_cold" if self.cfg.mode == "cold" else "direct"

    def batch_ms(self) -> float:
        if self.cfg.mode == "cold":
            with self.stream:
                self.flush()  # outside the events: only the launch is timed
        body = (lambda: self.graph.launch(self.stream)) if self.graph is not None else self._loop
        return self.timed_ms(body) / self.per_batch


def time_interleaved(
    launches: dict[str, Callable[[], None]],
    cfg: TimingConfig,
    recent_clocks: Callable[[float], tuple[list[float], bool]] | None = None,
    energy_mj: Callable[[], float | None] | None = None,
    flush: Callable[[], None] | None = None,
    last: tuple[tuple[str, ...], Callable[[], None]] | None = None,
    near_power_cap: Callable[[float, float], bool] | None = None,
    capped_alone: bool | None = False,
) -> CellTiming:
    """Time each launch callable (they launch on the current stream); batches alternate between them.

    recent_clocks(seconds) -> (SM clocks sampled lately, whether the GPU was busy throughout) decides
    when warm-up ends; energy_mj() reads the energy counter around each batch; flush() evicts L2 (cold).
    last = (series names, prepare): once the stopping rule is met, prepare() runs (on the current stream, waited
    for) and each of those series times one more batch, kept as its last sample: the batches whose outputs the
    caller checks.
    Blocks of cap_block_s (block_s 0; one series alone too) where near_power_cap(since, fraction) finds the cap in the
    samples of warm-up or of a batch-by-batch timing (then done again), or where series "baseline" alone is held at
    it: capped_alone; None: not known, so it runs alone for CAP_PROBE_ALONE_S (beside a frugal kernel the pair's draw
    hides it) and the answer is left in CellTiming.alone_capped.
    """
    import cupy

    if cfg.mode == "cold" and flush is None:
        raise ValueError("cold timing needs an L2 flush")
    series = {name: _Series(fn, cupy.cuda.Stream(non_blocking=True), cfg, flush) for name, fn in launches.items()}
    warm_began = time.perf_counter()
    checked = None
    warmup_reason = None
    # Warm-up lasts until the cell's own telemetry can say whether it is at the power cap.
    probe_s = CAP_PROBE_S if near_power_cap and cfg.cap_block_s and not cfg.block_s else 0.0
    while not warmup_reason or time.perf_counter() - warm_began < probe_s:
        for s in series.values():
            s.warm_launch()
        for s in series.values():
            s.stream.synchronize()
        now = time.perf_counter()
        if checked is None or now - checked >= 0.01:  # telemetry moves every 10 ms
            checked = now
            clocks, busy = recent_clocks(cfg.warmup.window_s) if recent_clocks else (None, False)
            warmup_reason = cfg.warmup.decide(now - warm_began, clocks, busy, telemetry=recent_clocks is not None)
    capped = bool(probe_s) and near_power_cap(warm_began, cfg.cap_power_fraction)
    if probe_s and capped_alone is None and not capped and "baseline" in series and len(series) > 1:
        probe_began = time.perf_counter()
        while time.perf_counter() - probe_began < CAP_PROBE_ALONE_S:
            series["baseline"].warm_launch()
            series["baseline"].stream.synchronize()
        capped_alone = near_power_cap(probe_began, cfg.cap_power_fraction)
    # One series alone too: its clock lags the controller (batch by batch, cuBLAS alone ran 2-5 % fast at 8192^3).
    block_s = cfg.block_s or (cfg.cap_block_s if capped or capped_alone else 0.0)
    for s in series.values():
        s.prepare()
    warm_ended = time.perf_counter()

    samples: dict[str, list[float]] = {name: [] for name in series}
    batches: dict[str, list[Batch]] = {name: [] for name in series}
    read_energy = energy_mj or (lambda: None)
    energy_start = read_energy()

    def timed_batch(name: str) -> None:
        t0 = time.perf_counter()
        samples[name].append(series[name].batch_ms())
        batches[name].append(Batch(t0, time.perf_counter(), series[name].per_batch))

    def timed_block(block_s: float, name: str) -> None:  # untimed batches for its first half, then timed ones
        start = time.perf_counter()
        while time.perf_counter() - start < block_s / 2:
            series[name].batch_ms()
        timed_batch(name)
        while time.perf_counter() - start < block_s:
            timed_batch(name)

    def timed_phase(block_s: float) -> str:  # the stop reason; samples and batches from this phase only
        for name in series:
            samples[name].clear()
            batches[name].clear()
        began, rounds = time.perf_counter(), 0
        while True:
            for name in series:
                timed_block(block_s, name) if block_s else timed_batch(name)
            rounds += 1
            stop_reason = cfg.stopping.decide(list(samples.values()), time.perf_counter() - began)
            if stop_reason and (rounds >= MIN_BLOCK_ROUNDS or not block_s):
                return stop_reason

    why = "power cap in warm-up" if capped else "baseline alone at the power cap" if capped_alone else ""
    phase_began = time.perf_counter()
    stop_reason = timed_phase(block_s)
    # NVML's power reading lags (a 1 s average), so a short warm-up can miss the cap.
    if probe_s and not block_s and near_power_cap(phase_began, cfg.cap_power_fraction):
        block_s, why = cfg.cap_block_s, "power cap while timed batch by batch"
        stop_reason = timed_phase(block_s)
    if block_s:
        stop_reason += f", in blocks of {block_s:g} s" + (f", {why}" if not cfg.block_s else "")
    # The cap anywhere in the cell, for the caller (a baseline's own cell tells its partner cells).
    capped = capped or (bool(probe_s) and near_power_cap(warm_began, cfg.cap_power_fraction))
    if last:
        names, prepare = last
        prepare()
        cupy.cuda.get_current_stream().synchronize()
        for name in names:
            timed_batch(name)
    energy_end = read_energy()
    return CellTiming(
        series={
            name: SeriesTiming(samples[name], batches[name], s.per_batch, s.warmup, s.method)
            for name, s in series.items()
        },
        warmup_reason=warmup_reason,
        stop_reason=stop_reason,
        warmup_window=(warm_began, warm_ended),
        energy_mj=None if energy_start is None or energy_end is None else energy_end - energy_start,
        power_capped=capped,
        alone_capped=capped_alone,
    )


def launches_in(timing: SeriesTiming) -> int:
    return sum(b.launches for b in timing.batches)
