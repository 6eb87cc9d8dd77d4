"""A stand-in Measurer for tests and `farm simulate`: no GPU, deterministic fake timings, faults on request.

A cell sleeps $GEMM_FARM_STANDIN_CELL_MS ms (default 10; `farm simulate` sets it): its cell_seconds and timed_seconds.
Measure options and prewarm stages are ignored; only EmulatedGpuMeasurer times with them.

NVML name: node label ``standin.gpu-name``, _ for spaces (label values allow none); UUID: node id + Ray's GPU
(CUDA_VISIBLE_DEVICES), distinct and stable per declared GPU.

Faults: $GEMM_FARM_STANDIN_FAULTS names a JSON list of ``{"action": ..., "stage": ..., "m": ..., "repeat": ...}``
(absent fields match any), read every cell. Actions:
- ``die_once`` / ``die``: the worker os._exit()s the first time any worker runs the cell / every time;
- ``fault``: an "error" row, the CUDA context poisoned (needs_restart): later cells of the process error, as on a GPU;
- ``hang``: never returns; ``raise``: measure() raises;
- ``slow``: 5 % longer (repeats disagree: what adaptive repeats answer);
- ``capped``: rows flagged power-capped (``throttle_power``: a paired cell gets a second pair);
- ``fail_start_once`` / ``fail_start`` (no cell fields): the constructor raises, the first time any worker starts /
  every time.

Tests register EmulatedGpuMeasurer (farm.measure.measurers.register; cards: farm/cluster/emulated_geforce.py): its
rows are test data, never a dataset's.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from pathlib import Path

import ray

from farm.cells import Cell
from farm.cluster.emulated_geforce import CARDS, FakeNvml
from farm.data.rows import cell_row
from farm.data.throttle import summarize_samples
from farm.measure.cell_timer import CellTimer, MeasureOptions
from farm.measure.device import model_from_name
from farm.measure.sizing import bytes_needed, memory_skip_reason, reference_plan
from kernels.registry import stage_named

FAULTS_ENV = "GEMM_FARM_STANDIN_FAULTS"
CELL_MS_ENV = "GEMM_FARM_STANDIN_CELL_MS"
NAME_LABEL = "standin.gpu-name"


def _matches(entry: dict, cell: Cell) -> bool:
    return all(entry.get(f, getattr(cell, f)) == getattr(cell, f) for f in ("stage", "m", "repeat"))


def _faults() -> tuple[Path | None, list[dict]]:
    """FAULTS_ENV's file and its entries, or (None, [])."""
    path = os.environ.get(FAULTS_ENV)
    if not path or not Path(path).exists():
        return None, []
    return Path(path), json.loads(Path(path).read_text())


