"""A paired cell's two arms are series of ONE interleaved timing (farm/measure/timing.py through CellTimer), with
the baseline: batches alternate in the arm order, both arms' last batches follow one fresh-input preparation and
are each checked, and a power state that drifts during the timing moves both arms' medians alike, so their ratio
holds where each median moves. CuPy's events and streams are stood in by a fake clock (no GPU needed)."""

from __future__ import annotations

import math
import sys
import time
import types

import pytest

from farm.cells import Cell, arm_order
from farm.measure.cell_timer import CellTimer, MeasureOptions, PostCheck
from farm.measure.stopping import StoppingRule, WarmupRule
from farm.measure.timing import TimingConfig


class FakeGpu:
    """A device clock that launches advance; each launch takes its series' time times the power state's factor,
    which drifts by `drift` over every `period` launches (as a power-capped H100's clock does within a cell)."""

    def __init__(self, drift: float, period: int = 40) -> None:
        self.now, self.launches, self.drift, self.period = 0.0, 0, drift, period
        self.log: list[str] = []  # the series of every launch, in order

    def launch(self, series: str, ms: float):
        def run() -> None:
            self.now += ms * (1 + self.drift * math.sin(2 * math.pi * self.launches / self.period))
            self.launches += 1
            self.log.append(series)

        return run

    def cupy(self) -> types.ModuleType:
        gpu = self

        class Event:
            def record(self, stream=None) -> None:
                self.t = gpu.now

            def synchronize(self) -> None:
                pass

        class Stream:
            def __init__(self, non_blocking: bool = False) -> None:
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc) -> None:
                pass

            def synchronize(self) -> None:
                pass

        cuda = types.SimpleNamespace(
            Event=Event,
            Stream=Stream,
            get_elapsed_time=lambda start, end: end.t - start.t,
            get_current_stream=lambda: Stream(),
        )
        return types.SimpleNamespace(cuda=cuda)


@pytest.fixture
def gpu(monkeypatch) -> FakeGpu:
    fake = FakeGpu(drift=0.03)
    monkeypatch.setitem(sys.modules, "cupy", fake.cupy())
    return fake


def options() -> MeasureOptions:
    timing = TimingConfig(
        use_graphs=False,
        max_launches_per_batch=4,
        target_batch_ms=40.0,  # every series at max_launches_per_batch
        warmup=WarmupRule(min_s=0.0),
        stopping=StoppingRule(min_samples=60, target_noise=0.0001, min_time_s=0.0, max_time_s=60.0, max_samples=60),
    )
    return MeasureOptions(timing=timing, telemetry=False)


def test_paired_arms_are_series_of_one_interleaved_timing(gpu):
    cell = Cell("naive", 64, 64, 64, repeat=1)
    first, second = arm_order(cell)
    calls: list[str] = []

    def check(arm: str):
        def run() -> dict:
            calls.append(f"check {arm}")
            return {"verified": True, "mismatches": 0, "max_abs_error": 0.0, "max_scaled_error": 0.0}

        return run

    launches = {first: gpu.launch(first, 1.0), second: gpu.launch(second, 1.0), "baseline": gpu.launch("baseline", 2.0)}
    post = PostCheck(lambda: calls.append("prepare"), {"a": check("a"), "b": check("b")})
    timed = CellTimer(options(), "0000:00:00.0", 1 << 20).time(launches, flops=2 * 64**3, post=post)

    assert list(timed) == ["a", "b"]
    (cols_a, _, checked_a), (cols_b, _, checked_b) = timed["a"], timed["b"]
    # one timing: one warm-up, one stop, the same number of batches, the cell's timed seconds shared
    for key in ("warmup_reason", "stop_reason", "warmup_seconds", "timed_seconds", "batches", "baseline_median_ms"):
        assert cols_a[key] == cols_b[key], key
    assert cols_a["batches"] == 61  # 60 interleaved rounds, then each arm's checked last batch
    # batches alternate first arm, second arm, baseline (4 launches each), the leading arm as arm_order says
    per = cols_a["launches_per_batch"]
    timed_log = gpu.log[-(60 * 3 * per + 2 * per) :]
    rounds = [timed_log[i * 3 * per : (i + 1) * 3 * per : per] for i in range(60)]
    assert all(r == [first, second, "baseline"] for r in rounds)
    assert timed_log[-2 * per :: per] == ["a", "b"]  # the last batches, after the one preparation
    assert calls == ["prepare", "check a", "check b"]
    assert checked_a["verified"] and checked_b["verified"]
    # the power state drifts 3 % within the timing; the arms, batch by batch in the same state, agree far closer
    ratio = cols_b["median_ms"] / cols_a["median_ms"]
    spread = (max(cols_a["samples_ms"]) - min(cols_a["samples_ms"])) / cols_a["median_ms"]
    assert spread > 0.03 and abs(ratio - 1) < 0.005
    assert cols_a["pct_of_baseline"] == pytest.approx(200, rel=0.05)  # the shared baseline series: 2 ms against 1


