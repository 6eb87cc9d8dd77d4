"""What a chip cannot do: the physical limits every timed row is checked against.

A row is `implausible` (never `ok`) when
- its throughput is above the dense peak of its precision at the GPU's maximum SM clock (farm/data/peak.py)
  by more than MARGIN, or
- in cold mode, its median launch took less time than reading A and B once from DRAM needs at the card's
  memory bandwidth (less MARGIN): cold mode evicts the operands before every launch, so they must come from DRAM
  (C is left out: a write can stay in L2 past the kernel's end).
The peak is an upper bound by construction (FLOP per clock per SM from the architecture's documents, the highest
clock NVML allows), so MARGIN only absorbs the timer's resolution: no kernel the farm has measured came within 20 %
of it. A row whose limits cannot be known (an architecture with no rate, no SM count or clock, no bandwidth) says
so in `limit_check`: never a silent pass.
"""

from __future__ import annotations

from farm.data.peak import OPERAND_BYTES, bandwidth_tbs, operand_bytes, row_peak_tflops

MARGIN = 0.05


def row_bandwidth_tbs(row: dict) -> float | None:
    return row.get("memory_bandwidth_tbs") or bandwidth_tbs(row.get("gpu_name"))


def check(row: dict) -> tuple[str | None, str]:
    """(why the timed row breaks a limit or None, what was checked: the row's `limit_check`)."""
    ms, dtype = row.get("median_ms"), row.get("dtype") or ""
    if not ms or ms <= 0 or dtype not in OPERAND_BYTES:
        return None, "not checked: no median time or unknown precision"
    checked, missing = [], []
    peak = row_peak_tflops(row)
    tflops = row["flops"] / (ms * 1e9)
    if peak is None:
        missing.append(
            f"no dense peak for {row.get('arch')} {dtype} (architecture rate, SM count or max SM clock unknown)"
        )
    else:
        checked.append("peak")
        if tflops > peak * (1 + MARGIN):
            return (
                f"{tflops:.1f} TFLOPS is above the dense {dtype} peak of {peak:.1f} TFLOPS ({row.get('arch')}, "
                f"{row.get('sm_count')} SMs at {row.get('max_sm_clock_mhz'):.0f} MHz) by more than {MARGIN:.0%}"
            ), "peak"
    if row.get("timing_mode") == "cold":
        tbs = row_bandwidth_tbs(row)
        if tbs is None:
            missing.append("no memory bandwidth for the cold-mode DRAM floor")
        else:
            checked.append("dram")
            floor_ms = (
                operand_bytes(row["m"], row["n"], row["k"], dtype) / (tbs * 1e12) * 1e3
            )  # a cold launch reads A and B from DRAM
            if ms < floor_ms * (1 - MARGIN):
                return (
                    f"{ms * 1e3:.2f} us from a cold L2 is below the {floor_ms * 1e3:.2f} us that reading A and B "
                    f"once from DRAM needs at {tbs:.2f} TB/s, by more than {MARGIN:.0%}"
                ), "+".join(checked)
    label = "+".join(checked)
    if missing:
        label = (f"{label}; " if label else "") + "not checked: " + "; ".join(missing)
    return None, label
