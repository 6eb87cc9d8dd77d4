"""Who this GPU is: the provenance columns of every row it produces (CUDA + NVML)."""

from __future__ import annotations

import socket


def _nvml_facts(pci_bus_id: str) -> dict:
    """UUID and driver version from NVML ('unknown' where NVML cannot answer), and the clock and bandwidth behind the
    physical-limit check (farm/data/limits.py), each None where NVML cannot say: the maximum SM clock, and the DRAM
    bandwidth as bus width x maximum memory clock x 2 (double data rate: H100 SXM 5120 bits x 2619 MHz -> 3.35 TB/s,
    RTX 4090 384 bits x 10501 MHz -> 1.01 TB/s, as their data sheets)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        driver = pynvml.nvmlSystemGetDriverVersion()
    except Exception as exc:  # noqa: BLE001 - provenance must not stop a measurement
        return {
            "gpu_uuid": f"unknown ({type(exc).__name__})",
            "driver_version": "unknown",
            "max_sm_clock_mhz": None,
            "memory_bandwidth_tbs": None,
        }

    def query(fn, *args):
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - a field this GPU or driver does not report
            return None

    sm = query(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM)
    mem = query(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_MEM)
    width = query(pynvml.nvmlDeviceGetMemoryBusWidth, handle)
    return {
        "gpu_uuid": uuid if isinstance(uuid, str) else uuid.decode(),
        "driver_version": driver if isinstance(driver, str) else driver.decode(),
        "max_sm_clock_mhz": float(sm) if sm else None,
        "memory_bandwidth_tbs": width / 8 * mem * 1e6 * 2 / 1e12 if mem and width else None,
    }


def model_from_name(gpu_name: str) -> str:
    """A GPU model from its NVML name, spelled as the cluster launcher labels nodes:
    "NVIDIA H200" -> "H200", "NVIDIA GeForce RTX 4090" -> "GeForce-RTX-4090"."""
    return gpu_name.removeprefix("NVIDIA ").strip().replace(" ", "-")


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def describe_device(ordinal: int = 0) -> dict:
    """Provenance columns for CUDA device `ordinal` of this process."""
    import cupy
    from cupy.cuda import runtime

    from farm.measure.compiler import nvrtc_version

    props = runtime.getDeviceProperties(ordinal)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    pci = cupy.cuda.Device(ordinal).pci_bus_id
    return {
        "host": socket.gethostname(),
        "gpu_name": name,
        "gpu_model": model_from_name(name),
        "gpu_index": ordinal,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "arch": f"sm_{props['major']}{props['minor']}",
        "sm_count": int(props["multiProcessorCount"]),
        "l2_bytes": int(props["l2CacheSize"]),
        "memory_bytes": int(props["totalGlobalMem"]),
        "cuda_runtime_version": _version(runtime.runtimeGetVersion()),
        "nvrtc_version": nvrtc_version(),
        "cupy_version": cupy.__version__,
        **_nvml_facts(pci),
    }
