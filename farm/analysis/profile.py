"""The profiling pass: each stage launched once under Nsight Compute, a fixed list of counters kept.

Separate from measuring: no timing is ever taken under the profiler, and the pass runs
after a sweep (`farm/sweep.py --profile`) or on its own (`python -m farm profile`).
Per cell (stage, shape) the GPU's process starts a small child Python process under

    ncu --csv --page raw --print-units base --metrics <METRICS> --clock-control none
        --cache-control all --target-processes all --profile-from-start off
        --launch-count <launches> --log-file <tmp> python -m farm.analysis.profile child ...

The child compiles the stage (farm.measure.compiler, cached), makes fresh operands, launches the
stage twice as warm-up outside the profiled range, then brackets one launch of the stage
(every kernel of a multi-launch stage; whatever cuBLAS launches for a baseline) with
cudaProfilerStart/Stop. Only that range is profiled, so no kernel-name filter is needed:
the range holds exactly the stage's launches, in the order of Stage.launches, which is how
a profiled kernel is matched to the registry's kernel name (cuBLAS kernels keep the name
ncu printed).

The metric list (METRICS, DERIVED) is fixed and documented in datasets/README.md. Metrics
a chip does not offer (GMMA exists on sm_90 only; the aggregate tensor pipe is not on
every chip) are dropped when `ncu --query-metrics` says so or when ncu rejects them, and
get an "unavailable" row instead of failing the cell.

Where the pass cannot run, every cell gets one metric-less row whose status says why:
no_ncu (not installed), no_permission (ERR_NVGPUCTRPERM), ncu_unusable (LibraryNotLoaded,
unsupported device), ncu_failed (another ncu error), no_kernels (ncu ran but profiled
nothing), error (the child failed: compile error, CUDA error), timeout, skipped (the stage
does not support the shape). Those that are about the host stop the pass on that GPU
after the first cell.
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import glob
import json
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

from farm import __version__
from farm.cells import Cell
from farm.data.rows import REPO_ROOT, git_commit

log = logging.getLogger("farm.sweep")

# ---------------------------------------------------------------------------------------------
# The metric list


@dataclass(frozen=True)
class MetricSpec:
    """One Nsight Compute metric the pass collects.

    `quantity` is the farm's stable name (the profile table's `quantity` column), `kind`
    says how farm.analysis.moves aggregates and ranks it, `group` gathers quantities that tell the
    same story (moves keeps the largest mover per group), `ranked` False keeps a raw
    component out of the moves, `optional` marks metrics that not every chip offers.
    """

    quantity: str
    metric: str
    kind: str  # pct | ratio | count | bytes | time | per_thread (farm.data.schema.PROFILE_KINDS)
    group: str
    label: str
    cited: str = ""  # where the write-ups use it
    optional: bool = False
    ranked: bool = True


@dataclass(frozen=True)
class DerivedSpec:
    """A quantity computed from two collected ones: scale * numerator / denominator, per kernel."""

    quantity: str
    numerator: str  # quantities of METRICS
    denominator: str
    scale: float
    unit: str
    kind: str
    group: str
    label: str
    cited: str = ""
    ranked: bool = True

    @property
    def metric(self) -> str:
        by_q = {s.quantity: s.metric for s in METRICS}
        scale = f"{self.scale:g} * " if self.scale != 1 else ""
        return f"{scale}{by_q[self.numerator]} / {by_q[self.denominator]}"


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("duration", "gpu__time_duration.sum", "time", "duration",
               "duration of the profiled launch (not a timing: see rows)", ranked=False),
    # memory hierarchy
    MetricSpec("dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "pct", "dram",
               "DRAM throughput", "walk A tiled: DRAM throughput 21 -> 43 %"),
    MetricSpec("dram_read_bytes", "dram__bytes_read.sum", "bytes", "dram", "DRAM bytes read"),
    MetricSpec("dram_write_bytes", "dram__bytes_write.sum", "bytes", "dram", "DRAM bytes written"),
    MetricSpec("memory_throughput_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "pct",
               "memory_sol", "memory throughput (speed of light)"),
    MetricSpec("l2_hit_pct", "lts__t_sector_hit_rate.pct", "pct", "l2", "L2 hit rate",
               "walk A: cuBLAS 82 % vs bank_pad_vec 52 %; walk B grid swizzle: 30 -> 90 %"),
    MetricSpec("l1_hit_pct", "l1tex__t_sector_hit_rate.pct", "pct", "l1", "L1 hit rate"),
    # pipes and issue
    MetricSpec("sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "pct", "compute_sol",
               "compute throughput (speed of light)"),
    MetricSpec("lsu_pipe_pct", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "pct", "lsu",
               "LSU pipe", "walk A regblock: 95 -> 55 %; bank_pad_vec: 89 -> 64 %"),
    MetricSpec("fma_pipe_pct", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "pct", "fma",
               "FMA pipe", "walk A rows 3-5: 39.7 -> 48.6 -> 56.3 %"),
    MetricSpec("fma_inst_pct", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", "pct", "fma",
               "FMA pipe (instructions executed)"),
    # Tensor pipes. mma.sync and WMMA (TF32, FP16, BF16) issue HMMA on sm_80..sm_90 and sm_120;
    # Hopper's wgmma (cuBLAS on H100/H200) runs on GMMA, a metric sm_90 alone has; the
    # aggregate tensor pipe is offered on some chips only.
    MetricSpec("tensor_pipe_pct", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "pct",
               "tensor", "tensor pipe (HMMA: mma.sync, WMMA)", "walk A: cuBLAS FP32 0 % tensor pipe", optional=True),
    MetricSpec("tensor_gmma_pipe_pct", "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", "pct",
               "tensor", "tensor pipe (GMMA: wgmma, sm_90)", optional=True),
    MetricSpec("tensor_any_pipe_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "pct",
               "tensor", "tensor pipe (all tensor ops)", optional=True),
    MetricSpec("issue_slots_pct", "sm__inst_issued.avg.pct_of_peak_sustained_active", "pct", "issue",
               "issue slots busy", "walk A warp_rebalance: issue 53 -> 68 %"),
    MetricSpec("issue_active_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active", "pct", "issue",
               "cycles with an instruction issued"),
    # occupancy and resources
    MetricSpec("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active", "pct", "occupancy",
               "achieved occupancy", "walk B: cuBLAS 1 block per SM"),
    MetricSpec("theoretical_occupancy_pct", "sm__maximum_warps_per_active_cycle_pct", "pct", "occupancy",
               "theoretical occupancy"),
    MetricSpec("registers", "launch__registers_per_thread", "per_thread", "registers", "registers per thread",
               "walk A warp_rebalance: 255 -> 168; walk B: cuBLAS 228"),
    # shared memory
    MetricSpec("shared_ld_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "count",
               "smem_conflicts", "shared-load bank conflicts", "walk B: 150M+ -> 48,618"),
    MetricSpec("shared_st_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "count",
               "smem_conflicts", "shared-store bank conflicts"),
    MetricSpec("shared_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "count",
               "smem_conflicts", "shared bank conflicts (all shared ops, ldmatrix included)", optional=True, ranked=False),
    MetricSpec("shared_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "count", "smem_conflicts",
               "shared-memory wavefronts", optional=True, ranked=False),
    # global access pattern
    MetricSpec("gld_bytes", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "bytes", "gld", "global-load bytes (L1)", ranked=False),
    MetricSpec("gld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "count", "gld", "global-load sectors", ranked=False),
    MetricSpec("gld_data_bytes", "sm__sass_data_bytes_mem_global_op_ld.sum", "bytes", "gld",
               "global-load bytes the threads asked for", optional=True, ranked=False),
    MetricSpec("gst_bytes", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", "bytes", "gst", "global-store bytes (L1)", ranked=False),
    MetricSpec("gst_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "count", "gst", "global-store sectors", ranked=False),
    MetricSpec("gst_data_bytes", "sm__sass_data_bytes_mem_global_op_st.sum", "bytes", "gst",
               "global-store bytes the threads wrote", optional=True, ranked=False),
)

DERIVED: tuple[DerivedSpec, ...] = (
    DerivedSpec("shared_bank_conflict_pct", "shared_bank_conflicts", "shared_wavefronts", 100.0, "%", "pct",
                "smem_conflicts", "shared bank conflicts (% of wavefronts)", "walk B: 48,618 / 100,715,659 = 0.04 %"),
    # The brief's bytes per sector. l1tex__t_bytes counts whole 32-byte sectors, so expect 32:
    # the used-bytes ratio below is the one NCU's access-pattern rule quotes.
    DerivedSpec("gld_bytes_per_sector", "gld_bytes", "gld_sectors", 1.0, "byte/sector", "ratio", "gld",
                "global-load bytes per sector"),
    DerivedSpec("gst_bytes_per_sector", "gst_bytes", "gst_sectors", 1.0, "byte/sector", "ratio", "gst",
                "global-store bytes per sector"),
    DerivedSpec("gld_used_bytes_per_sector", "gld_data_bytes", "gld_sectors", 1.0, "byte/sector", "ratio", "gld",
                "global-load bytes used per 32-byte sector"),
    DerivedSpec("gst_used_bytes_per_sector", "gst_data_bytes", "gst_sectors", 1.0, "byte/sector", "ratio", "gst",
                "global-store bytes used per 32-byte sector", "walk A tiled_coalesced: st bytes/sector 16 -> 32"),
)

# What every quantity is, by name: for farm.analysis.moves and the docs.
QUANTITIES: dict[str, MetricSpec | DerivedSpec] = {s.quantity: s for s in (*METRICS, *DERIVED)}

# ---------------------------------------------------------------------------------------------
# Finding ncu

NCU_ENV = "GEMM_FARM_NCU"  # a path to ncu, or "none" to switch the pass off
# Where ncu lives when it is not on PATH (newest version first after sorting).
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
            found = shutil.which(candidate) or (candidate if os.access(candidate, os.X_OK) and os.path.isfile(candidate) else None)
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
    raise NcuMissing("ncu (Nsight Compute CLI) not found: not on PATH, not in $GEMM_FARM_NCU, not under "
                     "/opt/nvidia/nsight-compute or /usr/local/cuda; install Nsight Compute or pass --ncu")


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
    # A listing that lacks most of the core metrics is not a listing we understand.
    return names if len(names & core) >= len(core) // 2 else None


# ---------------------------------------------------------------------------------------------
# Parsing ncu --csv --page raw

@dataclass
class ProfiledKernel:
    """One profile result of ncu's raw page: a kernel launch and its metrics as (value, unit)."""

    index: int  # the "ID" column: order of the profile results
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
    return out  # in ncu's order: by ID within a process


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
    errors = [m.group(2).strip() for line in text.splitlines() if (m := _ERROR_LINE.match(line.strip())) and m.group(1) == "ERROR"]
    detail = " | ".join(errors)[:1000]
    if "ERR_NVGPUCTRPERM" in text:
        return "no_permission", ("ERR_NVGPUCTRPERM: this user may not read the GPU performance counters (run as root, or "
                                 "set the nvidia module option NVreg_RestrictProfilingToAdminUsers=0): " + detail)[:1000]
    for pattern in ("LibraryNotLoaded", "error while loading shared libraries", "cannot open shared object",
                    "not supported on this", "Device not supported", "Unsupported GPU", "ERR_NVGPUCTRBUSY",
                    "No supported GPU", "Failed to initialize"):
        if pattern.lower() in text.lower():
            return "ncu_unusable", f"ncu cannot profile on this host ({pattern}): {detail}"[:1000]
    if errors:
        return "ncu_failed", detail
    return None


