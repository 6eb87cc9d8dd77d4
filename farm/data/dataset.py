"""Write and read result datasets: hive-partitioned Parquet tables, zstd.

    <output>/rows/gpu_model=<model>/run_id=<run>/part-<uuid>.parquet       one row per cell
    <output>/telemetry/gpu_model=<model>/run_id=<run>/part-<uuid>.parquet  raw NVML samples
    <output>/profile/gpu_model=<model>/run_id=<run>/part-<uuid>.parquet    Nsight Compute metrics (optional pass)
    <output>/runs/gpu_model=<model>/run_id=<run>/part-<uuid>.parquet       one row per sweep and GPU

Each write is a new uniquely named file, written under a temporary name and renamed,
so a crash never leaves half a file and two sweeps writing one dataset never collide.
Works on a local path or any pyarrow filesystem URI (s3://, gs://, hdfs://...).
"""

from __future__ import annotations

import os
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from farm.data.row_batch import RowBatch, partition_of, row_batches
from farm.data.schema import (
    FILE_SCHEMA,
    PARTITION_KEYS,
    PROFILE,
    PROFILE_FILE_SCHEMA,
    PROFILE_SCHEMA,
    ROW_SCHEMA,
    ROWS,
    RUNS,
    RUNS_FILE_SCHEMA,
    RUNS_SCHEMA,
    TELEMETRY,
    TELEMETRY_FILE_SCHEMA,
    TELEMETRY_SCHEMA,
)

_TABLES = {
    ROWS: (ROW_SCHEMA, FILE_SCHEMA),
    TELEMETRY: (TELEMETRY_SCHEMA, TELEMETRY_FILE_SCHEMA),
    PROFILE: (PROFILE_SCHEMA, PROFILE_FILE_SCHEMA),
    RUNS: (RUNS_SCHEMA, RUNS_FILE_SCHEMA),
}


def default_output() -> str:
    """The stable dataset location sweeps write to and the dashboard reads by default.

    $GEMM_FARM_RESULTS, else ~/gemm-farm-results: absolute, so that a job running in
    Ray's temporary copy of the working dir still writes where the user looks.
    """
    return os.environ.get("GEMM_FARM_RESULTS") or str(Path.home() / "gemm-farm-results")


