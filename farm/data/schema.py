"""The result row: one per (GPU, stage, shape, repeat, run). The single definition of columns.

datasets/README.md documents every column; tests check the two agree.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = "5"
# Versions `farm validate` and the readers accept; an older file lacks the columns added after it, which read
# as null there.
SUPPORTED_VERSIONS = ("2", "3", "4", "5")
ADDED_COLUMNS = {
    "3": ("baseline_launch_method", "cell_seconds", "verify_seconds", "warmup_seconds"),
    "4": (
        "post_checked",
        "memory_bandwidth_tbs",
        "limit_check",
        "cells_implausible",
        "library_algorithm",
        "nvml_unreported",
        "flush_bytes",
        "plan_cells",
    ),
    "5": ("pair", "arm", "loaded_first", "code_sha256"),
}


def added_after(version: str) -> set[str]:
    """Columns a file of this schema version lacks (added by a later version)."""
    return {c for v, cols in ADDED_COLUMNS.items() if int(v) > int(version) for c in cols}


# The tables of a dataset, each a folder of its own (farm/data/dataset.py).
ROWS, TELEMETRY, PROFILE, RUNS = "rows", "telemetry", "profile", "runs"
# Hive partition keys of a dataset: datasets/<name>/gpu_model=<...>/run_id=<...>/part-*.parquet
PARTITION_KEYS = ("gpu_model", "run_id")
STATUSES = ("ok", "failed_verification", "implausible", "skipped", "error", "timeout")


def _tables(fields: list[tuple[str, pa.DataType, str]]) -> tuple[pa.Schema, dict[str, str], pa.Schema]:
    """(the table's schema, its column docs, the schema of its files: the partition keys live in the directories)."""
    schema = pa.schema(
        [pa.field(n, t) for n, t, _ in fields], metadata={b"gemm_farm_schema_version": SCHEMA_VERSION.encode()}
    )
    return schema, {n: doc for n, _, doc in fields}, _file_schema(schema)


def _file_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f for f in schema if f.name not in PARTITION_KEYS], metadata=schema.metadata)