def test_an_unpaired_cell_keeps_one_measured_series(gpu):
    launches = {"kernel": gpu.launch("kernel", 1.0), "baseline": gpu.launch("baseline", 1.0)}
    ok = {"verified": True, "mismatches": 0, "max_abs_error": 0.0, "max_scaled_error": 0.0}
    timed = CellTimer(options(), "0000:00:00.0", 1 << 20).time(
        launches, 1, PostCheck(lambda: None, {"kernel": lambda: ok})
    )
    assert list(timed) == ["kernel"] and timed["kernel"][0]["batches"] == 61


def test_the_timer_learns_which_baselines_are_held_at_the_power_cap_alone(gpu, monkeypatch):
    """CellTimer remembers, per baseline and shape, what a baseline's own cell or a partner cell's probe said, and
    hands it to the next cells there (capped_alone; None: not known, so time_interleaved probes)."""
    import dataclasses

    from farm.measure import cell_timer

    real, passed, answers = cell_timer.time_interleaved, [], []

    def scripted(*args, **kwargs):
        passed.append(kwargs["capped_alone"])
        power_capped, alone_capped = answers.pop(0)
        return dataclasses.replace(real(*args, **kwargs), power_capped=power_capped, alone_capped=alone_capped)

    monkeypatch.setattr(cell_timer, "time_interleaved", scripted)
    timer = CellTimer(options(), "0000:00:00.0", 1 << 20)
    ok = {"verified": True, "mismatches": 0, "max_abs_error": 0.0, "max_scaled_error": 0.0}

    def cell(at, baseline_only=False, power_capped=False, alone_capped=None):
        answers.append((power_capped, alone_capped))
        series = {"baseline": gpu.launch("baseline", 1.0)}
        if not baseline_only:
            series["kernel"] = gpu.launch("kernel", 1.0)
        own = "baseline" if baseline_only else "kernel"
        timer.time(series, 1, PostCheck(lambda: None, {own: lambda: ok}), at, baseline_only)

    cell(("cublas_bf16", 8192, 8192, 8192), alone_capped=True)  # not known: probed, held
    cell(("cublas_bf16", 8192, 8192, 8192))  # known from the probe
    cell(("cublas_bf16", 4096, 4096, 4096), baseline_only=True, power_capped=True)  # the baseline's own cell
    cell(("cublas_bf16", 4096, 4096, 4096))
    cell(("cublas_bf16", 2048, 2048, 2048), alone_capped=False)  # probed, not held
    cell(("cublas_bf16", 2048, 2048, 2048))
    cell(None)  # nothing to remember under: never probed
    assert passed == [None, True, None, True, None, False, False]


