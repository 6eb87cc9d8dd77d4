"""Check a dataset against the schema: versions, types, required columns, partitions, value ranges.

Every problem is reported (file, cell and what is wrong); nothing is fixed.
"""

from __future__ import annotations

import math
from collections import Counter
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from farm.data import limits
from farm.data.dataset import _TABLES, ROWS, RUNS, resolve
from farm.data.derived import launch_mismatch
from farm.data.schema import PARTITION_KEYS, STATUSES, SUPPORTED_VERSIONS, added_after

REQUIRED = (
    "run_id",
    "repeat",
    "timestamp",
    "host",
    "gpu_model",
    "gpu_name",
    "gpu_uuid",
    "compute_capability",
    "arch",
    "family",
    "stage",
    "m",
    "n",
    "k",
    "flops",
    "status",
    "farm_version",
    "git_commit",
)
TIMED = (
    "median_ms",
    "min_ms",
    "max_ms",
    "q1_ms",
    "q3_ms",
    "samples_ms",
    "tflops",
    "baseline_median_ms",
    "pct_of_baseline",
)
FRACTIONS = ("throttled_fraction", "low_clock_fraction")
RUN_REQUIRED = (
    "run_id",
    "gpu_model",
    "gpu_uuid",
    "mode",
    "started_at",
    "ended_at",
    "wall_seconds",
    "startup_seconds",
    "timed_seconds",
    "git_commit",
)
RUN_SECONDS = ("startup_seconds", "first_row_seconds", "wall_seconds", "timed_seconds")


def _partition_values(path: str, root: str) -> dict[str, str]:
    parts = path[len(root) :].strip("/").split("/")[:-1]
    return dict(unquote(p).split("=", 1) for p in parts if "=" in p)


def _check_row(r: dict) -> list[str]:
    out = [f"{c} is empty" for c in REQUIRED if r.get(c) in (None, "")]
    if r.get("status") not in STATUSES:
        out.append(f"status {r.get('status')!r} not one of {', '.join(STATUSES)}")
    for d in ("m", "n", "k"):
        if r.get(d) is not None and r[d] <= 0:
            out.append(f"{d}={r[d]} is not positive")
    if None not in (r.get("m"), r.get("n"), r.get("k"), r.get("flops")) and r["flops"] != 2 * r["m"] * r["n"] * r["k"]:
        out.append("flops != 2*m*n*k")
    if r.get("status") == "ok":
        out += [f"{c} missing on an ok row" for c in TIMED if r.get(c) in (None, [])]
        if not r.get("verified"):
            out.append("ok row is not verified")
        if not out:
            if not 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"]:
                out.append("min_ms <= median_ms <= max_ms does not hold, or a time is not positive")
            if not all(isinstance(x, float) and math.isfinite(x) and x > 0 for x in r["samples_ms"]):
                out.append("samples_ms holds a non-positive or non-finite value")
            if not 0 < r["pct_of_baseline"] < 10_000 or not 0 < r["tflops"] < 10_000:
                out.append(f"pct_of_baseline {r['pct_of_baseline']:.3g} or tflops {r['tflops']:.3g} out of range")
            beyond, _ = limits.check(r)
            if beyond:
                out.append(f"ok row beyond a physical limit: {beyond}")
    elif r.get("status") != "ok" and not r.get("status_reason"):
        out.append(f"{r['status']} row without a status_reason")
    for c in FRACTIONS:
        if r.get(c) is not None and not 0 <= r[c] <= 1:
            out.append(f"{c}={r[c]} outside [0, 1]")
    return out


def _check_run(r: dict) -> list[str]:
    """Problems of one runs record (a sweep's part of a run on one GPU)."""
    out = [f"{c} is empty" for c in RUN_REQUIRED if r.get(c) in (None, "")]
    if out:
        return out
    if r["mode"] not in ("replicate", "shard"):
        out.append(f"mode {r['mode']!r} is not replicate or shard")
    out += [
        f"{c}={r[c]} is negative"
        for c in (*RUN_SECONDS, *(f"cells_{s}" for s in (*STATUSES, "not_run", "resumed")))
        if r.get(c) is not None and r[c] < 0
    ]
    if r["ended_at"] < r["started_at"]:
        out.append("ended_at is before started_at")
    if r["startup_seconds"] > r["wall_seconds"] or (r.get("first_row_seconds") or 0) > r["wall_seconds"]:
        out.append("start-up or first row later than the end")
    if r["timed_seconds"] > 0 and not r.get("overhead_ratio"):
        out.append("overhead_ratio missing though timed_seconds > 0")
    return out