# ---------------------------------------------------------------------------------------------
# Running one cell

# Statuses that are about the host, not the cell: the rest of that GPU's cells get them too.
HOST_STATUSES = ("no_ncu", "no_permission", "ncu_unusable")
CHILD_MARKER = "GEMM_FARM_PROFILE_CHILD "
CHILD_ERROR = "GEMM_FARM_PROFILE_ERROR "
BASELINE_LAUNCH_CAP = 16  # profile results kept for a cuBLAS call
DEFAULT_TIMEOUT_S = 600.0


def ncu_options(launch_count: int) -> list[str]:
    """The fixed ncu options (the metric list, log file and program come on top)."""
    return ["--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none", "--cache-control", "all",
            "--target-processes", "all", "--profile-from-start", "off", "--launch-count", str(launch_count)]


class Profiler:
    """Profiles cells on the GPU this process sees (device 0), one ncu child process per cell.

    `device` is the GPU's provenance (farm.measure.device.describe_device or a worker's device_info,
    gpu_model included). Built once per GPU process: it finds ncu and asks which metrics the
    chip offers once, and remembers a host-level failure so later cells skip straight away.
    """

    def __init__(self, device: dict, ncu: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 python: str | None = None) -> None:
        self.device = device
        self.timeout_s = timeout_s
        self.python = python or sys.executable
        self.ncu: str | None = None
        self.version = ""
        self._host_failure: tuple[str, str] | None = None
        self._unavailable: dict[str, str] = {}  # metric -> why it is not collected
        try:
            self.ncu = find_ncu(ncu)
        except NcuMissing as exc:
            self._host_failure = ("no_ncu", str(exc))
            return
        self.version = ncu_version(self.ncu)
        offered = query_metrics(self.ncu)
        if offered is not None:
            for spec in METRICS:
                if spec.optional and spec.metric.split(".")[0] not in offered:
                    self._unavailable[spec.metric] = f"not offered on {device.get('arch', 'this GPU')} by ncu {self.version}"

    def status_records(self, stage, cell: Cell, run_id: str, status: str, reason: str, options: str = "") -> list[dict]:
        """The one metric-less row of a cell that was not profiled."""
        return status_records(self.device, stage, cell, run_id, status, reason, self.version, options)

    # -- the pass

    def run(self, cells: list[Cell], run_id: str) -> list[dict]:
        """Profile every cell; the records of all of them."""
        return [r for cell in cells for r in self.profile(cell, run_id)]

    def profile(self, cell: Cell, run_id: str) -> list[dict]:
        """The profile records of one cell: a row per (kernel, quantity), or one status row."""
        from kernels.registry import stage_named

        stage = stage_named(cell.stage)
        cc = _cc(self.device.get("compute_capability"))
        reason = stage.unsupported_reason(cell.m, cell.n, cell.k, cc) if cc else stage.shapes.rejects(cell.m, cell.n, cell.k)
        if reason:
            return self.status_records(stage, cell, run_id, "skipped", reason)
        if self._host_failure:
            return self.status_records(stage, cell, run_id, *self._host_failure)
        launches = len(stage.launches) if not stage.is_baseline else BASELINE_LAUNCH_CAP
        options = ncu_options(launches)
        wanted = [s for s in METRICS if s.metric not in self._unavailable]
        for _attempt in range(3):
            status, reason, kernels, expected = self._run_child(stage, cell, options, [s.metric for s in wanted])
            if status != "retry":
                break
            rejected = named_metrics([s.metric for s in wanted], reason)
            for metric in rejected:
                self._unavailable[metric] = f"rejected by ncu {self.version} on {self.device.get('arch')}"
            wanted = [s for s in wanted if s.metric not in rejected]
        else:
            status, reason = "ncu_failed", reason
        if status in HOST_STATUSES:
            self._host_failure = (status, reason)
        if status != "ok":
            return self.status_records(stage, cell, run_id, status, reason, " ".join(options))
        for spec in wanted:
            if all(spec.metric not in kernel.metrics for kernel in kernels):
                self._unavailable[spec.metric] = f"ncu {self.version} returned no column for it on {self.device.get('arch')}"
        return self._records(stage, cell, run_id, " ".join(options), kernels, expected, reason)

    def _run_child(self, stage, cell: Cell, options: list[str], metrics: list[str]):
        """(status, reason, profiled kernels, the stage's kernel names) of one ncu run; status "retry"
        when ncu rejected metrics by name (the reason holds its message)."""
        with tempfile.TemporaryDirectory(prefix="gemm-farm-ncu-") as tmp:
            log_file = os.path.join(tmp, "ncu.csv")
            child = [self.python, "-m", "farm.analysis.profile", "child", "--stage", stage.name, "--m", str(cell.m),
                     "--n", str(cell.n), "--k", str(cell.k), "--arch", str(self.device.get("arch", ""))]
            cmd = [self.ncu, *options, "--metrics", ",".join(metrics), "--log-file", log_file, *child]
            env = {**os.environ, "LC_ALL": "C", "LANG": "C",
                   "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)}
            proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, start_new_session=True)
            try:
                stdout, stderr = proc.communicate(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.communicate()
                return "timeout", f"ncu did not finish within {self.timeout_s:.0f} s; killed", [], []
            report = Path(log_file).read_text(errors="replace") if os.path.exists(log_file) else ""
        text = "\n".join((report, stdout, stderr))
        child_info, child_error = _child_messages(stdout)
        kernels = parse_raw_csv(report) or parse_raw_csv(stdout)
        if child_error:
            return "error", child_error, [], []
        if not kernels:
            failure = classify_failure(text)
            if failure and failure[0] == "ncu_failed" and named_metrics(metrics, failure[1]):
                return "retry", failure[1], [], []
            if failure:
                return (*failure, [], [])
            if proc.returncode != 0:
                return "error", f"ncu exited {proc.returncode}: {_tail(text)}", [], []
            return "no_kernels", f"ncu profiled no kernel in the profiled range: {_tail(text)}", [], []
        note = ""
        expected = list(child_info.get("launches", []))
        if expected and len(expected) != len(kernels):
            note = f"expected {len(expected)} launches, ncu profiled {len(kernels)}: kernels named as ncu printed them"
            expected = []
        return "ok", note, kernels, expected

    def _records(self, stage, cell: Cell, run_id: str, options: str, kernels: list[ProfiledKernel],
                 expected: list[str], note: str) -> list[dict]:
        base = base_record(self.device, stage, cell, run_id, self.version, options)
        out = []
        for i, kernel in enumerate(kernels):
            name = expected[i] if expected else kernel.name
            per_kernel = {"kernel": name, "kernel_symbol": kernel.name, "launch_index": i}
            values: dict[str, float | None] = {}
            for spec in METRICS:
                if spec.metric in self._unavailable or spec.metric not in kernel.metrics:
                    continue
                value, unit = kernel.metrics[spec.metric]
                values[spec.quantity] = value
                ok = value is not None and math.isfinite(value)
                out.append({**base, **per_kernel, "quantity": spec.quantity, "metric": spec.metric, "kind": spec.kind,
                            "value": value if ok else None, "unit": unit, "status": "ok" if ok else "unavailable",
                            "status_reason": note if ok else "ncu printed no value (n/a)"})
            for d in DERIVED:
                num, den = values.get(d.numerator), values.get(d.denominator)
                if num is None or den is None:
                    continue
                ok = den > 0
                out.append({**base, **per_kernel, "quantity": d.quantity, "metric": d.metric, "kind": d.kind,
                            "value": d.scale * num / den if ok else None, "unit": d.unit,
                            "status": "ok" if ok else "unavailable", "status_reason": note if ok else "denominator is 0"})
        for spec in METRICS:  # once per cell: what this GPU or ncu does not offer
            if spec.metric in self._unavailable:
                out.append({**base, "quantity": spec.quantity, "metric": spec.metric, "kind": spec.kind,
                            "status": "unavailable", "status_reason": self._unavailable[spec.metric]})
        return out


def base_record(device: dict, stage, cell: Cell, run_id: str, version: str = "", options: str = "") -> dict:
    """The columns every profile record of a cell shares: provenance and the cell."""
    return {
        "run_id": run_id, "timestamp": _dt.datetime.now(_dt.timezone.utc), "host": device.get("host"),
        "gpu_model": device.get("gpu_model"), "gpu_name": device.get("gpu_name"), "gpu_uuid": device.get("gpu_uuid"),
        "arch": device.get("arch"), "family": stage.family, "stage": stage.name, "stage_group": stage.group,
        "position": stage.position, "dtype": stage.dtype, "m": cell.m, "n": cell.n, "k": cell.k,
        "ncu_version": version, "ncu_options": options, "farm_version": __version__, "git_commit": git_commit(),
        **dict.fromkeys(("kernel", "kernel_symbol", "launch_index", "quantity", "metric", "value", "unit", "kind")),
    }


def status_records(device: dict, stage, cell: Cell, run_id: str, status: str, reason: str, version: str = "",
                   options: str = "") -> list[dict]:
    """The one metric-less row of a cell that was not profiled (status says why)."""
    return [{**base_record(device, stage, cell, run_id, version, options), "status": status, "status_reason": reason}]


def _cc(value) -> int | None:
    try:
        major, minor = str(value).split(".")
        return 10 * int(major) + int(minor)
    except (ValueError, AttributeError):
        return None


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill ncu and the child it started (their own process group, made by start_new_session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _tail(text: str, n: int = 600) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-6:])[-n:]


