"""A stand-in Measurer for tests and `farm simulate`: no GPU needed, deterministic fake timings, faults on request.

Each cell that runs sleeps $GEMM_FARM_STANDIN_CELL_MS milliseconds (10 by default; `farm simulate` sets it) and
reports that as its cell_seconds and timed_seconds. It takes the measure options and stage names to prewarm as
every measurer does (farm.cells.Measurer), and ignores them: only EmulatedGpuMeasurer times with the options.

Its GPU's NVML name comes from the node label ``standin.gpu-name`` (underscores for
spaces, as label values allow no spaces), its UUID from the node id and the GPU Ray
assigned it (CUDA_VISIBLE_DEVICES), so each declared GPU is a distinct stable device.

Faults: $GEMM_FARM_STANDIN_FAULTS names a JSON file with a list of
``{"action": ..., "stage": ..., "m": ..., "repeat": ...}`` (stage, m and repeat
optional: absent matches any), read at every cell. Actions:

- ``die_once``: the worker process exits (os._exit) the first time any worker runs the cell;
- ``die``: it exits every time;
- ``fault``: an "error" row, and the CUDA context reported poisoned (needs_restart):
  every later cell of this process is an "error" row too, as with a real GPU;
- ``hang``: the cell never returns;
- ``raise``: measure() raises;
- ``slow``: the cell's time is 5 % longer (its repeats disagree: what adaptive repeats answer);
- ``capped``: the cell's rows are flagged power-capped (``throttle_power``: a paired cell gets a second pair);
- ``fail_start_once`` / ``fail_start`` (no cell fields: checked when a worker builds its measurer): the
  measurer's constructor raises, the first time any worker starts / every time.

EmulatedGpuMeasurer is the stand-in on an emulated GeForce card (farm/cluster/emulated_geforce.py), for the
tests, which register it (farm.measure.measurers.register): its rows are test data, never a dataset's.
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
    """The faults file named by FAULTS_ENV and its entries; (None, []) when there is none."""
    path = os.environ.get(FAULTS_ENV)
    if not path or not Path(path).exists():
        return None, []
    return Path(path), json.loads(Path(path).read_text())


def _fire_once(spec: Path, index: int) -> bool:
    """True the first time entry `index` fires, across processes (an exclusively created marker file)."""
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
        """Both arms from one stand-in cell, as GpuMeasurer's come from one timing: one sleep, one fault check."""
        stage = stage_named(cell.stage)
        return self._rows(cell, [(run_ids[0], stage), (run_ids[1], stage_b or stage)])

    def _rows(self, cell: Cell, arms: list[tuple[str, object]]) -> list[dict]:
        """A row per (run id, stage) of one cell measured once."""
        if self._poisoned:  # as a real CUDA context: every later call fails until the process restarts
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
        ms = (
            flops / 1e9 * (1 + stage.position) * (1.05 if action == "slow" else 1)
        )  # deterministic, slower up the ladder
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
        """The columns every ok row of `stage` shares, built once: this process's CPU is what a simulated cluster
        has least of (farm simulate), while a real measurer's runs on its GPU's host."""
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
    """The stand-in on the emulated GeForce card its node's ``standin.gpu-name`` label names (emulated_geforce.CARDS).

    This worker's pynvml answers as that card (FakeNvml, patched in for the process's life), and the farm's real
    parts run on it: CellTimer's NVML sampler and cold-mode flush size, the warm-up rule, the throttle summary,
    the memory rule (free memory from NVML) and the FP64 check's sizing. A cell that runs warms up under the
    emulated load until the rule ends it, then sleeps the stopping rule's least timing time and the stand-in's cell
    time as its timed phase; its timings are the stand-in's.
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
        self._nvml.patcher().start()  # never stopped: the worker process is the card's for its life
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
            rows = super()._rows(cell, arms)  # the rest of the timed phase: the stand-in's sleep and timings
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