def resolve(output: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, root path) for a local path or a filesystem URI."""
    if "://" in output:
        return pafs.FileSystem.from_uri(output)
    path = Path(output).expanduser().resolve()
    return pafs.LocalFileSystem(), str(path)


def _partition_dir(root: str, values: tuple) -> str:
    # Percent-encode partition values so a model name can never make a path.
    parts = [f"{key}={quote(str(value), safe='')}" for key, value in zip(PARTITION_KEYS, values)]
    return "/".join([root.rstrip("/"), *parts])


# A write's files before they are written: (table, partition values) -> that partition's new rows.
Parts = dict[tuple[str, tuple], pa.Table]


def _record_parts(records: list[dict], table: str, file_schema: pa.Schema) -> Parts:
    """The records as one table per partition (converting checks their types)."""
    groups: dict[tuple, list[dict]] = {}
    for rec in records:
        groups.setdefault(partition_of(rec), []).append(rec)
    # from_pylist takes the schema's columns only: the partition keys stay in the directory names.
    return {(table, values): pa.Table.from_pylist(group, schema=file_schema) for values, group in groups.items()}


def write_parts(parts: Parts, output: str) -> list[str]:
    """Each part as a new file of its partition in the dataset at `output`; returns the files written. A part
    leaves `parts` once its file is written, so when a write fails, `parts` holds what is still to write."""
    fs, root = resolve(output)
    files = []
    for key in list(parts):
        table, values = key
        files.append(write_partition_file(fs, _partition_dir(f"{root}/{table}", values), parts[key]))
        del parts[key]
    return files


def _floating(field: pa.Field) -> bool:
    t = field.type
    return pa.types.is_floating(t) or (pa.types.is_list(t) and pa.types.is_floating(t.value_type))


def write_partition_file(fs: pafs.FileSystem, directory: str, table: pa.Table, archive: bool = False) -> str:
    """One new uniquely named Parquet file in a partition directory: written as a hidden
    temporary, then renamed, so readers never see half a file.

    archive: for files written once and shipped (farm compact): zstd level 19, float columns
    byte-stream-split (their bytes grouped by significance, which zstd compresses about a third
    better for timings and telemetry), no min/max statistics (for 91 columns they are about
    7 KB of every file, most of a small one; the farm never reads them), no dictionaries (zstd
    finds the repeats of sorted rows itself: 2-5 % smaller rows files, a runs file of three rows
    3.7 KB instead of 4.4) and no serialized Arrow schema (7.7 KB of a rows file: Parquet's own
    types read back as the same Arrow types, and readers pass the farm's schema anyway), the
    schema version kept as the file's key-value metadata; slower to write, same to read."""
    fs.create_dir(directory, recursive=True)
    name = f"part-{uuid.uuid4().hex}.parquet"
    tmp, final = f"{directory}/.{name}.tmp", f"{directory}/{name}"
    floats = [f.name for f in table.schema if _floating(f)] if archive else []
    options = (
        dict(
            compression_level=19,
            use_byte_stream_split=floats,
            write_statistics=False,
            use_dictionary=False,
        )
        if floats
        else dict(compression_level=9)
    )
    with fs.open_output_stream(tmp) as sink:
        if floats:
            with pq.ParquetWriter(sink, table.schema, compression="zstd", store_schema=False, **options) as writer:
                writer.write_table(table)
                writer.add_key_value_metadata(table.schema.metadata or {})
        else:
            pq.write_table(table, sink, compression="zstd", **options)
    fs.move(tmp, final)
    return final


def write_rows(rows: list[dict], output: str) -> list[str]:
    """Append rows (and the raw telemetry they carry) to the dataset at `output`, one file per partition and
    table; returns the files written. Every row is checked against the schema before anything is written."""
    return write_row_batches(row_batches(rows), output)


def write_row_batches(batches: list[RowBatch], output: str) -> list[str]:
    """Append RowBatches to the dataset at `output`: each partition's rows as one file, their telemetry as
    another; returns the files written."""
    return write_parts(row_batch_parts(batches), output)


def row_batch_parts(batches: list[RowBatch]) -> Parts:
    """RowBatches as the files they make: each partition's rows (or profile records) as one table, their telemetry
    as another."""
    rows: dict[tuple[str, tuple], list[pa.RecordBatch]] = defaultdict(list)
    for b in batches:
        rows[(b.table, b.partition)].append(b.rows)
        if b.telemetry is not None:
            rows[(TELEMETRY, b.partition)].append(b.telemetry)
    return {key: pa.Table.from_batches(got, _TABLES[key[0]][1]) for key, got in rows.items()}


def write_table(records: list[dict], output: str, table: str) -> list[str]:
    """Append records to table `table` (e.g. "profile") of the dataset at `output`; returns the files written
    (table_parts and write_parts: the files before they are written).

    The records are checked against the table's schema (unknown columns or wrong types raise
    ValueError / pyarrow errors) before anything is written; missing columns become null.
    Result rows, which carry raw telemetry, go through write_rows.
    """
    return write_parts(table_parts(records, table), output)


def table_parts(records: list[dict], table: str) -> Parts:
    """Records of table `table` as the files they make, checked against its schema (unknown columns or wrong
    types raise ValueError / pyarrow errors); missing columns become null."""
    if table not in _TABLES:
        raise ValueError(f"unknown table {table!r}; tables: {', '.join(_TABLES)}")
    schema, file_schema = _TABLES[table]
    unknown = {k for r in records for k in r} - set(schema.names)
    if unknown:
        raise ValueError(f"{table} records have columns the schema lacks: {sorted(unknown)}")
    return _record_parts(records, table, file_schema)


def open_dataset(output: str, table: str = ROWS) -> ds.Dataset:
    """Table `table` (rows, telemetry, profile or runs) of the dataset at `output`, partition keys as columns."""
    schema = _TABLES[table][0]
    fs, root = resolve(output)
    return ds.dataset(
        f"{root}/{table}",
        filesystem=fs,
        format="parquet",
        partitioning=ds.partitioning(pa.schema([schema.field(k) for k in PARTITION_KEYS]), flavor="hive"),
        schema=schema,
        exclude_invalid_files=False,
        ignore_prefixes=[".", "_"],
    )


def exists(output: str, table: str = ROWS) -> bool:
    fs, root = resolve(output)
    return fs.get_file_info(f"{root}/{table}").type != pafs.FileType.NotFound


def read_table(output: str, table: str = ROWS) -> pa.Table:
    """The whole table; an absent dataset reads as an empty table of the schema."""
    if not exists(output, table):
        return _TABLES[table][0].empty_table()
    return open_dataset(output, table).to_table()


def read_columns(output: str, table: str, columns: list[str], where: ds.Expression) -> pa.Table:
    """`columns` of table `table`'s rows that satisfy `where`; an absent table reads as no rows."""
    if not exists(output, table):
        return _TABLES[table][0].empty_table().select(columns)
    return open_dataset(output, table).to_table(columns=columns, filter=where)


def completed_keys(output: str, run_id: str, scope: str, table: str = ROWS) -> set[tuple]:
    """The cells of run `run_id` that are done, as (row[scope], stage, m, n, k, repeat): those with a row in
    `table`, the rows table (measured) or the profile table (profiled: one cell per (stage, shape), repeat 0).

    `scope` is the column a cell is done for: "gpu_uuid" when every GPU runs every cell,
    "gpu_model" when a model's GPUs share them. Every status is final: a cell has one
    row per run, whatever its outcome. An absent dataset has no completed cells.
    """
    columns = [scope, "stage", "m", "n", "k", *(["repeat"] if table == ROWS else [])]
    got = read_columns(output, table, columns, ds.field("run_id") == run_id)
    keys = zip(*(got.column(c).to_pylist() for c in columns))
    return set(keys) if table == ROWS else {(*key, 0) for key in keys}
