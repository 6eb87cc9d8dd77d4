"""Compact a dataset: each partition's many small files (one per write round) into one,
written for shipping (write_partition_file's archive encoding).

Safe beside a running sweep: only the files read are deleted, after the compacted
file is in place; files written meanwhile are left for the next compaction. Rows are
sorted (by cell, then time) so that compression finds the repetition.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from farm.data.dataset import _TABLES, resolve, write_partition_file

_VERSION_KEY = b"gemm_farm_schema_version"

_SORT = {
    "rows": ["stage", "m", "n", "k", "repeat", "gpu_uuid"],
    "telemetry": ["stage", "m", "n", "k", "repeat", "gpu_uuid", "t_ms"],
    "profile": ["stage", "m", "n", "k", "gpu_uuid"],
    "runs": ["started_at", "gpu_uuid"],
}


def _partitions(fs: pafs.FileSystem, root: str) -> dict[str, list[str]]:
    files = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    out: dict[str, list[str]] = {}
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        if f.type == pafs.FileType.File and name.endswith(".parquet") and not name.startswith((".", "_")):
            out.setdefault(f.path.rsplit("/", 1)[0], []).append(f.path)
    return out


def _oldest_version(fs: pafs.FileSystem, files: list[str]) -> bytes:
    """The lowest schema version among `files` (no version: 1): the version their merged file keeps, so that
    compacting old rows never labels them with a schema they were not measured under."""
    versions = []
    for path in files:
        with fs.open_input_file(path) as f:
            versions.append((pq.read_metadata(f).metadata or {}).get(_VERSION_KEY, b"1"))
    return min(versions, key=int)


def every_nth_of_each_cell(data: pa.Table, stride: int, cell: list[str]) -> pa.Table:
    """Rows 0, stride, 2 x stride ... of each run of equal `cell` values (`data` sorted by them): every cell keeps its
    first sample, however few it has."""
    n = data.num_rows
    starts = np.zeros(n, dtype=bool)
    starts[:1] = True
    for name in cell:
        values = data.column(name).to_numpy(zero_copy_only=False)
        starts[1:] |= values[1:] != values[:-1]
    index = np.arange(n)
    first = np.maximum.accumulate(np.where(starts, index, 0))
    return data.filter(pa.array((index - first) % stride == 0))


def thin_samples(samples: pa.ChunkedArray, max_samples: int) -> pa.Array:
    """Each row's samples_ms cut to at most `max_samples`, evenly spaced over the run of batches (the first and the
    last kept), so a drift or a slow start still shows; rows with fewer are left whole."""
    out = []
    for s in samples.to_pylist():
        if s is not None and len(s) > max_samples:
            s = [s[i] for i in np.linspace(0, len(s) - 1, max_samples).round().astype(int)]
        out.append(s)
    return pa.array(out, samples.type)


def compact(output: str, telemetry_stride: int = 1, max_samples: int | None = None) -> dict[str, tuple[int, int]]:
    """Compact every table of the dataset at `output`; per table (files before, files after).
    Every partition is rewritten, one file each, so an already compacted dataset takes the
    current encoding too; each keeps the schema version of its oldest file.

    For shipped datasets, where size matters more than resolution (row summaries are untouched either way):
    telemetry_stride > 1 keeps every n-th raw telemetry sample of each cell; max_samples keeps at most that many of
    each row's raw batch times (samples_ms; `batches` still says how many were measured, and the row's median,
    quartiles, cv and tflops stay those of all of them).
    """
    if telemetry_stride < 1:
        raise ValueError("telemetry_stride must be a positive integer")
    if max_samples is not None and max_samples < 3:
        raise ValueError("max_samples must be at least 3 (a row's noise needs three samples)")
    fs, root = resolve(output)
    report = {}
    for table, (_, file_schema) in _TABLES.items():
        parts = _partitions(fs, f"{root}/{table}")
        before = sum(len(v) for v in parts.values())
        stride = telemetry_stride if table == "telemetry" else 1
        for directory, files in parts.items():
            data = ds.dataset(files, filesystem=fs, format="parquet", schema=file_schema).to_table()
            data = data.sort_by([(c, "ascending") for c in _SORT[table] if c in data.column_names])
            if stride > 1:
                cell = [c for c in _SORT[table] if c in data.column_names and c != "t_ms"]
                data = every_nth_of_each_cell(data, stride, cell)
            if table == "rows" and max_samples is not None:
                i = data.column_names.index("samples_ms")
                data = data.set_column(i, data.field(i), thin_samples(data.column(i), max_samples))
            data = data.replace_schema_metadata(
                {**(data.schema.metadata or {}), _VERSION_KEY: _oldest_version(fs, files)}
            )
            write_partition_file(fs, directory, data, archive=True)
            for f in files:
                fs.delete_file(f)
        report[table] = (before, sum(len(v) for v in _partitions(fs, f"{root}/{table}").values()))
    return report
