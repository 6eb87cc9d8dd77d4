"""The profiling pass on one GPU: each stage launched once under Nsight Compute, a fixed list of counters kept.

Separate from measuring: no timing is ever taken under the profiler. Profiling is a kind of cell the sweep's
dispatcher hands out like any other (farm.cluster.dispatch): after a sweep (`farm/sweep.py --profile`) or on its
own (`python -m farm profile`), the GPU workers profile with this module and the driver writes the records.
Per cell (stage, shape) the GPU's process starts a small child Python process under

    ncu --csv --page raw --print-units base --metrics <METRICS> --clock-control none
        --cache-control all --target-processes all --profile-from-start off
        --launch-count <launches> --log-file <tmp> python -m farm.measure.profile_child --stage ...

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

import datetime as _dt
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from farm import __version__
from farm.cells import Cell
from farm.data.profile_metrics import DERIVED, METRICS
from farm.data.rows import REPO_ROOT, git_commit
from farm.measure.extra_baselines import unavailable_reason
from farm.measure.ncu import (
    NcuMissing,
    ProfiledKernel,
    classify_failure,
    find_ncu,
    named_metrics,
    ncu_version,
    parse_raw_csv,
    query_metrics,
)
from farm.measure.profile_child import CHILD_ERROR, CHILD_MARKER
from kernels.registry import stage_named

# Statuses that are about the host, not the cell: the rest of that GPU's cells get them too.
HOST_STATUSES = ("no_ncu", "no_permission", "ncu_unusable")
BASELINE_LAUNCH_CAP = 16  # profile results kept for a cuBLAS call
DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ProfileOptions:
    """How a worker profiles: which ncu (None: find_ncu's search on its own host) and how long a cell may take
    under it before ncu is killed."""

    ncu: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S


def ncu_options(launch_count: int) -> list[str]:
    """The fixed ncu options (the metric list, log file and program come on top)."""
    return [
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
        "--clock-control",
        "none",
        "--cache-control",
        "all",
        "--target-processes",
        "all",
        "--profile-from-start",
        "off",
        "--launch-count",
        str(launch_count),
    ]


class Profiler:
    """Profiles cells on the GPU this process sees (device 0), one ncu child process per cell.

    `device` is the GPU's provenance (farm.measure.device.describe_device or a worker's device_info,
    gpu_model included). Built once per GPU process: it finds ncu and asks which metrics the
    chip offers once, and remembers a host-level failure so later cells skip straight away.
    """

    def __init__(
        self, device: dict, ncu: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, python: str | None = None
    ) -> None:
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
                    self._unavailable[spec.metric] = (
                        f"not offered on {device.get('arch', 'this GPU')} by ncu {self.version}"
                    )

    def status_records(self, stage, cell: Cell, run_id: str, status: str, reason: str, options: str = "") -> list[dict]:
        """The one metric-less row of a cell that was not profiled."""
        return status_records(self.device, stage, cell, run_id, status, reason, self.version, options)

    # -- the pass

    def run(self, cells: list[Cell], run_id: str) -> list[dict]:
        """Profile every cell; the records of all of them."""
        return [r for cell in cells for r in self.profile(cell, run_id)]

    def profile(self, cell: Cell, run_id: str) -> list[dict]:
        """The profile records of one cell: a row per (kernel, quantity), or one status row."""
        stage = stage_named(cell.stage)
        cc = _cc(self.device.get("compute_capability"))
        reason = (
            stage.unsupported_reason(cell.m, cell.n, cell.k, cc) or unavailable_reason(stage)
            if cc
            else stage.shapes.rejects(cell.m, cell.n, cell.k)
        )
        if not reason and stage.padded_n(cell.n) != cell.n:  # the range would hold the harness's copies too
            padded = stage.padded_n(cell.n)
            reason = f"N={cell.n} runs padded to {padded} (farm/measure/padding.py): profile N={padded} for its kernels"
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
                self._unavailable[spec.metric] = (
                    f"ncu {self.version} returned no column for it on {self.device.get('arch')}"
                )
        return self._records(stage, cell, run_id, " ".join(options), kernels, expected, reason)

    def _run_child(self, stage, cell: Cell, options: list[str], metrics: list[str]):
        """(status, reason, profiled kernels, the stage's kernel names) of one ncu run; status "retry"
        when ncu rejected metrics by name (the reason holds its message)."""
        with tempfile.TemporaryDirectory(prefix="gemm-farm-ncu-") as tmp:
            log_file = os.path.join(tmp, "ncu.csv")
            child = [
                self.python,
                "-m",
                "farm.measure.profile_child",
                "--stage",
                stage.name,
                "--m",
                str(cell.m),
                "--n",
                str(cell.n),
                "--k",
                str(cell.k),
                "--arch",
                str(self.device.get("arch", "")),
            ]
            cmd = [self.ncu, *options, "--metrics", ",".join(metrics), "--log-file", log_file, *child]
            env = {
                **os.environ,
                "LC_ALL": "C",
                "LANG": "C",
                "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p),
            }
            proc = subprocess.Popen(
                cmd,
                cwd=str(REPO_ROOT),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
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

    def _records(
        self,
        stage,
        cell: Cell,
        run_id: str,
        options: str,
        kernels: list[ProfiledKernel],
        expected: list[str],
        note: str,
    ) -> list[dict]:
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
                out.append(
                    {
                        **base,
                        **per_kernel,
                        "quantity": spec.quantity,
                        "metric": spec.metric,
                        "kind": spec.kind,
                        "value": value if ok else None,
                        "unit": unit,
                        "status": "ok" if ok else "unavailable",
                        "status_reason": note if ok else "ncu printed no value (n/a)",
                    }
                )
            for d in DERIVED:
                num, den = values.get(d.numerator), values.get(d.denominator)
                if num is None or den is None:
                    continue
                ok = den > 0
                out.append(
                    {
                        **base,
                        **per_kernel,
                        "quantity": d.quantity,
                        "metric": d.metric,
                        "kind": d.kind,
                        "value": d.scale * num / den if ok else None,
                        "unit": d.unit,
                        "status": "ok" if ok else "unavailable",
                        "status_reason": note if ok else "denominator is 0",
                    }
                )
        for spec in METRICS:  # once per cell: what this GPU or ncu does not offer
            if spec.metric in self._unavailable:
                out.append(
                    {
                        **base,
                        "quantity": spec.quantity,
                        "metric": spec.metric,
                        "kind": spec.kind,
                        "status": "unavailable",
                        "status_reason": self._unavailable[spec.metric],
                    }
                )
        return out


def base_record(device: dict, stage, cell: Cell, run_id: str, version: str = "", options: str = "") -> dict:
    """The columns every profile record of a cell shares: provenance and the cell."""
    return {
        "run_id": run_id,
        "timestamp": _dt.datetime.now(_dt.timezone.utc),
        "host": device.get("host"),
        "gpu_model": device.get("gpu_model"),
        "gpu_name": device.get("gpu_name"),
        "gpu_uuid": device.get("gpu_uuid"),
        "arch": device.get("arch"),
        "family": stage.family,
        "stage": stage.name,
        "stage_group": stage.group,
        "position": stage.position,
        "dtype": stage.dtype,
        "m": cell.m,
        "n": cell.n,
        "k": cell.k,
        "ncu_version": version,
        "ncu_options": options,
        "farm_version": __version__,
        "git_commit": git_commit(),
        **dict.fromkeys(("kernel", "kernel_symbol", "launch_index", "quantity", "metric", "value", "unit", "kind")),
    }


def status_records(
    device: dict, stage, cell: Cell, run_id: str, status: str, reason: str, version: str = "", options: str = ""
) -> list[dict]:
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
            info = json.loads(line[len(CHILD_MARKER) :])
        elif line.startswith(CHILD_ERROR):
            error = json.loads(line[len(CHILD_ERROR) :]).get("reason", "child failed")
    return info, error
