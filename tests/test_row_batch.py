"""Rows as Arrow record batches (what workers hand back) and the driver's buffered writes of them."""

import pickle

import pyarrow as pa
import pytest

from farm.data.dataset import read_table
from farm.data.row_batch import RowBatch, row_batches
from farm.data.schema import FILE_SCHEMA, TELEMETRY_FILE_SCHEMA, TELEMETRY_KEY
from farm.data.writer import BufferedWriter
from tests.test_dataset import sample_row

SAMPLES = [
    {
        "series": "kernel",
        "t_ms": 10.0 * i,
        "sm_clock_mhz": 1980,
        "mem_clock_mhz": 3201,
        "temp_c": 40,
        "power_w": 512.5,
        "reasons": 0,
    }
    for i in range(4)
]


def test_rows_keep_their_order_in_one_batch_per_run_of_a_partition():
    rows = [sample_row("naive"), sample_row("tiled"), sample_row("naive", run="r2"), sample_row("regblock")]
    batches = row_batches(rows)
    assert [b.partition for b in batches] == [("H200", "r1"), ("H200", "r2"), ("H200", "r1")]
    assert [b.rows.column("stage").to_pylist() for b in batches] == [["naive", "tiled"], ["naive"], ["regblock"]]
    assert all(b.rows.schema.equals(FILE_SCHEMA, check_metadata=True) and b.telemetry is None for b in batches)


def test_a_batch_pickles_as_arrow_messages_and_reads_back_whole():
    [batch] = row_batches([{**sample_row(), TELEMETRY_KEY: SAMPLES}, sample_row("tiled")])
    back = pickle.loads(pickle.dumps(batch, protocol=5))
    assert isinstance(back, RowBatch) and back.partition == ("H200", "r1")
    assert back.rows.equals(batch.rows) and back.telemetry.equals(batch.telemetry)
    assert back.telemetry.schema.equals(TELEMETRY_FILE_SCHEMA) and back.telemetry.num_rows == 4
    assert back.telemetry.column("stage").to_pylist() == ["naive"] * 4  # the join keys came from the row
    assert back.rows.column("samples_ms").to_pylist()[0] == [1.0, 1.1, 0.9]


def test_bad_rows_fail_before_any_batch_is_made():
    with pytest.raises(ValueError, match="not_a_column"):
        row_batches([sample_row(), {**sample_row(), "not_a_column": 1}])
    with pytest.raises(ValueError, match="run_id"):
        row_batches([{**sample_row(), "run_id": ""}])
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        row_batches([{**sample_row(), "median_ms": "fast"}])
    assert row_batches([]) == []


def test_writer_writes_one_file_per_partition_and_table_per_flush(tmp_path):
    writer = BufferedWriter(str(tmp_path), flush_s=3600)
    for i in range(5):  # five worker batches of one partition, one of another
        writer.add(row_batches([{**sample_row(repeat=i), TELEMETRY_KEY: SAMPLES}, sample_row("tiled", repeat=i)])[0])
    writer.add(row_batches([sample_row(model="H100")])[0])
    assert writer.files == [] and not list(tmp_path.iterdir())  # nothing written before a flush
    writer.flush()
    assert writer.flushes == 1 and len(writer.files) == 3  # H200 rows, H200 telemetry, H100 rows
    assert read_table(str(tmp_path)).num_rows == 11 and read_table(str(tmp_path), "telemetry").num_rows == 20
    writer.flush()  # nothing waiting: no file, no flush counted
    assert writer.flushes == 1 and len(writer.files) == 3


def test_writer_flushes_early_when_rows_or_samples_reach_their_bound(tmp_path):
    by_rows = BufferedWriter(str(tmp_path / "rows"), flush_s=3600, max_rows=4)
    for i in range(5):
        by_rows.add(row_batches([sample_row(repeat=i)])[0])
    assert by_rows.flushes == 1 and read_table(str(tmp_path / "rows")).num_rows == 4
    by_samples = BufferedWriter(str(tmp_path / "samples"), flush_s=3600, max_samples=6)
    by_samples.add(row_batches([{**sample_row(), TELEMETRY_KEY: SAMPLES}])[0])
    assert by_samples.flushes == 0
    by_samples.add(row_batches([{**sample_row(repeat=1), TELEMETRY_KEY: SAMPLES}])[0])
    assert by_samples.flushes == 1 and read_table(str(tmp_path / "samples"), "telemetry").num_rows == 8
