"""Nsight Compute's CLI: where it is, its version, the metrics a chip offers, its raw CSV page,
and the error lines that mean the host cannot profile. Pure text handling, tested on the CPU.
"""

from __future__ import annotations

import csv
import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from farm.data.profile_metrics import METRICS

NCU_ENV = "GEMM_FARM_NCU"  # a path to ncu, or "none" to switch the pass off
# Where ncu lives off PATH (newest first once sorted).
NCU_FALLBACKS: tuple[str, ...] = (
    "/opt/nvidia/nsight-compute/*/ncu",
    "/usr/local/cuda/bin/ncu",
    "/usr/local/cuda*/nsight-compute-*/ncu",
    "/usr/local/NVIDIA-Nsight-Compute*/ncu",
)


class NcuMissing(LookupError):
    """No usable ncu: the message is the reason recorded on the skipped cells."""


def find_ncu(explicit: str | None = None) -> str:
    """The ncu executable: `explicit`, else $GEMM_FARM_NCU, else PATH, else NCU_FALLBACKS; raises NcuMissing."""
    env = os.environ.get(NCU_ENV, "").strip()
    if explicit is None and env.lower() in ("none", "off", "0", "false"):
        raise NcuMissing(f"profiling switched off by {NCU_ENV}={env}")
    for candidate in (explicit, env or None):
        if candidate:
            found = shutil.which(candidate) or (
                candidate if os.access(candidate, os.X_OK) and os.path.isfile(candidate) else None
            )
            if not found:
                raise NcuMissing(f"ncu not found at {candidate}")
            return found
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in NCU_FALLBACKS:
        hits = sorted(glob.glob(pattern), key=_version_key, reverse=True)
        for hit in hits:
            if os.access(hit, os.X_OK):
                return hit
    raise NcuMissing(
        "ncu (Nsight Compute CLI) not found: not on PATH, not in $GEMM_FARM_NCU, not under "
        "/opt/nvidia/nsight-compute or /usr/local/cuda; install Nsight Compute or pass --ncu"
    )


def _version_key(path: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", path))


def ncu_version(ncu: str) -> str:
    """'2025.3.0.0' from `ncu --version`, or 'unknown'."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    m = re.search(r"Version\s+([\d.]+)", out)
    return m.group(1) if m else (out.strip().splitlines() or ["unknown"])[-1][:80]


_METRIC_NAME = re.compile(r"^\s*\"?([a-z0-9]+__[A-Za-z0-9_]+)")


def parse_query_metrics(text: str) -> set[str]:
    """Base metric names listed by `ncu --query-metrics` (the first name-like token of each line)."""
    return {m.group(1) for line in text.splitlines() if (m := _METRIC_NAME.match(line))}


def query_metrics(ncu: str) -> set[str] | None:
    """Base metric names this host's GPU offers, or None when ncu cannot say (then nothing is filtered)."""
    try:
        proc = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    names = parse_query_metrics(proc.stdout)
    core = {s.metric.split(".")[0] for s in METRICS if not s.optional}
    # Most core metrics missing: not a listing we understand.
    return names if len(names & core) >= len(core) // 2 else None


# Parsing ncu --csv --page raw


@dataclass
class ProfiledKernel:
    """One profile result of ncu's raw page: a kernel launch and its metrics as (value, unit)."""

    index: int  # the "ID" column: profile order
    name: str  # "Kernel Name" as ncu printed it
    metrics: dict[str, tuple[float | None, str]] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)  # the identification columns (Block Size, CC, ...)


_TIME_UNITS = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9, "ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
_BYTES = re.compile(r"^([KMGT]?)(?:byte|B)$")
_PREFIXED = re.compile(r"^([KMGT])((?:sector|inst|cycle|warp|request|wavefront|thread|block|hz)\b.*)$")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_value(text: str, unit: str) -> tuple[float | None, str]:
    """A raw-page cell as (value in base units, base unit); None for n/a or empty.

    Values carry thousands separators ("1,234,567.5"; ncu is run with LC_ALL=C). Units are
    asked for in base units (--print-units base); auto-scaled ones ("Mbyte", "usecond", "ms")
    are brought back all the same: time to "ns", sizes to "byte".
    """
    text = text.strip()
    if not text or text.lower() in ("n/a", "nan", "-"):
        return None, unit
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None, unit
    if unit in _TIME_UNITS:
        return value * _TIME_UNITS[unit], "ns"
    if m := _BYTES.match(unit):
        return value * _PREFIX[m.group(1)], "byte"
    if m := _PREFIXED.match(unit):
        return value * _PREFIX[m.group(1)], m.group(2)
    return value, unit


def parse_raw_csv(text: str) -> list[ProfiledKernel]:
    """The profile results in ncu `--csv --page raw` output.

    The page is one header row (identification columns, then one column per metric),
    one row of units (empty under the identification columns), then one row per
    profiled launch. Lines that are not CSV rows (==PROF== messages, the program's own
    output) are ignored; a header repeated (one per profiled process) starts over.
    """
    rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    out: list[ProfiledKernel] = []
    header: list[str] | None = None
    units: list[str] | None = None
    for row in rows:
        if row and row[0] == "ID":
            header, units = row, None
            continue
        if header is None or len(row) != len(header):
            continue
        if units is None and row[0] == "":
            units = row
            continue
        named = dict(zip(header, row))
        metrics, info = {}, {}
        for i, column in enumerate(header):
            if "__" in column:
                metrics[column] = parse_value(row[i], units[i] if units else "")
            else:
                info[column] = row[i]
        try:
            index = int(named.get("ID", len(out)))
        except ValueError:
            index = len(out)
        out.append(ProfiledKernel(index, named.get("Kernel Name", ""), metrics, info))
    return out  # ncu's order: by ID in a process


def named_metrics(metrics: list[str], text: str) -> set[str]:
    """Those of `metrics` that `text` names, by full name or by base name as a whole word."""
    named = set()
    for metric in metrics:
        base = re.escape(metric.split(".")[0])
        if metric in text or re.search(rf"(?<![A-Za-z0-9_]){base}(?![A-Za-z0-9_])", text):
            named.add(metric)
    return named


_ERROR_LINE = re.compile(r"^==(ERROR|WARNING)==\s*(.*)$")


def classify_failure(text: str) -> tuple[str, str] | None:
    """(status, reason) when ncu's output says the counters could not be read, else None."""
    errors = [
        m.group(2).strip()
        for line in text.splitlines()
        if (m := _ERROR_LINE.match(line.strip())) and m.group(1) == "ERROR"
    ]
    detail = " | ".join(errors)[:1000]
    if "ERR_NVGPUCTRPERM" in text:
        return "no_permission", (
            "ERR_NVGPUCTRPERM: this user may not read the GPU performance counters (run as root, or "
            "set the nvidia module option NVreg_RestrictProfilingToAdminUsers=0): " + detail
        )[:1000]
    for pattern in (
        "LibraryNotLoaded",
        "error while loading shared libraries",
        "cannot open shared object",
        "not supported on this",
        "Device not supported",
        "Unsupported GPU",
        "ERR_NVGPUCTRBUSY",
        "No supported GPU",
        "Failed to initialize",
    ):
        if pattern.lower() in text.lower():
            return "ncu_unusable", f"ncu cannot profile on this host ({pattern}): {detail}"[:1000]
    if errors:
        return "ncu_failed", detail
    return None
