"""NVML sampling on a background thread while a cell is timed.

The sampler reads SM and memory clocks, temperature, power, the total energy counter
and the clock-event reasons every `interval_s`; each sample has a host timestamp so
the timing loop can attribute it to the batch (kernel or baseline) running then.
One NVML query costs 2-400 us (more in a virtual machine); the thread sleeps between samples.

The thread runs from the first cell on, between cells too, so that warm-up can see
whether the clock was already settled before the cell began (farm.measure.stopping.WarmupRule);
a cell's samples are those taken since its `start()`.
"""
from __future__ import annotations

import threading
import time

_GPU_IDLE = 0x1  # nvmlClocksEventReasonGpuIdle
_KEEP_S = 2.0  # samples older than this before a cell's start are dropped


class NvmlSampler:
    def __init__(self, pci_bus_id: str, interval_s: float = 0.01):
        import pynvml

        self._nvml = pynvml
        pynvml.nvmlInit()
        self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        self.interval_s = interval_s
        self.max_sm_clock_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(self._handle, pynvml.NVML_CLOCK_SM))
        self._samples: list[dict] = []
        self._lock = threading.Lock()
        self._cell_began = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def energy_mj(self) -> float | None:
        """Total energy counter (mJ since driver load); None where the GPU does not report it."""
        try:
            return float(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle))
        except self._nvml.NVMLError:
            return None

    def sample(self) -> dict:
        nv, h = self._nvml, self._handle
        try:
            reasons = nv.nvmlDeviceGetCurrentClocksEventReasons(h)
        except AttributeError:  # nvidia-ml-py before the rename
            reasons = nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        return {
            "t": time.perf_counter(),
            "sm_clock_mhz": float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            "mem_clock_mhz": float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            "temp_c": float(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "reasons": int(reasons),
        }

    def _run(self) -> None:
        while not self._stop.is_set():
            sample = self.sample()
            with self._lock:
                self._samples.append(sample)
            self._stop.wait(self.interval_s)

    def start(self) -> None:
        """A cell begins: its samples are those from now on (the thread starts on the first call)."""
        self._cell_began = time.perf_counter()
        with self._lock:
            self._samples = [x for x in self._samples if x["t"] >= self._cell_began - _KEEP_S]
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="nvml-sampler", daemon=True)
            self._thread.start()

    def stop(self) -> list[dict]:
        """The samples taken since start(); the thread goes on sampling."""
        with self._lock:
            return [x for x in self._samples if x["t"] >= self._cell_began]

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def recent_sm_clocks(self, seconds: float) -> tuple[list[float], bool]:
        """SM clocks sampled in the last `seconds`, and whether none of those samples saw the GPU idle."""
        now = time.perf_counter()
        with self._lock:
            recent = [x for x in self._samples if now - x["t"] <= seconds]
        return [x["sm_clock_mhz"] for x in recent], not any(x["reasons"] & _GPU_IDLE for x in recent)