class CappedGpu(FakeGpu):
    """A power-capped chip: a launch's time is its cycles over the clock factor min(1, CAP / draw), where draw is the
    recent power demand averaged over about `tau` ms of device time (the controller's lag). A kernel drawing 1.2 at
    full clock runs alone at 1 / 1.2 of it; beside one drawing 1.0, batch by batch, both run at the pair's clock."""

    CAP, TAU = 1.0, 20.0

    def __init__(self) -> None:
        super().__init__(drift=0.0)
        self.draw = 1.0

    def capped(self, series: str, cycles: float, power: float):
        def run() -> None:
            ms = cycles / min(1.0, self.CAP / self.draw)
            self.draw += (power - self.draw) * min(1.0, ms / self.TAU)
            self.now += ms
            self.log.append(series)

        return run


def capped_config(**timing) -> TimingConfig:
    """One launch a batch of 1 ms, no warm-up of its own, 20 samples a series at least: the capped chip's timing."""
    return TimingConfig(
        use_graphs=False,
        max_launches_per_batch=1,
        target_batch_ms=1.0,
        warmup=WarmupRule(min_s=0.0, max_s=0.0),
        stopping=StoppingRule(min_samples=20, target_noise=1.0, min_time_s=0.0, max_time_s=60.0),
        **timing,
    )


