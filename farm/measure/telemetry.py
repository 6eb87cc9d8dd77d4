"""NVML sampling on a background thread while a cell is timed.

The sampler reads SM and memory clocks, temperature, power, the total energy counter
and the clock-event reasons every `interval_s`; each sample has a host timestamp so
the timing loop can attribute it to the batch (kernel or baseline) running then.
One NVML query costs about 2 us; the thread sleeps between samples.
"""
from __future__ import annotations

import threading
import time


class NvmlSampler:
    def __init__(self, pci_bus_id: str, interval_s: float = 0.01):
        import pynvml

        self._nvml = pynvml
        pynvml.nvmlInit()
        self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        self.interval_s = interval_s
        self.max_sm_clock_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(self._handle, pynvml.NVML_CLOCK_SM))
        self._samples: list[dict] = []
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
            self._samples.append(self.sample())
            self._stop.wait(self.interval_s)

    def start(self) -> None:
        self._samples = []
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="nvml-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> list[dict]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self._samples

    def recent_sm_clocks(self, seconds: float) -> list[float]:
        """SM clocks sampled in the last `seconds` (read while the thread runs)."""
        now = time.perf_counter()
        return [s["sm_clock_mhz"] for s in list(self._samples) if now - s["t"] <= seconds]