def validate(output: str) -> list[str]:
    """Problems found in the dataset at `output` (empty when it is sound)."""
    fs, root = resolve(output)
    if fs.get_file_info(f"{root}/{ROWS}").type == pafs.FileType.NotFound:
        return [f"{output}: no '{ROWS}' table (expected {root}/{ROWS}/gpu_model=.../run_id=.../*.parquet)"]
    problems: list[str] = []
    rows_per_gpu: Counter = Counter()  # (run_id, gpu_uuid): rows in the rows table
    claimed: Counter = Counter()  # (run_id, gpu_uuid): rows the runs table says were written
    for table, (schema, file_schema) in _TABLES.items():
        selector = pafs.FileSelector(f"{root}/{table}", recursive=True, allow_not_found=True)
        files = [
            f.path
            for f in fs.get_file_info(selector)
            if f.type == pafs.FileType.File and not f.base_name.startswith((".", "_"))
        ]
        keys: Counter = Counter()
        for path in files:
            where = path[len(root) :].lstrip("/")
            if not path.endswith(".parquet"):
                problems.append(f"{where}: not a Parquet file")
                continue
            parts = _partition_values(path, root)
            if set(parts) != set(PARTITION_KEYS):
                problems.append(f"{where}: partition directories {sorted(parts)} are not {list(PARTITION_KEYS)}")
                continue
            try:
                with fs.open_input_file(path) as f:
                    data = pq.read_table(f)
            except (OSError, pa.ArrowInvalid) as exc:
                problems.append(f"{where}: unreadable ({exc})")
                continue
            version = (data.schema.metadata or {}).get(b"gemm_farm_schema_version", b"").decode()
            if version not in SUPPORTED_VERSIONS:
                problems.append(
                    f"{where}: schema version {version or 'missing'}, expected one of {', '.join(SUPPORTED_VERSIONS)}"
                )
                continue
            for field in file_schema:
                if field.name not in data.column_names:
                    if field.name in added_after(version):
                        continue  # added by a later version: reads as null

                    problems.append(f"{where}: column {field.name} missing")
                elif not data.schema.field(field.name).type.equals(field.type):
                    problems.append(
                        f"{where}: column {field.name} is {data.schema.field(field.name).type}, expected {field.type}"
                    )
            extra = set(data.column_names) - set(file_schema.names)
            if extra:
                problems.append(f"{where}: columns not in the schema: {sorted(extra)}")
            if table == RUNS:
                for r in data.to_pylist():
                    r.update(parts)
                    problems += [f"{where}: run {r['run_id']} on {r.get('gpu_uuid')}: {p}" for p in _check_run(r)]
                    claimed[(r["run_id"], r.get("gpu_uuid"))] += sum(r.get(f"cells_{s}") or 0 for s in STATUSES)
            if table != ROWS:
                continue
            for r in data.to_pylist():
                r.update(parts)
                if version != "2" and r.get("status") == "ok" and not r.get("baseline_launch_method"):
                    problems.append(
                        f"{where}: {r.get('stage')} {r.get('m')}x{r.get('n')}x{r.get('k')}: ok row without baseline_launch_method"
                    )
                cell = (
                    f"{r.get('stage')} {r.get('m')}x{r.get('n')}x{r.get('k')} r{r.get('repeat')} on {r.get('gpu_uuid')}"
                )
                problems += [f"{where}: {cell}: {p}" for p in _check_row(r)]
                keys[
                    (
                        r["run_id"],
                        r.get("gpu_uuid"),
                        r.get("stage"),
                        r.get("m"),
                        r.get("n"),
                        r.get("k"),
                        r.get("repeat"),
                    )
                ] += 1
                rows_per_gpu[(r["run_id"], r.get("gpu_uuid"))] += 1
        problems += [f"{table}: cell {k} has {n} rows in one run" for k, n in keys.items() if n > 1]
    # A driver killed outright writes rows but no runs record; rows the runs table counts must all be there.
    problems += [
        f"{RUNS}: run {run} on {gpu} counts {n} rows but the rows table holds {rows_per_gpu[(run, gpu)]}"
        for (run, gpu), n in claimed.items()
        if n > rows_per_gpu[(run, gpu)]
    ]
    return problems


def launch_notes(output: str) -> list[str]:
    """Per run and GPU model, how many ok rows have a % whose baseline was launched otherwise than the
    kernel (direct-launched baselines, in practice), and which baselines: not problems, but worth knowing."""
    from farm.data.dataset import read_table
    from farm.data.derived import baseline_launch_methods

    df = read_table(output).to_pandas()
    flagged = df[launch_mismatch(df) != ""].assign(base_method=baseline_launch_methods(df))
    notes = []
    for (model, run), group in flagged.groupby(["gpu_model", "run_id"]):
        ok = int(((df["run_id"] == run) & (df["gpu_model"] == model) & (df["status"] == "ok")).sum())
        kinds = "; ".join(
            f"{own} against {method} {', '.join(sorted(set(g['baseline'])))}"
            for (own, method), g in group.groupby(["launch_method", "base_method"])
        )
        notes.append(
            f"run {run} on {model}: {len(group)} of {ok} ok rows compare a kernel with a baseline launched "
            f"differently ({kinds})"
        )
    return notes