@pytest.mark.parametrize("block_s, expected", [(0.0, 100 * 1.05 / 1.0), (0.04, 100 * 1.05 / 1.2)])
def test_blocks_time_each_series_at_its_own_clock_under_a_power_cap(monkeypatch, block_s, expected):
    """Batch by batch, a kernel that draws more than cuBLAS times at the pair's shared clock: its % of cuBLAS is the
    ratio of their cycles (105 %), not what either runs at alone. In blocks (block_s, first half not kept), each series
    settles at its own draw: the % is what the two run at alone (1.05 against 1.2 ms: 87.5 %)."""
    from farm.measure.timing import time_interleaved

    gpu = CappedGpu()
    monkeypatch.setitem(sys.modules, "cupy", gpu.cupy())
    cfg = capped_config(block_s=block_s)
    kernel, cublas = gpu.capped("kernel", 1.0, 1.2), gpu.capped("cublas", 1.05, 1.0)
    timing = time_interleaved({"kernel": kernel, "cublas": cublas}, cfg)
    median = {name: sorted(s.samples_ms)[len(s.samples_ms) // 2] for name, s in timing.series.items()}
    assert 100 * median["cublas"] / median["kernel"] == pytest.approx(expected, rel=0.02)
    assert timing.stop_reason.endswith(f"in blocks of {block_s:g} s") == bool(block_s)


@pytest.mark.parametrize(
    "block_s, seen, alone, expected, reason",
    [
        (0.0, (False, False), False, 100 * 1.05 / 1.0, "converged"),  # no cap seen: batch by batch
        (0.0, (True,), False, 100 * 1.05 / 1.2, ", in blocks of 0.04 s, power cap in warm-up"),  # cap_block_s
        (0.0, (False, False), True, 100 * 1.05 / 1.2, ", in blocks of 0.04 s, baseline alone at the power cap"),
        # the warm-up missed it (NVML's power reading lags), the batch-by-batch timing showed it: timed again in blocks
        (0.0, (False, True), False, 100 * 1.05 / 1.2, ", in blocks of 0.04 s, power cap while timed batch by batch"),
        (0.04, (), False, 100 * 1.05 / 1.2, ", in blocks of 0.04 s"),  # block_s set: blocks, nothing asked
        # not known whether the baseline alone is held at the cap: it runs alone (a probe), and is
        (0.0, (False, True), None, 100 * 1.05 / 1.2, ", in blocks of 0.04 s, baseline alone at the power cap"),
        (0.0, (False, False, False), None, 100 * 1.05 / 1.0, "converged"),  # and is not
    ],
)
def test_a_cell_at_the_power_cap_is_timed_in_blocks(monkeypatch, block_s, seen, alone, expected, reason):
    """cap_block_s: warm-up lasts CAP_PROBE_S at least and asks near_power_cap about its own samples (those since it
    began, with the plan's cap_power_fraction); where it says yes, or the caller knows a series alone is held at the
    cap (capped_alone), the cell is timed as if block_s were cap_block_s; a cell timed batch by batch is asked again
    about its timed phase, and timed again in blocks where that showed the cap."""
    from farm.measure.timing import CAP_PROBE_ALONE_S, CAP_PROBE_S, time_interleaved

    gpu = CappedGpu()
    monkeypatch.setitem(sys.modules, "cupy", gpu.cupy())
    asked = []

    def near_power_cap(since: float, fraction: float) -> bool:
        asked.append((since, fraction, time.perf_counter()))
        return seen[min(len(asked), len(seen)) - 1]

    cfg = capped_config(block_s=block_s, cap_block_s=0.04, cap_power_fraction=0.6)
    kernel, cublas = gpu.capped("kernel", 1.0, 1.2), gpu.capped("cublas", 1.05, 1.0)
    timing = time_interleaved(
        {"kernel": kernel, "baseline": cublas}, cfg, near_power_cap=near_power_cap, capped_alone=alone
    )
    median = {name: sorted(s.samples_ms)[len(s.samples_ms) // 2] for name, s in timing.series.items()}
    assert 100 * median["baseline"] / median["kernel"] == pytest.approx(expected, rel=0.02)
    assert timing.stop_reason.endswith(reason)
    if alone is None:  # the probe: the baseline alone for CAP_PROBE_ALONE_S, asked about its own samples
        (_, _, warmed), (probe_began, _, probed) = asked[:2]
        assert timing.alone_capped is seen[1] and probed - probe_began >= CAP_PROBE_ALONE_S and probe_began >= warmed
    else:
        assert timing.power_capped == any(seen)
    if block_s:
        assert asked == []  # blocks already: nothing to decide
    else:
        since, fraction, when = asked[0]
        assert since == timing.warmup_window[0] and fraction == 0.6 and when - since >= CAP_PROBE_S
        if seen == (False, True):  # the re-timed cell keeps only its blocks' samples: every one at its own clock
            assert timing.series["kernel"].samples_ms[0] > 1.12  # batch by batch it ran at the pair's 1.1


@pytest.mark.parametrize(
    "seen, alone, reason",
    [
        ((True,), False, "power cap in warm-up"),
        ((False, True), False, "power cap while timed batch by batch"),
        ((False,), True, "baseline alone at the power cap"),  # the caller knows it from a partner cell's probe
    ],
)
def test_one_series_at_the_power_cap_is_timed_in_blocks_and_says_it_was_capped(monkeypatch, seen, alone, reason):
    """A baseline's own cell has no partner whose clock it could take, but its clock lags the controller: timed batch
    by batch for 0.2-0.3 s it ran before the clock came down (H100 8192^3 cuBLAS 2-5 % faster than in its blocks), so
    it is timed in blocks too, each block's first half not kept, two blocks at least; power_capped tells the caller
    (GpuMeasurer remembers it for the kernel cells of that baseline and shape)."""
    from farm.measure.timing import time_interleaved

    gpu = CappedGpu()
    monkeypatch.setitem(sys.modules, "cupy", gpu.cupy())
    asked = []

    def near_power_cap(since: float, fraction: float) -> bool:
        asked.append(since)
        return seen[min(len(asked), len(seen)) - 1]

    cfg = capped_config(cap_block_s=0.04)
    timing = time_interleaved(
        {"cublas": gpu.capped("cublas", 1.05, 1.0)}, cfg, near_power_cap=near_power_cap, capped_alone=alone
    )
    assert timing.stop_reason.endswith(f", in blocks of 0.04 s, {reason}") and timing.power_capped == any(seen)
    batches = timing.series["cublas"].batches
    assert batches[-1].t1 - batches[0].t0 >= 0.04 * 1.5  # two blocks: the second's timed half ends 1.5 blocks on