_F = [
    # provenance
    ("run_id", pa.string(), "sweep identifier; rows of one run share it"),
    ("repeat", pa.int32(), "repeat index of the cell within the run (0-based)"),
    (
        "pair",
        pa.string(),
        'paired sweeps (`--paired`, `--base-kernels`): the pair this row belongs to, `RUN_ID/stage/MxNxK/repeat`, shared by the two arms\' rows of one cell and repeat, measured one after the other in one worker process (docs/verdicts.md, "Paired sweeps"); null in a sequential run (schema 5)',
    ),
    (
        "arm",
        pa.string(),
        "paired sweeps: `a` (this tree's kernels, run RUN_ID-a) or `b` (the same code again, or --base-kernels' tree, run RUN_ID-b); null in a sequential run (schema 5)",
    ),
    (
        "loaded_first",
        pa.string(),
        'paired sweeps: the arm (`a` or `b`) whose module was loaded, output allocated and library call planned first in this pair, drawn at random per pair apart from the timing order, so that what the order of loads decides is an independent draw of each pair (docs/verdicts.md, "Paired sweeps"); null in a sequential run and in paired rows written before it was recorded (schema 5)',
    ),
    (
        "plan_cells",
        pa.int32(),
        "cells the run's plan gives each GPU (replicate) or GPU model (shard), every repeat counted: the total a progress bar counts to; set by the sweep driver, which `farm bench` runs too (schema 4; null in older data and in rows of `farm bench` before it did)",
    ),
    ("timestamp", pa.timestamp("us", tz="UTC"), "when the cell finished"),
    ("host", pa.string(), "hostname of the GPU's node"),
    ("gpu_model", pa.string(), "GPU model: node label farm.gpu-model, else the NVML name with spaces as dashes"),
    ("gpu_name", pa.string(), "NVML / CUDA device name"),
    ("gpu_uuid", pa.string(), "NVML GPU UUID"),
    ("gpu_index", pa.int32(), "CUDA device ordinal inside the worker process"),
    ("compute_capability", pa.string(), "major.minor"),
    ("arch", pa.string(), "the sm_XX the kernels were compiled for"),
    ("sm_count", pa.int32(), "multiprocessors"),
    ("l2_bytes", pa.int64(), "L2 cache size, bytes"),
    ("memory_bytes", pa.int64(), "device memory, bytes"),
    (
        "memory_bandwidth_tbs",
        pa.float64(),
        "peak DRAM bandwidth from NVML: bus width x maximum memory clock x 2 (double data rate), TB/s (schema 4)",
    ),
    ("driver_version", pa.string(), "NVIDIA driver version"),
    ("cuda_runtime_version", pa.string(), "CUDA runtime version CuPy runs on"),
    ("nvrtc_version", pa.string(), "NVRTC version that compiled the kernels"),
    ("cupy_version", pa.string(), "CuPy version"),
    ("farm_version", pa.string(), "gemm-farm version"),
    ("git_commit", pa.string(), "commit of the farm's code, with -dirty when modified; 'unknown' outside git"),
    # the cell
    ("family", pa.string(), "kernel family (simt_fp32, baseline, ...)"),
    ("stage", pa.string(), "stage name (unique across families)"),
    ("walk", pa.string(), "write-up the stage comes from (A, B, C) or '-' for baselines"),
    ("stage_group", pa.string(), "ladder | traits | did_not_pan_out | geometry | baseline"),
    ("position", pa.int32(), "ladder position within the family"),
    (
        "dtype",
        pa.string(),
        "input precision (fp32, tf32, fp16, bf16, fp8_e4m3: E4M3 A and B with a per-tensor scale each, B stored N x K; "
        "fp8_e4m3_e5m2: the same with B in E5M2); output is fp32",
    ),
    (
        "baseline",
        pa.string(),
        "the baseline stage this row's % is against (the catalog's, unless this host could not run it: status_reason then says why)",
    ),
    ("m", pa.int32(), "rows of A and C"),
    ("n", pa.int32(), "columns of B and C"),
    ("k", pa.int32(), "columns of A, rows of B"),
    ("flops", pa.int64(), "2*M*N*K"),
    # outcome
    (
        "status",
        pa.string(),
        "ok | failed_verification | implausible (timed faster than the chip can go: status_reason names the limit; schema 4) | skipped | error | timeout",
    ),
    (
        "status_reason",
        pa.string(),
        "why skipped / failed / errored; empty when ok, unless the row's baseline stood in for the catalog's (then why) or the stage ran at N padded to its multiple (then how: farm/measure/padding.py; walk D at N % 8 != 0)",
    ),
    # compilation
    ("compile_options", pa.string(), "NVRTC options, space separated"),
    (
        "code_sha256",
        pa.string(),
        "kernel rows: SHA-256 of the CUBIN's machine code, constants and resource records (farm/measure/compiler.py code_sha256; symbol names left out): equal on two rows means the same code ran; null for library baselines (schema 5)",
    ),
    ("registers", pa.int32(), "registers per thread of the loaded kernel (max over the stage's kernels)"),
    ("static_smem_bytes", pa.int32(), "static shared memory per block of the loaded kernel, bytes"),
    ("dynamic_smem_bytes", pa.int32(), "dynamic shared memory per block, bytes"),
    ("spill_bytes", pa.int32(), "spill stores + loads reported by ptxas, bytes; null where NVRTC gave no report"),
    (
        "local_bytes",
        pa.int32(),
        "local memory per thread of the loaded kernel (stack + spills), bytes; 0 is what we want",
    ),
    ("threads_per_block", pa.int32(), "threads per block of the main launch"),
    ("grid_blocks", pa.int64(), "blocks in the main launch's grid"),
    (
        "compile_seconds",
        pa.float64(),
        "NVRTC compile time (0 when the cache hit); since schema 3 often spent in the background while earlier cells ran",
    ),
    # verification
    ("verified", pa.bool_(), "every element within tolerance of the baseline reference, no NaN"),
    (
        "verify_reference",
        pa.string(),
        "what the output was compared with; a baseline's FP64 check says whether it covered every element or rows of C in blocks, and what the whole product would have cost (farm/measure/sizing.py)",
    ),
    ("max_abs_error", pa.float64(), "max |x - ref| over C"),
    ("max_scaled_error", pa.float64(), "max |x - ref| / (atol + rtol*|ref|); <= 1 passes"),
    ("mismatches", pa.int64(), "elements outside tolerance (NaN counts)"),
    ("atol", pa.float64(), "absolute tolerance used"),
    ("rtol", pa.float64(), "relative tolerance used"),
    (
        "post_checked",
        pa.bool_(),
        "the last timed batch (the captured graph, replayed between its events like every batch) ran on fresh inputs written into the same buffers with C poisoned, and its output was checked (schema 4; null in older data: not post-checked)",
    ),
    (
        "verify_seconds",
        pa.float64(),
        "host time to make the inputs, run both sides once and compare (the FP64 product for baselines), s",
    ),
    # timing
    (
        "timing_mode",
        pa.string(),
        "hot: back-to-back launches, L2 warm; cold: L2-sized write before every launch, outside the timed span",
    ),
    (
        "flush_bytes",
        pa.int64(),
        "cold mode: bytes written before every timed launch to evict the L2 (the GPU's l2_bytes); null in hot mode (schema 4)",
    ),
    (
        "launch_method",
        pa.string(),
        "cuda_graph: a batch captured once and replayed (cold: a graph of one launch after each flush); direct: Python launches; direct_cold: one direct launch per sample after a flush",
    ),
    (
        "baseline_launch_method",
        pa.string(),
        "launch_method of the baseline timed in this cell (a baseline row: its own); a % whose two sides differ is flagged (schema 3; null in schema 2 data)",
    ),
    ("warmup_launches", pa.int32(), "launches before timing"),
    (
        "warmup_reason",
        pa.string(),
        "clock_settled: SM clock spread < 2% over 100 ms; clock_settled_earlier: so already in the 100 ms before the cell's first launch, with the GPU busy throughout; max_time: never settled in 3 s; fixed_no_clock: the GPU reports no SM clock (nvml_unreported), so a fixed 0.5 s (schema 4); no_telemetry: NVML sampling off",
    ),
    (
        "warmup_seconds",
        pa.float64(),
        "host time from the first warm-up launch to the first timed batch (graph capture included), s",
    ),
    ("launches_per_batch", pa.int32(), "launches between the two CUDA events of a batch"),
    ("batches", pa.int32(), "timed batches (samples_ms holds them all, or an even subset in a shipped dataset)"),
    ("launches_timed", pa.int64(), "launches inside timed batches"),
    (
        "timed_seconds",
        pa.float64(),
        "GPU time inside the timed batches of this cell, its interleaved baseline's included, s",
    ),
    (
        "cell_seconds",
        pa.float64(),
        "host time the worker spent on the cell, from receiving it to its row (compile wait, inputs, verification, warm-up, timing), s",
    ),
    (
        "stop_reason",
        pa.string(),
        "converged: noise <= target; max_time; max_samples (see farm/measure/stopping.py); followed by ', in blocks of S s' where the plan set measure.block_s, or ', in blocks of S s, WHY' where the cell was at the power cap (measure.cap_block_s; WHY: power cap in warm-up, power cap while timed batch by batch, baseline alone at the power cap; farm/measure/timing.py)",
    ),
    (
        "samples_ms",
        pa.list_(pa.float64()),
        "per-launch time of each batch (batch time / launches), ms; `farm compact --max-samples N` keeps N evenly spaced "
        "(the summaries below stay those of every batch)",
    ),
    ("median_ms", pa.float64(), "median of samples_ms"),
    ("min_ms", pa.float64(), "min of samples_ms"),
    ("max_ms", pa.float64(), "max of samples_ms"),
    ("q1_ms", pa.float64(), "first quartile of samples_ms"),
    ("q3_ms", pa.float64(), "third quartile of samples_ms"),
    ("iqr_ms", pa.float64(), "q3 - q1"),
    ("cv", pa.float64(), "coefficient of variation of samples_ms (std / mean)"),
    ("tflops", pa.float64(), "flops / median time, 1e12/s"),
    (
        "baseline_median_ms",
        pa.float64(),
        "median time of the baseline at this shape, timed in alternating batches with this stage",
    ),
    ("pct_of_baseline", pa.float64(), "100 * baseline_median_ms / median_ms"),
    (
        "limit_check",
        pa.string(),
        "which physical limits the timed row was checked against (farm/data/limits.py): peak, dram (cold mode: the time to read A and B from DRAM), and what could not be checked and why (schema 4)",
    ),
    (
        "library_algorithm",
        pa.string(),
        "cuBLAS/cuBLASLt/Triton baseline rows: the library version and the algorithm it ran (cuBLASLt: its heuristic's pick, every algorithm configuration attribute; cuBLAS: the call, its kernel being chosen inside the library; Triton: its autotuner's pick, which may differ between runs); null for other rows (schema 4)",
    ),
    # telemetry over this stage's own timed batches (NVML, sampled every 10 ms)
    ("telemetry", pa.bool_(), "NVML sampling was on"),
    ("telemetry_samples", pa.int32(), "NVML samples inside this stage's timed batches"),
    (
        "nvml_unreported",
        pa.list_(pa.string()),
        "NVML fields this GPU gave no value for during the cell (sm_clock_mhz, mem_clock_mhz, temp_c, power_w, reasons: no timed sample has it; energy_mj, max_sm_clock_mhz): not supported by the GPU or driver, or failing 10 times in a row; their columns are null and the throttle flags are judged on the rest (schema 4)",
    ),
    ("sm_clock_min_mhz", pa.float64(), "lowest SM clock sampled, MHz"),
    ("sm_clock_median_mhz", pa.float64(), "median SM clock sampled, MHz"),
    ("sm_clock_max_mhz", pa.float64(), "highest SM clock sampled, MHz"),
    ("max_sm_clock_mhz", pa.float64(), "the GPU's maximum SM clock (NVML), MHz"),
    ("mem_clock_median_mhz", pa.float64(), "median memory clock sampled, MHz"),
    ("power_mean_w", pa.float64(), "mean board power sampled, W"),
    ("temp_max_c", pa.float64(), "highest GPU temperature sampled, Celsius"),
    ("energy_per_launch_mj", pa.float64(), "mean sampled power x median time per launch, mJ"),
    (
        "energy_timed_j",
        pa.float64(),
        "NVML total-energy counter difference over the cell's whole timed phase (its baseline's batches included), J",
    ),
    ("clock_event_reasons", pa.int64(), "union of NVML clock-event (throttle) reason bits over the samples"),
    ("clock_event_names", pa.list_(pa.string()), "names of those bits"),
    ("throttle_idle", pa.bool_(), "a sample had the GPU-idle reason (clocks not ramped)"),
    ("throttle_power", pa.bool_(), "a sample was capped by software power limit"),
    ("throttle_thermal", pa.bool_(), "a sample had a software or hardware thermal slowdown"),
    ("throttle_hw_slowdown", pa.bool_(), "a sample had hardware slowdown or power brake"),
    ("low_clock_fraction", pa.float64(), "fraction of samples below 75% of the max SM clock"),
    ("throttled_fraction", pa.float64(), "fraction of samples with power, thermal, hardware slowdown or low clock"),
    (
        "throttle_policy",
        pa.string(),
        "flag: keep and flag throttled measurements; remeasure: measure again while throttled",
    ),
    ("remeasures", pa.int32(), "re-measurements made under the remeasure policy"),
]

