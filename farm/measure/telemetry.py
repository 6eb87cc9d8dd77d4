"""NVML sampling on a background thread while a cell is timed, field by field.

The sampler reads SM and memory clocks, temperature, power and the clock-event reasons every
`interval_s`, the energy counter around each timed phase, the maximum SM clock and power limit once;
each sample's host timestamp attributes it to the batch (kernel or baseline) running then. One NVML
query costs 2-400 us (more in a virtual machine); the thread sleeps between samples.

Every query stands alone, because GeForce boards, laptops above all, and some drivers answer some of
them with NOT_SUPPORTED (NVML's API reference promises full support only to data-centre and
workstation boards): such a field is `None` in every sample from then on and is never asked again; a
field that fails otherwise is `None` in that sample only, and is given up after `GIVE_UP_AFTER`
failures in a row. `unreported` says which fields this GPU did not give, and why; the thread never
dies of a query.

The thread runs from the first cell on, between cells too, so that warm-up can see whether the clock
had settled before the cell began (farm.measure.stopping.WarmupRule); a cell's samples are those
since its `start()`.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable

from farm.data.throttle import POWER, SAMPLED_FIELDS as SAMPLED

_GPU_IDLE = 0x1  # nvmlClocksEventReasonGpuIdle
_KEEP_S = 2.0  # seconds of samples kept from before a cell's start
HELD_CLOCK_FRACTION = 0.98  # a median SM clock under this x its maximum is held (15 MHz: 0.8 %)
GIVE_UP_AFTER = 10  # failures in a row that make a field not reported
FIELDS = (*SAMPLED, "energy_mj", "max_sm_clock_mhz", "power_limit_w")
# Errors that mean "never": the GPU, its driver or this binding lacks it.
_NEVER = ("NVMLError_NotSupported", "NVMLError_FunctionNotFound")


class NvmlSampler:
    def __init__(self, pci_bus_id: str, interval_s: float = 0.01):
        import pynvml

        self._nvml = pynvml
        self.interval_s = interval_s
        self.unreported: dict[str, str] = {}  # field -> why this GPU gave no value
        self._failures = dict.fromkeys(FIELDS, 0)
        self._handle = None
        try:
            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        except pynvml.NVMLError as exc:
            self.unreported = dict.fromkeys(FIELDS, f"NVML unavailable: {type(exc).__name__}")
        nv = pynvml
        self._queries: dict[str, Callable] = {
            "sm_clock_mhz": lambda h: float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            "mem_clock_mhz": lambda h: float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            "temp_c": lambda h: float(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            "power_w": lambda h: nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            # an older nvidia-ml-py has the old name only
            "reasons": lambda h: int(
                (
                    getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
                    or nv.nvmlDeviceGetCurrentClocksThrottleReasons
                )(h)
            ),
            "energy_mj": lambda h: float(nv.nvmlDeviceGetTotalEnergyConsumption(h)),
            "max_sm_clock_mhz": lambda h: float(nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
            "power_limit_w": lambda h: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
        }
        self.max_sm_clock_mhz = self._read("max_sm_clock_mhz")
        self.power_limit_w = self._read("power_limit_w")  # read again when needed if this fails
        self._samples: list[dict] = []
        self._lock = threading.Lock()
        self._cell_began = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self, field: str) -> float | int | None:
        """One field's value, None where this GPU does not give it (now or for good: see `unreported`)."""
        if field in self.unreported:
            return None
        try:
            value = self._queries[field](self._handle)
        except Exception as exc:  # noqa: BLE001 - no query may stop the sampler
            name = type(exc).__name__
            if name in _NEVER or isinstance(exc, AttributeError):
                self.unreported[field] = (
                    "not supported" if name != "NVMLError_FunctionNotFound" else "no such NVML function"
                )
            else:
                self._failures[field] += 1
                if self._failures[field] >= GIVE_UP_AFTER:
                    self.unreported[field] = f"failed {GIVE_UP_AFTER} times in a row ({name})"
            return None
        self._failures[field] = 0
        return value

    def energy_mj(self) -> float | None:
        """Total energy counter (mJ since driver load); None where the GPU does not report it."""
        return self._read("energy_mj")

    def sample(self) -> dict:
        return {"t": time.perf_counter(), **{field: self._read(field) for field in SAMPLED}}

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

    def near_power_cap(self, since: float, fraction: float) -> bool:
        """Whether the samples since host time `since` show the GPU held at its power cap: their median SM clock under
        HELD_CLOCK_FRACTION of its maximum (where reported) while the cap's reason shows in one of them or their mean
        draw is at least `fraction` of the enforced limit. A reason set for a moment, or NVML's power reading (averaged
        over up to 1 s: the previous cell's), at the top clock slows no one."""
        with self._lock:
            recent = [x for x in self._samples if x["t"] >= since]
        clocks = [x["sm_clock_mhz"] for x in recent if x["sm_clock_mhz"] is not None]
        top = self.max_sm_clock_mhz
        if clocks and top and statistics.median(clocks) >= HELD_CLOCK_FRACTION * top:
            return False
        if any(x["reasons"] is not None and x["reasons"] & POWER for x in recent):
            return True
        draws = [x["power_w"] for x in recent if x["power_w"] is not None]
        if self.power_limit_w is None:
            self.power_limit_w = self._read("power_limit_w")
        return bool(draws and self.power_limit_w) and sum(draws) / len(draws) >= fraction * self.power_limit_w

    def recent_sm_clocks(self, seconds: float) -> tuple[list[float] | None, bool]:
        """SM clocks sampled in the last `seconds` (None: this GPU reports no SM clock), and whether the GPU was
        seen busy throughout: every one of those samples has clock-event reasons, none of them GPU-idle (a GPU
        that reports no reasons is never seen busy)."""
        now = time.perf_counter()
        with self._lock:
            recent = [x for x in self._samples if now - x["t"] <= seconds]
        if "sm_clock_mhz" in self.unreported:
            clocks = None
        else:
            clocks = [x["sm_clock_mhz"] for x in recent if x["sm_clock_mhz"] is not None]
        busy = bool(recent) and all(x["reasons"] is not None and not x["reasons"] & _GPU_IDLE for x in recent)
        return clocks, busy