def _fire_once(spec: Path, index: int) -> bool:
    """True the first time entry `index` fires, across processes (an exclusive marker file)."""
    try:
        os.close(os.open(f"{spec}.{index}.fired", os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


class StandinMeasurer:
    """Implements farm.cells.Measurer without a GPU."""

    def __init__(self, options: MeasureOptions, prewarm: tuple[str, ...] = ()) -> None:
        path, entries = _faults()
        for index, entry in enumerate(entries):
            if entry["action"] == "fail_start" or (entry["action"] == "fail_start_once" and _fire_once(path, index)):
                raise RuntimeError("stand-in failed to start")
        self._cell_s = float(os.environ.get(CELL_MS_ENV, "10")) / 1e3
        ctx = ray.get_runtime_context()
        name = ctx.get_node_labels().get(NAME_LABEL, "NVIDIA_Standin_GPU").replace("_", " ")
        gpu = ctx.get_accelerator_ids()["GPU"][0]
        self._device = {
            "host": f"node-{ctx.get_node_id()[:8]}",
            "gpu_name": name,
            "gpu_model": model_from_name(name),
            "gpu_uuid": f"GPU-standin-{ctx.get_node_id()[:12]}-{gpu}",
            "gpu_index": 0,
            "compute_capability": "9.0",
            "arch": "sm_90",
            "sm_count": 132,
        }
        self._poisoned = False
        self._ok_rows: dict[tuple[str, str], dict] = {}
        self.startup: dict[str, float] = {}

    def device_info(self) -> dict:
        return dict(self._device)

    def _fault(self, cell: Cell) -> str | None:
        path, entries = _faults()
        for index, entry in enumerate(entries):
            if entry["action"].startswith("fail_start"):
                continue
            if _matches(entry, cell) and (entry["action"] != "die_once" or _fire_once(path, index)):
                return entry["action"]
        return None

    def measure(self, cell: Cell, run_id: str) -> dict:
        return self._rows(cell, [(run_id, stage_named(cell.stage))])[0]

    def measure_pair(self, cell: Cell, run_ids: tuple[str, str], stage_b=None) -> list[dict]:
        """Both arms from one stand-in cell, as GpuMeasurer's from one timing: one sleep, one fault check."""
        stage = stage_named(cell.stage)
        return self._rows(cell, [(run_ids[0], stage), (run_ids[1], stage_b or stage)])

    def _rows(self, cell: Cell, arms: list[tuple[str, object]]) -> list[dict]:
        """A row per (run id, stage) of one cell measured once."""
        if self._poisoned:  # as a real CUDA context: later calls fail until restart
            why = "CUDA context poisoned by an earlier fault"
            return [cell_row(self._device, stage, cell, run_id, "error", why) for run_id, stage in arms]
        action = self._fault(cell)
        if action in ("die", "die_once"):
            os._exit(3)
        if action == "hang":
            time.sleep(3600)
        if action == "raise":
            raise RuntimeError(f"stand-in raised on {cell}")
        if action == "fault":
            self._poisoned = True
            why = "CUDA_ERROR_ILLEGAL_ADDRESS (stand-in)"
            return [cell_row(self._device, stage, cell, run_id, "error", why) for run_id, stage in arms]
        reasons = [stage.unsupported_reason(cell.m, cell.n, cell.k, 90) for _, stage in arms]
        if any(reasons):
            why = next(r for r in reasons if r)
            return [cell_row(self._device, stage, cell, run_id, "skipped", why) for run_id, stage in arms]
        if self._cell_s:  # an instant cell does not even yield the CPU
            time.sleep(self._cell_s)
        stamp = _dt.datetime.now(_dt.timezone.utc)
        return [self._ok_row(cell, run_id, stage, action, stamp) for run_id, stage in arms]

    def _ok_row(self, cell: Cell, run_id: str, stage, action: str | None, stamp: _dt.datetime) -> dict:
        flops = stage.flops(cell.m, cell.n, cell.k)
        # deterministic, slower up the ladder
        ms = flops / 1e9 * (1 + stage.position) * (1.05 if action == "slow" else 1)
        row = dict(self._ok_columns(stage, run_id))
        row.update(
            repeat=cell.repeat,
            timestamp=stamp,
            m=cell.m,
            n=cell.n,
            k=cell.k,
            flops=flops,
            samples_ms=[ms] * 3,
            median_ms=ms,
            min_ms=ms,
            max_ms=ms,
            q1_ms=ms,
            q3_ms=ms,
            tflops=flops / ms / 1e9,
            baseline_median_ms=ms,
            throttle_power=action == "capped",
        )
        return row

    def _ok_columns(self, stage, run_id: str) -> dict:
        """Columns every ok row of `stage` shares, built once: this process's CPU is scarce in `farm simulate` (real
        measurers run on their GPU's host)."""
        key = (stage.name, run_id)
        if key not in self._ok_rows:
            row = cell_row(self._device, stage, Cell(stage.name, 0, 0, 0), run_id, "ok")
            row.update(
                verified=True,
                post_checked=True,
                launches_per_batch=10,
                batches=3,
                iqr_ms=0.0,
                pct_of_baseline=100.0,
                launch_method="cuda_graph",
                baseline_launch_method="cuda_graph",
                cell_seconds=self._cell_s,
                timed_seconds=self._cell_s,
            )
            self._ok_rows[key] = row
        return self._ok_rows[key]

    def needs_restart(self) -> bool:
        return self._poisoned


class EmulatedGpuMeasurer(StandinMeasurer):
    """The stand-in on the emulated GeForce card (emulated_geforce.CARDS) named by node label ``standin.gpu-name``.

    Its pynvml answers as that card (FakeNvml, patched for life) to the farm's real parts: CellTimer's NVML sampler and
    cold-mode flush size, warm-up rule, throttle summary, memory rule (NVML free memory), FP64 check sizing. A cell
    warms up under emulated load until the rule ends it, then sleeps the stopping rule's least timing time plus the
    stand-in's cell time; timings are the stand-in's.
    """

    def __init__(self, options: MeasureOptions, prewarm: tuple[str, ...] = ()) -> None:
        super().__init__(options, prewarm)
        card = CARDS.get(self._device["gpu_name"])
        if card is None:
            raise ValueError(
                f"no emulated card is named {self._device['gpu_name']!r} (node label {NAME_LABEL}); "
                f"emulated: {', '.join(CARDS)}"
            )
        self._nvml = FakeNvml(card)
        self._nvml.patcher().start()  # never stopped: the worker is the card's for life
        major, minor = (int(x) for x in card.compute_capability.split("."))
        self._cc = 10 * major + minor
        self._timer = CellTimer(options, card.pci_bus_id, card.l2_bytes)
        self._device.update(
            compute_capability=card.compute_capability,
            arch=card.arch,
            sm_count=card.sm_count,
            l2_bytes=card.l2_bytes,
            memory_bytes=card.memory_bytes,
            max_sm_clock_mhz=card.max_sm_clock_mhz,
        )

    def _free_bytes(self) -> int:
        import pynvml

        return int(
            pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByPciBusId(self._nvml.card.pci_bus_id)).free
        )

    def _rows(self, cell: Cell, arms: list[tuple[str, object]]) -> list[dict]:
        stage = arms[0][1]
        m, n, k = cell.m, cell.n, cell.k
        reason = next(
            (r for _, s in arms if (r := s.unsupported_reason(m, n, k, self._cc))), None
        ) or memory_skip_reason(stage, m, n, k, self._device, self._free_bytes(), self._timer.flush_bytes)
        if reason:
            return [cell_row(self._device, s, cell, run_id, "skipped", reason) for run_id, s in arms]
        sampler, warmup = self._timer.sampler, self._timer.options.timing.warmup
        self._nvml.used_bytes = bytes_needed(stage, m, n, k, self._device, self._timer.flush_bytes)
        self._nvml.load(True)
        began = time.perf_counter()
        if sampler:
            sampler.start()
        try:
            why = None
            while why is None:
                clocks, busy = sampler.recent_sm_clocks(warmup.window_s) if sampler else (None, False)
                why = warmup.decide(time.perf_counter() - began, clocks, busy, telemetry=sampler is not None)
                time.sleep(0.005)
            warmed = time.perf_counter()
            energy = [sampler.energy_mj() if sampler else None]
            time.sleep(self._timer.options.timing.stopping.min_time_s)  # a real cell's timing lasts at least this
            rows = super()._rows(cell, arms)
            energy.append(sampler.energy_mj() if sampler else None)
            timed = [x for x in sampler.stop() if x["t"] >= warmed] if sampler else []
        finally:
            self._nvml.load(False)
            self._nvml.used_bytes = 0
        tele = (
            summarize_samples(timed, sampler.max_sm_clock_mhz, tuple(sampler.unreported))
            if sampler
            else {"telemetry_samples": 0}
        )
        for row in rows:
            if row["status"] == "ok":
                row.update(
                    tele,
                    telemetry=sampler is not None,
                    warmup_reason=why,
                    warmup_seconds=warmed - began,
                    energy_timed_j=None if None in energy else (energy[1] - energy[0]) / 1e3,
                    timing_mode=self._timer.options.timing.mode,
                    flush_bytes=self._timer.flush_bytes or None,
                    verify_reference=reference_plan(m, n, k, self._device).describe()
                    if stage.is_baseline
                    else f"{stage.baseline} output",
                )
        return rows
