"""Write and read result datasets: hive-partitioned Parquet (gpu_model=/run_id=), zstd.

Each write is a new uniquely named file, written under a temporary name and renamed,
so a crash never leaves half a file and two sweeps writing one dataset never collide.
Works on a local path or any pyarrow filesystem URI (s3://, gs://, hdfs://...).
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from farm.schema import FILE_SCHEMA, PARTITION_KEYS, ROW_SCHEMA, rows_to_table


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


def _partition_dir(root: str, row: dict) -> str:
    # Percent-encode partition values so a model name can never make a path.
    parts = [f"{key}={quote(str(row[key]), safe='')}" for key in PARTITION_KEYS]
    return "/".join([root.rstrip("/"), *parts])


def write_rows(rows: list[dict], output: str) -> list[str]:
    """Append rows to the dataset at `output`, one new file per partition; returns the files written."""
    if not rows:
        return []
    rows_to_table(rows)  # validate every row against the schema before touching storage
    fs, root = resolve(output)
    groups: dict[str, list[dict]] = {}
    for row in rows:
        for key in PARTITION_KEYS:
            if not row.get(key):
                raise ValueError(f"row lacks partition key {key!r}: {row.get('stage')}")
        groups.setdefault(_partition_dir(root, row), []).append(row)
    written = []
    for directory, group in groups.items():
        fs.create_dir(directory, recursive=True)
        table = pa.Table.from_pylist([{k: v for k, v in r.items() if k not in PARTITION_KEYS} for r in group], schema=FILE_SCHEMA)
        name = f"part-{uuid.uuid4().hex}.parquet"
        tmp, final = f"{directory}/.{name}.tmp", f"{directory}/{name}"
        with fs.open_output_stream(tmp) as sink:
            pq.write_table(table, sink, compression="zstd")
        fs.move(tmp, final)
        written.append(final)
    return written


def open_dataset(output: str) -> ds.Dataset:
    """The dataset at `output` with its partition keys as columns; hidden temp files ignored."""
    fs, root = resolve(output)
    return ds.dataset(
        root, filesystem=fs, format="parquet",
        partitioning=ds.partitioning(pa.schema([ROW_SCHEMA.field(k) for k in PARTITION_KEYS]), flavor="hive"),
        schema=ROW_SCHEMA, exclude_invalid_files=False, ignore_prefixes=[".", "_"],
    )


def read_table(output: str) -> pa.Table:
    return open_dataset(output).to_table()