def _child_messages(stdout: str) -> tuple[dict, str]:
    info, error = {}, ""
    for line in stdout.splitlines():
        if line.startswith(CHILD_MARKER):
            info = json.loads(line[len(CHILD_MARKER):])
        elif line.startswith(CHILD_ERROR):
            error = json.loads(line[len(CHILD_ERROR):]).get("reason", "child failed")
    return info, error


# ---------------------------------------------------------------------------------------------
# The child: runs under ncu


def _child(stage_name: str, m: int, n: int, k: int, arch: str, seed: int) -> int:
    """Compile, prepare, warm up, then launch the stage once inside cudaProfilerStart/Stop."""
    try:
        import cupy

        from farm.measure.inputs import random_operands
        from kernels.registry import stage_named

        stage = stage_named(stage_name)
        cupy.cuda.Device(0).use()
        if not arch:
            props = cupy.cuda.runtime.getDeviceProperties(0)
            arch = f"sm_{props['major']}{props['minor']}"
        a, b = random_operands(stage.dtype, m, n, k, seed)
        c = cupy.empty((m, n), dtype=cupy.float32)
        if stage.is_baseline:
            from farm.measure.gpu import library_call

            run = library_call(stage, a, b, c, m, n, k)
            launches: list[str] = []
        else:
            from farm.measure.compiler import compile_timed
            from farm.measure.gpu import _Kernel

            operands = {"A": a, "B": b, "C": c}
            if stage.workspace_floats_per_mn:
                operands["W"] = cupy.empty(stage.workspace_floats(m, n), dtype=cupy.float32)
            run = _Kernel(stage, compile_timed(stage.source_path, arch, stage.kernel_names)).launcher(operands, m, n, k)
            launches = [launch.kernel for launch in stage.launches]
        stream = cupy.cuda.get_current_stream()
        for _ in range(2):  # warm-up, outside the profiled range
            run()
        stream.synchronize()
        cupy.cuda.runtime.profilerStart()
        run()
        stream.synchronize()
        cupy.cuda.runtime.profilerStop()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which records it
        print(CHILD_ERROR + json.dumps({"reason": f"{type(exc).__name__}: {exc}"[:2000]}), flush=True)
        return 3
    print(CHILD_MARKER + json.dumps({"launches": launches, "arch": arch}), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# The pass on this machine, and on a Ray fleet


def profile_cells(stages, sizes) -> list[Cell]:
    """One cell per (stage, shape): a profile has no repeats."""
    return [Cell(s.name, m, n, k) for (m, n, k) in sizes for s in stages]


def profiled_keys(output: str, run_id: str, scope: str = "gpu_uuid") -> set[tuple]:
    """(row[scope], stage, m, n, k) of the cells of run `run_id` that already have profile records."""
    from farm.data.dataset import PROFILE, exists, open_dataset
    import pyarrow.dataset as pds

    if not exists(output, PROFILE):
        return set()
    columns = [scope, "stage", "m", "n", "k"]
    table = open_dataset(output, PROFILE).to_table(columns=columns, filter=pds.field("run_id") == run_id)
    return set(zip(*(table.column(c).to_pylist() for c in columns)))


def _summary(records: list[dict]) -> tuple[str, str]:
    """(status, detail) of a cell's records for a progress line."""
    statuses = Counter(r["status"] for r in records)
    if statuses.get("ok"):
        return "ok", f"{statuses['ok']} values, {len({r['launch_index'] for r in records if r.get('launch_index') is not None})} kernel(s)"
    return records[0]["status"], records[0].get("status_reason") or ""


def run_local(plan, ncu: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """`python -m farm profile`: profile a plan's stages on this machine's GPU; records written per cell.

    0 when every cell was profiled or skipped for its shape, 1 otherwise.
    """
    from farm.data.dataset import PROFILE, write_table
    from farm.measure.device import describe_device

    try:
        device = describe_device(0)
    except Exception as exc:  # noqa: BLE001 - no CUDA device or driver: one clear error
        raise ValueError(f"no usable GPU on this machine ({type(exc).__name__}: {str(exc)[:200]})") from None
    profiler = Profiler(device, ncu=ncu, timeout_s=timeout_s)
    done = profiled_keys(plan.output, plan.run_id)
    cells = [c for c in profile_cells(plan.stages(), plan.sizes) if (device["gpu_uuid"], c.stage, c.m, c.n, c.k) not in done]
    where = profiler.ncu or "no ncu"
    print(f"{device['gpu_name']} ({device['arch']}): profiling {len(cells)} cells with {where} {profiler.version}, "
          f"run {plan.run_id} -> {plan.output}", flush=True)
    counts: Counter[str] = Counter()
    for i, cell in enumerate(cells, 1):
        records = profiler.profile(cell, plan.run_id)
        write_table(records, plan.output, PROFILE)
        status, detail = _summary(records)
        counts[status] += 1
        print(f"[{i}/{len(cells)}] {cell.stage:<22} {cell.m}x{cell.n}x{cell.k}  {status:<13} {detail[:160]}", flush=True)
    print("done: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f"; profile table at {plan.output}")
    return 0 if set(counts) <= {"ok", "skipped"} else 1


def profile_fleet(plan, poll_s: float = 10.0) -> list[str]:
    """`farm/sweep.py --profile`: after the sweep, profile the plan's cells on every GPU worker.

    Starts the workers again (the dispatcher stops its own), hands each one cell at a time
    (replicate: every GPU profiles every cell; shard: a model's GPUs share them), and
    writes each cell's records as they come back: the driver stays the only writer.
    A re-run with the same run id skips cells that have records. Problems are logged,
    never raised: the sweep's rows are already safe.
    """
    import ray
    from ray.exceptions import RayActorError, RayTaskError

    from farm.cluster.dispatch import scope_column
    from farm.cluster.fleet import SweepError, start_workers
    from farm.data.dataset import PROFILE, write_table

    stages = {s.name: s for s in plan.stages()}  # the cells below come from these
    try:
        workers = start_workers(plan.measurer, plan.measure, plan.gpus, plan.start_timeout_s)
    except SweepError as exc:
        log.error("profile pass not run: %s", exc)
        return []
    scope = scope_column(plan.mode)
    done = profiled_keys(plan.output, plan.run_id, scope)
    cells = profile_cells(plan.stages(), plan.sizes)
    queues: dict[str, deque[Cell]] = {}
    slots = []
    for w in workers:
        key = w.device[scope]
        if key not in queues:
            queues[key] = deque(c for c in cells if (key, c.stage, c.m, c.n, c.k) not in done)
        slots.append((w, queues[key]))
    log.info("profile pass, run %s: %d cells per %s on %d GPUs", plan.run_id, len(cells),
             "GPU" if plan.mode == "replicate" else "model", len(workers))
    inflight: dict = {}
    lost: set[str] = set()
    files: list[str] = []
    counts: Counter[str] = Counter()
    limit = plan.cell_timeout_s + 120.0  # the worker kills ncu at cell_timeout_s

    def write(records: list[dict]) -> None:
        nonlocal files
        files += write_table(records, plan.output, PROFILE)
        counts[_summary(records)[0]] += 1

    def failed(w, cell: Cell, status: str, reason: str) -> list[dict]:
        return status_records(w.device, stages[cell.stage], cell, plan.run_id, status, reason)

    try:
        while True:
            for w, queue in slots:
                if w.uuid not in lost and queue and not any(t[0] is w for t in inflight.values()):
                    cell = queue.popleft()
                    inflight[w.actor.profile.remote([cell], plan.run_id, plan.cell_timeout_s)] = (w, cell, time.monotonic())
            if not inflight:
                break
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=poll_s)
            for ref in ready:
                w, cell, _started = inflight.pop(ref)
                try:
                    write(ray.get(ref))
                except RayActorError as exc:
                    lost.add(w.uuid)
                    log.error("%s died profiling %s; its GPU leaves the profile pass: %s", w.name, cell, str(exc).splitlines()[0][:200])
                    write(failed(w, cell, "error", f"worker died while profiling: {str(exc).splitlines()[0][:500]}"))
                except RayTaskError as exc:
                    write(failed(w, cell, "error", f"profiler raised: {str(exc.cause or exc).splitlines()[0][:500]}"))
            now = time.monotonic()
            for ref, (w, cell, started) in list(inflight.items()):
                if now - started > limit:
                    del inflight[ref]
                    lost.add(w.uuid)
                    ray.kill(w.actor)
                    log.error("%s: profiling %s exceeded %.0f s; its GPU leaves the profile pass", w.name, cell, limit)
                    write(failed(w, cell, "timeout", f"no profile within {limit:.0f} s; worker killed"))
    finally:
        for w, _ in slots:
            ray.kill(w.actor)
    unrun = sum(len(q) for q in queues.values())
    log.info("profile pass: %s; %d files written%s", ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to do",
             len(files), f"; {unrun} cells not profiled (their GPU was lost)" if unrun else "")
    return files


def main(argv: list[str] | None = None) -> int:
    """The child entry point: `python -m farm.analysis.profile child --stage S --m M --n N --k K [--arch sm_XX]`."""
    p = argparse.ArgumentParser(prog="python -m farm.analysis.profile", description="internal: the process ncu profiles")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("child")
    c.add_argument("--stage", required=True)
    for dim in ("--m", "--n", "--k"):
        c.add_argument(dim, type=int, required=True)
    c.add_argument("--arch", default="")
    c.add_argument("--seed", type=int, default=20261121)
    args = p.parse_args(argv)
    return _child(args.stage, args.m, args.n, args.k, args.arch, args.seed)


if __name__ == "__main__":
    sys.exit(main())


def metrics_markdown() -> str:
    """The metric table of the profile section of datasets/README.md (kept identical by a test)."""
    lines = ["| quantity | Nsight Compute metric | kind | what | the write-ups |", "|---|---|---|---|---|"]
    for s in METRICS:
        flags = [f for f, on in (("not on every chip", s.optional), ("not ranked", not s.ranked)) if on]
        what = s.label + (f" ({'; '.join(flags)})" if flags else "")
        lines.append(f"| `{s.quantity}` | `{s.metric}` | {s.kind} | {what} | {s.cited} |")
    for d in DERIVED:
        lines.append(f"| `{d.quantity}` | {d.scale:g} x `{d.numerator}` / `{d.denominator}` | {d.kind} | {d.label} (derived) | {d.cited} |")
    return "\n".join(lines)
