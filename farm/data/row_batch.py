"""Result rows as Arrow record batches: the form workers hand rows back in and the driver buffers them in.

Rows of the rows table (a row per measured cell, with the raw telemetry it carried), or of the profile
table (a profiled cell's Nsight Compute records, a batch per cell): the driver hands either to the same
writer, and counts cells by their outcomes() (a row per cell: its status and its seconds).

A worker turns its rows into RowBatches itself, so the driver never holds a row as a Python
dict: it reads the few columns it counts (farm.cluster.progress), keeps the batches and at a
flush concatenates each partition's into one file (farm.data.writer). A RowBatch pickles as
one Arrow IPC message per table, read back in C++ against the schema the driver already
knows; Arrow's own pickling rebuilds every one of the 91 columns in Python, about 0.6 ms
a batch, which the driver would pay for every batch of every worker.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa

from farm.data.schema import (
    FILE_SCHEMA,
    PARTITION_KEYS,
    PROFILE,
    PROFILE_FILE_SCHEMA,
    PROFILE_SCHEMA,
    ROWS,
    TELEMETRY_FILE_SCHEMA,
    TELEMETRY_JOIN_KEYS,
    TELEMETRY_KEY,
    check_columns,
)

_FILE_SCHEMAS = {ROWS: FILE_SCHEMA, PROFILE: PROFILE_FILE_SCHEMA}
# What the driver counts of each cell (farm.cluster.progress, farm.cluster.repeats): rows-table columns.
OUTCOME = pa.schema(
    [
        FILE_SCHEMA.field(name)
        for name in ("status", "status_reason", "median_ms", "timed_seconds", "cell_seconds", "verify_seconds")
    ]
)


def _read(message: pa.Buffer | None, schema: pa.Schema) -> pa.RecordBatch | None:
    return None if message is None else pa.ipc.read_record_batch(message, schema)


@dataclass(frozen=True)
class RowBatch:
    """Consecutive rows of one partition, in order: `rows` of table `table`'s file schema, the raw telemetry they
    carried. A rows-table batch holds a row per cell; a profile batch, the records of one cell."""

    partition: tuple  # the rows' PARTITION_KEYS values
    rows: pa.RecordBatch
    telemetry: pa.RecordBatch | None  # TELEMETRY_FILE_SCHEMA; None when the rows carried no samples
    table: str = ROWS  # or PROFILE

    def __reduce__(self):
        telemetry = None if self.telemetry is None else self.telemetry.serialize()
        return (_restore, (self.partition, self.rows.serialize(), telemetry, self.table))

    def outcomes(self) -> pa.RecordBatch:
        """A row per cell (OUTCOME's columns): a rows-table batch's own rows; a profiled cell's status (ok where
        any counter was read, with how many, else its records' status and reason), with no seconds."""
        if self.table == ROWS:
            return self.rows
        statuses = self.rows.column("status").to_pylist()
        ok = statuses.count("ok")
        outcome = (
            {"status": "ok", "status_reason": f"{ok} values"}
            if ok
            else {"status": statuses[0], "status_reason": self.rows.column("status_reason")[0].as_py()}
        )
        return pa.RecordBatch.from_pylist([outcome], schema=OUTCOME)


def _restore(partition: tuple, rows: pa.Buffer, telemetry: pa.Buffer | None, table: str) -> RowBatch:
    return RowBatch(partition, _read(rows, _FILE_SCHEMAS[table]), _read(telemetry, TELEMETRY_FILE_SCHEMA), table)


def partition_of(row: dict) -> tuple:
    """The row's PARTITION_KEYS values; ValueError when one is missing or empty."""
    values = tuple(row.get(key) for key in PARTITION_KEYS)
    if not all(values):
        missing = next(key for key, value in zip(PARTITION_KEYS, values) if not value)
        raise ValueError(f"row lacks partition key {missing!r}: {row.get('stage')}")
    return values


def row_batches(rows: list[dict]) -> list[RowBatch]:
    """`rows` (dicts of schema columns, raw telemetry under TELEMETRY_KEY) as RowBatches, in their order: a new
    batch wherever the partition changes. Raises ValueError on a column the schema lacks or a missing partition
    key, and pyarrow's errors on a wrong type, before anything is returned."""
    if not rows:
        return []
    check_columns(rows)
    runs: list[tuple[tuple, list[dict]]] = []
    for row in rows:
        values = partition_of(row)
        if not runs or runs[-1][0] != values:
            runs.append((values, []))
        runs[-1][1].append(row)
    # from_pylist takes the file schema's columns only: the partition keys stay in the directory names.
    return [
        RowBatch(values, pa.RecordBatch.from_pylist(group, schema=FILE_SCHEMA), _telemetry(group))
        for values, group in runs
    ]


def profile_batch(records: list[dict]) -> RowBatch:
    """One profiled cell's records (farm.measure.profiler: a row per kernel and quantity, or one status row) as a
    batch of the profile table. Raises ValueError on a column the table lacks, pyarrow's errors on a wrong type."""
    unknown = {k for r in records for k in r} - set(PROFILE_SCHEMA.names)
    if unknown:
        raise ValueError(f"profile records have columns the schema lacks: {sorted(unknown)}")
    return RowBatch(
        partition_of(records[0]), pa.RecordBatch.from_pylist(records, schema=PROFILE_FILE_SCHEMA), None, PROFILE
    )


def warm_up() -> None:
    """Arrow's first conversion of Python objects imports pandas (for its array-like check), about 0.4 s: a
    worker calls this while it starts, so that its first batch of rows does not pay it."""
    pa.array([0.0])


def _telemetry(rows: list[dict]) -> pa.RecordBatch | None:
    samples = [{**{k: r[k] for k in TELEMETRY_JOIN_KEYS}, **x} for r in rows for x in r.get(TELEMETRY_KEY) or ()]
    return pa.RecordBatch.from_pylist(samples, schema=TELEMETRY_FILE_SCHEMA) if samples else None


def with_constant(batch: RowBatch, name: str, value) -> RowBatch:
    """`batch` with column `name` set to `value` in every row: what the driver knows and the workers do not."""
    i = batch.rows.schema.get_field_index(name)
    column = pa.repeat(pa.scalar(value, batch.rows.schema.field(i).type), batch.rows.num_rows)
    return replace(batch, rows=batch.rows.set_column(i, name, column))
