"""Emulated GeForce cards for CI: each card's facts with their public sources, and a fake NVML that answers as
that card would, by patching the functions of the real `pynvml` module (the binding itself is never replaced).

Test data only: the stand-in measurer (farm/cluster/standin.py, EmulatedGpuMeasurer) runs the farm's real
telemetry, warm-up, memory and reference-check rules against these cards, so that a CI run walks the paths a
laptop takes; its rows never enter a shipped dataset or the dashboard's defaults.

What is a fact and what is a scenario: SM counts, L2, memory, clocks and compute capability are the cards'
published specifications (each cited). Which NVML fields a card does not report is not in any specification:
NVML's API reference promises its queries only on "fully supported" (data-centre and workstation) boards, and
users report power readings missing on GeForce laptops; the emulation gives each card a different gap (cited
where a report exists, called a scenario where none does) so that every field the sampler reads is missing on
some card.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from unittest import mock

WALK_A = (
    "walk A write-up (Pupking/01_tiled_gemm, shared/writeups/001): cudaGetDeviceProperties on the RTX 3050 "
    "Laptop: GA107, sm_86, 16 SMs, 1.5 MB L2, 3.68 GB VRAM, 128-bit bus, 192 GB/s"
)
NV_30_LAPTOPS = (
    "NVIDIA GeForce RTX 30 Series Laptops specifications: RTX 3050 Laptop GPU boost clock 1057-1740 MHz, "
    "https://www.nvidia.com/en-us/geforce/laptops/30-series/"
)
ADA = (
    "NVIDIA Ada GPU Architecture whitepaper: RTX 4090, AD102, 128 SMs, 72 MB L2, 24 GB GDDR6X at 21 Gbps on a "
    "384-bit bus (1008 GB/s), boost clock 2520 MHz, "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
)
WALK_C = (
    "walk C write-up (gpusgobrr/explore-gemm, shared/writeups/004): RTX 4090 specifications table, 128 SMs, "
    "72 MB L2, 24 GB GDDR6X, 1,008 GB/s"
)
NV_50_LAPTOPS = (
    "NVIDIA GeForce RTX 50 Series Laptops specifications: RTX 5060 Laptop GPU, 3328 CUDA cores, boost "
    "clock 1455-2497 MHz, 8 GB GDDR7, https://www.nvidia.com/en-us/geforce/laptops/50-series/"
)
RTX_BLACKWELL = (
    "NVIDIA RTX Blackwell GPU Architecture whitepaper: 128 CUDA cores per SM, compute capability 12.0, "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"
)
WALK_B = (
    "walk B write-up (WingEdge777/vitamin-cuda, shared/writeups/003): the RTX 5060 Laptop's L2 is 32 MB, "
    "subject to dynamic clocking"
)
LAPTOP_POWER = (
    "laptop GeForce boards answer NVML's power query NOT_SUPPORTED or with nonsense: Syllo/nvtop#79 "
    "(RTX 2060 Mobile), msminhas93/nviwatch#28 (RTX 4060: NotSupported for power_usage), "
    "seerge/g-helper#5819 (mobile RTX 40); the energy counter needs the same power sensor"
)
SCENARIO = "scenario, no public report: chosen so that CI covers a card without this field"

_MIB = 2**20


@dataclass(frozen=True)
class Card:
    """One emulated card: what NVML and the CUDA device properties would say, and where each fact comes from."""

    nvml_name: str
    compute_capability: str
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    max_sm_clock_mhz: float
    max_mem_clock_mhz: float
    power_limit_w: float  # NVML's enforced power limit (unless `unsupported` names power_limit_w)
    # The emulation's behaviour under load (a scenario, not a specification): the SM clock it settles at, and the
    # NVML clock-event bits it then shows (0x4: software power cap, what a laptop's power limit raises).
    loaded_sm_clock_mhz: float
    loaded_reasons: int
    unsupported: tuple[str, ...]  # telemetry fields NVML answers NOT_SUPPORTED (farm.measure.telemetry.FIELDS)
    fails_once: tuple[str, ...]  # fields whose first query fails with NVML_ERROR_UNKNOWN, later ones answer
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def arch(self) -> str:
        return "sm_" + self.compute_capability.replace(".", "")

    @property
    def pci_bus_id(self) -> str:
        return "00000000:01:00.0"


CARDS: dict[str, Card] = {
    c.nvml_name: c
    for c in (
        Card(
            "NVIDIA GeForce RTX 3050 Laptop GPU",
            "8.6",
            sm_count=16,
            l2_bytes=1536 * 1024,
            memory_bytes=int(3.68 * 2**30),
            max_sm_clock_mhz=1740.0,
            max_mem_clock_mhz=6001.0,  # 192 GB/s on 128 bits: 12 Gbps, NVML's clock is half
            power_limit_w=60.0,  # never answered: see unsupported
            loaded_sm_clock_mhz=1500.0,
            loaded_reasons=0x4,
            unsupported=("power_w", "energy_mj", "power_limit_w"),
            fails_once=("mem_clock_mhz",),
            sources={
                "compute_capability, sm_count, l2_bytes, memory_bytes, max_mem_clock_mhz": WALK_A,
                "max_sm_clock_mhz": NV_30_LAPTOPS,
                "loaded_sm_clock_mhz": f"{WALK_A} (its peak arithmetic assumes 1.5 GHz); power cap under load: {SCENARIO}",
                "unsupported": f"{LAPTOP_POWER} (the power limit with them: scenario)",
                "fails_once": SCENARIO,
            },
        ),
        Card(
            "NVIDIA GeForce RTX 4090",
            "8.9",
            sm_count=128,
            l2_bytes=72 * _MIB,
            memory_bytes=24 * 2**30,
            max_sm_clock_mhz=2520.0,
            max_mem_clock_mhz=10501.0,  # 21 Gbps: NVML's clock is half the data rate
            power_limit_w=450.0,
            loaded_sm_clock_mhz=2520.0,
            loaded_reasons=0x0,
            unsupported=(),
            fails_once=("temp_c",),
            sources={
                "compute_capability, sm_count, l2_bytes, memory_bytes, max_sm_clock_mhz, max_mem_clock_mhz": ADA,
                "power_limit_w (its total graphics power)": ADA,
                "sm_count, l2_bytes, memory_bytes": WALK_C,
                "unsupported (none: a desktop board reports every field)": (
                    "nvidia-smi on desktop GeForce boards shows "
                    "power draw and cap, e.g. NVIDIA/open-gpu-kernel-modules#907"
                ),
                "loaded_sm_clock_mhz, loaded_reasons, fails_once": SCENARIO,
            },
        ),
        Card(
            "NVIDIA GeForce RTX 5060 Laptop GPU",
            "12.0",
            sm_count=26,
            l2_bytes=32 * _MIB,
            memory_bytes=8 * 2**30,
            max_sm_clock_mhz=2497.0,
            max_mem_clock_mhz=12001.0,  # GDDR7 at 24 Gbps (scenario: the spec page gives no rate)
            power_limit_w=85.0,  # never answered: see unsupported
            loaded_sm_clock_mhz=2100.0,
            loaded_reasons=0x4,
            unsupported=("power_w", "energy_mj", "sm_clock_mhz", "reasons", "power_limit_w"),
            fails_once=(),
            sources={
                "sm_count": f"{NV_50_LAPTOPS}; {RTX_BLACKWELL} (3328 / 128 = 26)",
                "compute_capability": RTX_BLACKWELL,
                "l2_bytes": WALK_B,
                "memory_bytes, max_sm_clock_mhz": NV_50_LAPTOPS,
                "unsupported power_w, energy_mj": LAPTOP_POWER,
                "unsupported power_limit_w, sm_clock_mhz, reasons; max_mem_clock_mhz, loaded_sm_clock_mhz, loaded_reasons": SCENARIO,
            },
        ),
    )
}


class FakeNvml:
    """pynvml's device queries answering as `card` would; `load(True)` while the emulated GPU works.

    Under load the SM clock ramps from 210 MHz (idle) to the card's loaded clock over `ramp_s`, then holds; idle,
    it reads 210 MHz with the GPU-idle clock-event bit, and work resumed within `ramp_s` finds the clock still up
    for as long again as the pause was short. Memory: `used_bytes` of the card's memory in use.
    """

    IDLE_SM_CLOCK_MHZ = 210.0

    def __init__(self, card: Card, ramp_s: float = 0.1) -> None:
        import pynvml

        self.card, self.ramp_s = card, ramp_s
        self.used_bytes = 0
        self._nv = pynvml
        self._loaded_since: float | None = None
        self._idle_since = -1e9
        self._failed: set[str] = set()
        self._lock = threading.Lock()

    def load(self, on: bool) -> None:
        now = time.perf_counter()
        if on and self._loaded_since is None:  # a pause shorter than the ramp leaves the clock up
            self._loaded_since = now - max(self.ramp_s - (now - self._idle_since), 0.0)
        elif not on:
            self._loaded_since, self._idle_since = None, now

    def _answer(self, fld: str, value):
        """`value` for telemetry field `fld`, or the NVML error the card gives for it."""
        if fld in self.card.unsupported:
            raise self._nv.NVMLError(self._nv.NVML_ERROR_NOT_SUPPORTED)
        with self._lock:
            first = fld in self.card.fails_once and fld not in self._failed
            self._failed.add(fld)
        if first:
            raise self._nv.NVMLError(self._nv.NVML_ERROR_UNKNOWN)
        return value

    def _sm_clock(self) -> float:
        if self._loaded_since is None:
            return self.IDLE_SM_CLOCK_MHZ
        ramp = min((time.perf_counter() - self._loaded_since) / self.ramp_s, 1.0)
        return self.IDLE_SM_CLOCK_MHZ + ramp * (self.card.loaded_sm_clock_mhz - self.IDLE_SM_CLOCK_MHZ)

    def _clock(self, handle, kind: int) -> int:
        if kind == self._nv.NVML_CLOCK_SM:
            return int(self._answer("sm_clock_mhz", self._sm_clock()))
        return int(self._answer("mem_clock_mhz", self.card.max_mem_clock_mhz))

    def _max_clock(self, handle, kind: int) -> int:
        value = self.card.max_sm_clock_mhz if kind == self._nv.NVML_CLOCK_SM else self.card.max_mem_clock_mhz
        return int(self._answer("max_sm_clock_mhz" if kind == self._nv.NVML_CLOCK_SM else "max_mem_clock_mhz", value))

    def _reasons(self, handle) -> int:
        return self._answer("reasons", 0x1 if self._loaded_since is None else self.card.loaded_reasons)

    def _memory(self, handle):
        total = self.card.memory_bytes
        return self._nv.c_nvmlMemory_t(total=total, free=total - self.used_bytes, used=self.used_bytes)

    def patcher(self):
        """pynvml's functions answering as the card: a context manager for a test, or start() for a worker's life."""
        nv = self._nv
        answers = {
            "nvmlInit": lambda: None,
            "nvmlDeviceGetHandleByPciBusId": lambda bus_id: self.card.pci_bus_id,
            "nvmlDeviceGetName": lambda h: self.card.nvml_name,
            "nvmlDeviceGetClockInfo": self._clock,
            "nvmlDeviceGetMaxClockInfo": self._max_clock,
            "nvmlDeviceGetTemperature": lambda h, sensor: self._answer(
                "temp_c", 45 if self._loaded_since is None else 71
            ),
            "nvmlDeviceGetPowerUsage": lambda h: self._answer(
                "power_w", 12000 if self._loaded_since is None else 95000
            ),
            "nvmlDeviceGetEnforcedPowerLimit": lambda h: self._answer(
                "power_limit_w", int(self.card.power_limit_w * 1000)
            ),
            "nvmlDeviceGetTotalEnergyConsumption": lambda h: self._answer(
                "energy_mj", int(time.perf_counter() * 50000)
            ),
            "nvmlDeviceGetCurrentClocksEventReasons": self._reasons,
            "nvmlDeviceGetMemoryInfo": self._memory,
        }
        return mock.patch.multiple(nv, **answers)
