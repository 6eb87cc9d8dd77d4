"""Hot timing with CUDA events: warm-up, then interleaved batches of back-to-back launches.

Only the launches sit between a batch's two events: inputs, poisoning and checks
happen before timing starts. A batch is captured once as a CUDA graph and replayed,
so Python's launch overhead never shows between launches of short kernels; if
capture fails (a library refusing it), batches fall back to direct launches and
the row records which method produced its numbers.

Series (a kernel and its cuBLAS baseline) are timed in alternating batches, so both
see the same clocks and temperature and their ratio is not skewed by drift.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class TimingConfig:
    warmup_ms: float = 200.0  # per series, at least `min_warmup_launches`
    min_warmup_launches: int = 3
    target_batch_ms: float = 10.0  # launches per batch chosen so a batch lasts about this long
    max_launches_per_batch: int = 200
    batches: int = 10  # timed batches per series
    min_batches: int = 3  # never fewer, even past max_seconds
    max_seconds: float = 20.0  # per cell, warm-up included
    use_graphs: bool = True


@dataclass
class SeriesTiming:
    samples_ms: list[float]  # per-launch time of each batch
    launches_per_batch: int
    warmup_launches: int
    launch_method: str  # cuda_graph | direct


class _Series:
    """One launchable thing on a dedicated stream, with its batch (graph or loop)."""

    def __init__(self, launch: Callable[[], None], stream):
        self.launch, self.stream = launch, stream
        self.graph = None
        self.per_batch = 1
        self.warmup = 0
        self.method = "direct"

    def _events(self):
        import cupy

        return cupy.cuda.Event(), cupy.cuda.Event()

    def _timed(self, body: Callable[[], None]) -> float:
        import cupy

        start, end = self._events()
        with self.stream:
            start.record(self.stream)
            body()
            end.record(self.stream)
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end)

    def _loop(self, count: int) -> None:
        for _ in range(count):
            self.launch()

    def warm_up(self, cfg: TimingConfig) -> None:
        first = self._timed(lambda: self._loop(1))  # includes module load: only sizes the warm-up
        count = max(cfg.min_warmup_launches, min(1000, math.ceil(cfg.warmup_ms / max(first, 1e-3))))
        per_launch = self._timed(lambda: self._loop(count)) / count
        self.warmup = 1 + count
        self.per_batch = max(1, min(cfg.max_launches_per_batch, round(cfg.target_batch_ms / max(per_launch, 1e-4))))
        if cfg.use_graphs:
            self._capture()

    def _capture(self) -> None:
        try:
            with self.stream:
                self.stream.begin_capture()
                try:
                    self._loop(self.per_batch)
                finally:
                    graph = self.stream.end_capture()
            graph.launch(self.stream)  # first replay uploads the graph: keep it out of the samples
            self.stream.synchronize()
            self.graph, self.method = graph, "cuda_graph"
        except Exception:  # noqa: BLE001 - any capture failure means: time direct launches
            self.graph, self.method = None, "direct"

    def batch_ms(self) -> float:
        body = (lambda: self.graph.launch(self.stream)) if self.graph is not None else (lambda: self._loop(self.per_batch))
        return self._timed(body) / self.per_batch


def time_interleaved(launches: dict[str, Callable[[], None]], cfg: TimingConfig) -> dict[str, SeriesTiming]:
    """Time each launch callable; batches alternate between them. Callables launch on the current stream."""
    import cupy

    began = time.perf_counter()
    series = {name: _Series(fn, cupy.cuda.Stream(non_blocking=True)) for name, fn in launches.items()}
    for s in series.values():
        s.warm_up(cfg)
    samples: dict[str, list[float]] = {name: [] for name in series}
    for b in range(cfg.batches):
        if b >= cfg.min_batches and time.perf_counter() - began > cfg.max_seconds:
            break
        for name, s in series.items():
            samples[name].append(s.batch_ms())
    return {
        name: SeriesTiming(samples_ms=samples[name], launches_per_batch=s.per_batch, warmup_launches=s.warmup, launch_method=s.method)
        for name, s in series.items()
    }