# Raw telemetry samples travel in a row under this key and are written to their own table.
TELEMETRY_KEY = "_telemetry"
# One row per NVML sample; joins to result rows on (gpu_model, run_id, gpu_uuid, stage, m, n, k, repeat).
TELEMETRY_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("gpu_model", pa.string()),
        ("gpu_uuid", pa.string()),
        ("stage", pa.string()),
        ("m", pa.int32()),
        ("n", pa.int32()),
        ("k", pa.int32()),
        ("repeat", pa.int32()),
        ("series", pa.string()),  # warmup | kernel | baseline | gap (between batches) | a | b (a paired cell's arms)
        ("t_ms", pa.float32()),  # since the cell's warm-up began
        ("sm_clock_mhz", pa.int32()),
        ("mem_clock_mhz", pa.int32()),
        ("temp_c", pa.int16()),
        ("power_w", pa.float32()),
        ("reasons", pa.int32()),
    ],
    metadata={b"gemm_farm_schema_version": SCHEMA_VERSION.encode()},
)
TELEMETRY_JOIN_KEYS = ("gpu_model", "run_id", "gpu_uuid", "stage", "m", "n", "k", "repeat")

ROW_SCHEMA, COLUMN_DOCS, FILE_SCHEMA = _tables(_F)
TELEMETRY_FILE_SCHEMA = _file_schema(TELEMETRY_SCHEMA)


