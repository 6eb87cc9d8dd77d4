"""Who this GPU is: the provenance columns of every row it produces (CUDA + NVML)."""
from __future__ import annotations

import socket


def _nvml_facts(pci_bus_id: str) -> dict:
    """UUID and driver version from NVML; 'unknown' where NVML cannot answer."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        driver = pynvml.nvmlSystemGetDriverVersion()
        return {"gpu_uuid": uuid if isinstance(uuid, str) else uuid.decode(),
                "driver_version": driver if isinstance(driver, str) else driver.decode()}
    except Exception as exc:  # noqa: BLE001 - provenance must not stop a measurement
        return {"gpu_uuid": f"unknown ({type(exc).__name__})", "driver_version": "unknown"}


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