def check_columns(rows: list[dict]) -> None:
    """Raise ValueError when a row has a column the schema lacks."""
    unknown = set().union(*rows) - set(ROW_SCHEMA.names) - {TELEMETRY_KEY}
    if unknown:
        raise ValueError(f"rows have columns the schema lacks: {sorted(unknown)}")


def rows_to_table(rows: list[dict]) -> pa.Table:
    """Rows (dicts with every column; missing ones become null) as a table of ROW_SCHEMA."""
    check_columns(rows)
    return pa.Table.from_pylist([{k: v for k, v in r.items() if k != TELEMETRY_KEY} for r in rows], schema=ROW_SCHEMA)


def _markdown(schema: pa.Schema, docs: dict[str, str]) -> str:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{f.name}` | {f.type} | {docs[f.name]} |" for f in schema]
    return "\n".join(lines)


def columns_markdown() -> str:
    """The column table of datasets/README.md (kept identical by a test; print with `farm schema`)."""
    return _markdown(ROW_SCHEMA, COLUMN_DOCS)


# ---------------------------------------------------------------------------------------------
# The profile table: Nsight Compute counters of one profiled launch per (GPU, stage, shape).
# Written by farm/measure/profiler.py, read by farm/analysis/moves.py; datasets/README.md documents it.
PROFILE_STATUSES = (
    "ok",
    "unavailable",
    "skipped",
    "no_ncu",
    "no_permission",
    "ncu_unusable",
    "ncu_failed",
    "no_kernels",
    "error",
    "timeout",
)
PROFILE_KINDS = ("pct", "ratio", "count", "bytes", "time", "per_thread")

_P = [
    ("run_id", pa.string(), "run identifier; joins to the run's rows"),
    ("timestamp", pa.timestamp("us", tz="UTC"), "when the cell was profiled"),
    ("host", pa.string(), "hostname of the GPU's node"),
    ("gpu_model", pa.string(), "GPU model, as in rows"),
    ("gpu_name", pa.string(), "NVML / CUDA device name"),
    ("gpu_uuid", pa.string(), "NVML GPU UUID"),
    ("arch", pa.string(), "the sm_XX the kernels were compiled for"),
    ("family", pa.string(), "kernel family of the stage"),
    ("stage", pa.string(), "stage name"),
    ("stage_group", pa.string(), "ladder, traits, did_not_pan_out, geometry or baseline"),
    ("position", pa.int32(), "ladder position within the family"),
    ("dtype", pa.string(), "input precision"),
    ("m", pa.int32(), "rows of A and C"),
    ("n", pa.int32(), "columns of B and C"),
    ("k", pa.int32(), "columns of A, rows of B"),
    (
        "kernel",
        pa.string(),
        "the registry's kernel name expression (cuBLAS: the name ncu printed); null on a cell-level status row",
    ),
    ("kernel_symbol", pa.string(), "the kernel name as ncu printed it"),
    (
        "launch_index",
        pa.int32(),
        "order of the launch within the stage's profiled launches (0-based); null on a cell-level status row",
    ),
    (
        "quantity",
        pa.string(),
        "the farm's stable name for what was measured (farm.data.profile_metrics.METRICS); null on a cell-level status row",
    ),
    ("metric", pa.string(), "the Nsight Compute metric, or the formula of a derived quantity"),
    ("value", pa.float64(), "the metric's value in `unit`; null unless status is ok"),
    ("unit", pa.string(), "unit, in base units: %, byte, ns, sector, register/thread, byte/sector, ..."),
    (
        "kind",
        pa.string(),
        "pct, ratio, count, bytes, time or per_thread: how farm.analysis.moves aggregates and ranks it",
    ),
    (
        "status",
        pa.string(),
        "ok, unavailable, skipped, no_ncu, no_permission, ncu_unusable, ncu_failed, no_kernels, error or timeout (datasets/README.md)",
    ),
    ("status_reason", pa.string(), "why the value is missing or the cell was not profiled; empty when ok"),
    ("ncu_version", pa.string(), "Nsight Compute version that collected the metrics"),
    ("ncu_options", pa.string(), "the ncu command-line options used (metric list excluded)"),
    ("farm_version", pa.string(), "gemm-farm version"),
    ("git_commit", pa.string(), "commit of the farm's code"),
]
PROFILE_SCHEMA, PROFILE_COLUMN_DOCS, PROFILE_FILE_SCHEMA = _tables(_P)
# Joins to result rows on these (a profile has no repeat: one profiled launch per GPU, stage and shape).
PROFILE_JOIN_KEYS = ("gpu_model", "run_id", "gpu_uuid", "stage", "m", "n", "k")


def profile_columns_markdown() -> str:
    """The column table of the profile section of datasets/README.md (kept identical by a test)."""
    return _markdown(PROFILE_SCHEMA, PROFILE_COLUMN_DOCS)


# ---------------------------------------------------------------------------------------------
# The runs table: one row per (sweep, GPU), written by the driver when the sweep ends or is interrupted.
# A resumed run adds another row for the same run_id and GPU: each row covers one driver's part.
_R = [
    ("run_id", pa.string(), "run identifier; joins to the run's rows"),
    ("gpu_model", pa.string(), "GPU model, as in rows"),
    ("gpu_uuid", pa.string(), "NVML GPU UUID"),
    ("gpu_name", pa.string(), "NVML / CUDA device name"),
    ("host", pa.string(), "hostname of the GPU's node"),
    ("mode", pa.string(), "replicate or shard"),
    ("started_at", pa.timestamp("us", tz="UTC"), "when the sweep command started"),
    ("ended_at", pa.timestamp("us", tz="UTC"), "when it ended (or was interrupted)"),
    ("interrupted", pa.bool_(), "the driver was stopped (Ctrl-C, `ray job stop`) before its cells were done"),
    (
        "startup_seconds",
        pa.float64(),
        "driver process start (its imports included) to every worker ready (Ray start-up, workers built, GPUs found), s",
    ),
    (
        "first_row_seconds",
        pa.float64(),
        "driver process start to this GPU's first row reaching the driver, s; null when it gave none",
    ),
    ("wall_seconds", pa.float64(), "driver process start to end, s"),
    ("cells_ok", pa.int64(), "rows with status ok this GPU gave in this part of the run"),
    ("cells_failed_verification", pa.int64(), "rows with status failed_verification"),
    ("cells_skipped", pa.int64(), "rows with status skipped"),
    ("cells_error", pa.int64(), "rows with status error"),
    ("cells_implausible", pa.int64(), "rows with status implausible (schema 4)"),
    ("cells_timeout", pa.int64(), "rows with status timeout"),
    ("cells_not_run", pa.int64(), "cells left unrun because this GPU was given up"),
    (
        "cells_resumed",
        pa.int64(),
        "cells of this GPU's queue already done by an earlier part of the run (shard: the model's queue)",
    ),
    ("timed_seconds", pa.float64(), "summed timed_seconds of this GPU's rows: GPU time inside timed windows, s"),
    (
        "overhead_ratio",
        pa.float64(),
        "(wall_seconds - startup_seconds) / timed_seconds: farm time per timed GPU second; null when nothing was timed",
    ),
    ("farm_version", pa.string(), "gemm-farm version"),
    ("git_commit", pa.string(), "commit of the farm's code"),
    ("ray_version", pa.string(), "Ray version of the driver"),
    ("python_version", pa.string(), "Python version of the driver"),
    ("cupy_version", pa.string(), "CuPy version of the worker"),
    ("driver_version", pa.string(), "NVIDIA driver version of the GPU's host"),
    ("cuda_runtime_version", pa.string(), "CUDA runtime version CuPy runs on"),
]
RUNS_SCHEMA, RUNS_COLUMN_DOCS, RUNS_FILE_SCHEMA = _tables(_R)


def runs_columns_markdown() -> str:
    """The column table of the runs section of datasets/README.md (kept identical by a test)."""
    return _markdown(RUNS_SCHEMA, RUNS_COLUMN_DOCS)
