"""Faults met before a cell runs or while rows are written, no Ray cluster needed: bad plans, an output that
cannot take rows (up front or mid-sweep), a Ray address that does not answer, no GPU."""

from __future__ import annotations

import logging
import shutil
import socket
import time
from pathlib import Path

import pyarrow.dataset as pds
import pytest

import farm.data.dataset as dataset
from farm import cli, sweep
from farm.cells import Cell
from farm.cluster import fleet
from farm.cluster.fleet import SweepError, WorkerSpec, start_workers
from farm.data.dataset import read_table
from farm.data.row_batch import row_batches
from farm.data.rows import cell_row
from farm.data.writer import BufferedWriter, OutputError, adopt_fallback, fallback_location, probe_output
from kernels.registry import stage_named

DEVICE = {"gpu_model": "H200", "gpu_uuid": "GPU-1", "gpu_name": "NVIDIA H200", "host": "here"}


@pytest.fixture(autouse=True)
def fallback_here(tmp_path, monkeypatch):
    """Fallback datasets under this test's directory, never the user's home."""
    monkeypatch.setenv("GEMM_FARM_FALLBACK", str(tmp_path / "fallback"))


def batch(m: int, repeat: int = 0):
    return row_batches([cell_row(DEVICE, stage_named("naive"), Cell("naive", m, m, m, repeat), "r1", "ok")])[0]


def test_probe_creates_the_output_and_leaves_nothing(tmp_path):
    out = tmp_path / "a" / "b"
    probe_output(str(out))
    assert out.is_dir() and not any(out.iterdir())


@pytest.mark.parametrize("make", ["file", "under_a_file"])
def test_probe_rejects_an_output_that_cannot_take_a_dataset(tmp_path, make):
    (tmp_path / "f").write_text("not a dataset")
    out = tmp_path / "f" if make == "file" else tmp_path / "f" / "ds"
    with pytest.raises(OutputError, match="existing file" if make == "file" else "cannot write to output"):
        probe_output(str(out))


def test_output_replaced_mid_sweep_sends_rows_to_the_fallback_and_a_resume_takes_them_back(tmp_path, caplog):
    out = tmp_path / "ds"
    writer = BufferedWriter(str(out))
    writer.add(batch(8))
    writer.flush()
    shutil.rmtree(out)
    out.write_text("the path replaced by a file")
    writer.add(batch(16))
    writer.add(batch(32))
    writer.flush()
    writer.add(batch(64))
    writer.flush()  # a later flush goes straight to the fallback
    [fallback] = [f for f in fallback_location(str(out)) if Path(f).exists()]
    assert writer.fallback == fallback and fallback.startswith(str(tmp_path / "fallback"))
    assert f"could not write rows to {out}" in caplog.text and fallback in caplog.text
    assert sorted(r["m"] for r in read_table(fallback).to_pylist()) == [16, 32, 64]
    out.unlink()  # the output works again (the first flush's file went with the directory: a resume re-measures it)
    probe_output(str(out))
    assert len(adopt_fallback(str(out))) == 2  # the two flushes that failed over
    assert sorted(r["m"] for r in read_table(str(out)).to_pylist()) == [16, 32, 64]
    assert not list(Path(fallback).rglob("*.parquet"))


def test_a_write_failing_after_some_partitions_never_writes_a_row_twice(tmp_path, monkeypatch):
    out = str(tmp_path / "ds")
    real = dataset.write_partition_file
    calls = []

    def disk_full_after_one_file(fs, directory, table, archive=False):
        calls.append(directory)
        if directory.startswith(str(tmp_path / "ds")) and len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real(fs, directory, table, archive)

    monkeypatch.setattr(dataset, "write_partition_file", disk_full_after_one_file)
    writer = BufferedWriter(out)
    other = {**DEVICE, "gpu_model": "H100", "gpu_uuid": "GPU-2"}
    writer.add(batch(8))
    writer.add(row_batches([cell_row(other, stage_named("naive"), Cell("naive", 8, 8, 8, 0), "r1", "ok")])[0])
    writer.flush()
    here = read_table(out).num_rows
    there = read_table(writer.fallback).num_rows
    assert (here, there) == (1, 1)  # one partition each: none written twice, none lost


BAD_PLANS = [
    ("measure = 5\n", "measure: Input should be a valid dictionary"),
    ('sizes = ["3000000000x1x1"]\n', "int32"),
    (
        "sizes = [1000000]\n",
        "1000000x1000000x1000000 needs 24001 GB of device memory, more than any GPU the farm knows has",
    ),
    ("[measure]\ntarget_noise = -1\n", "measure.target_noise: Input should be greater than 0"),
    ('[measure]\nmin_samples = "ten"\n', "measure.min_samples: Input should be a valid integer"),
    ("[measure]\nmax_time_s = 0\n", "measure.max_time_s: Input should be greater than 0"),
    ('[measure]\ntelemetry = "yes"\n', "measure.telemetry: Input should be a valid boolean"),
    (
        "[measure]\ntelemetry_interval_s = 0\n",
        "measure.telemetry_interval_s: Input should be greater than or equal to 0.001",
    ),
    ('run_id = "../elsewhere"\n', "run_id: '../elsewhere' is not a safe path component"),
    ('gpus = "H100"\nsizes = [100000]\n', "more than the largest GPU of H100 has (80 GB)"),
]


@pytest.mark.parametrize("text, message", BAD_PLANS)
def test_a_bad_plan_is_one_message_per_problem_exit_2_nothing_written_and_ray_never_started(
    tmp_path, monkeypatch, caplog, text, message
):
    monkeypatch.setattr(sweep, "connect", lambda address: pytest.fail("Ray was started"))
    plan = tmp_path / "plan.toml"
    plan.write_text('kernels = ["naive"]\n' + ("" if "sizes" in text else "sizes = [64]\n") + text)
    out = tmp_path / "ds"
    assert sweep.main(["--plan", str(plan), "--output", str(out)]) == sweep.NOTHING_RAN
    assert message in caplog.text and caplog.text.count("plan error") == 1
    assert not out.exists()


def test_every_problem_of_a_plan_is_listed_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(sweep, "connect", lambda address: pytest.fail("Ray was started"))
    plan = tmp_path / "plan.toml"
    plan.write_text('sizes = [64]\nrepeats = "3"\ncolour = 1\n[measure]\ntarget_noise = -1\ntelemetry = "yes"\n')
    assert sweep.main(["--plan", str(plan), "--output", str(tmp_path / "ds")]) == sweep.NOTHING_RAN
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    lines = record.getMessage().splitlines()[1:]
    assert len(lines) == 4 and [line.strip().split(":")[0] for line in lines] == [
        "repeats",
        "unknown plan field colour; valid",
        "measure.target_noise",
        "measure.telemetry",
    ]


def test_an_existing_file_as_output_is_an_error_before_ray_starts(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(sweep, "connect", lambda address: pytest.fail("Ray was started"))
    out = tmp_path / "results.parquet"
    out.write_text("a file")
    assert sweep.main(["--kernels", "naive", "--sizes", "64", "--output", str(out)]) == sweep.NOTHING_RAN
    assert f"output {out} is an existing file" in caplog.text


def test_a_wrong_address_fails_within_30_s_with_one_clear_message(tmp_path, caplog):
    began = time.monotonic()
    assert (
        sweep.main(["--kernels", "naive", "--sizes", "64", "--output", str(tmp_path), "--address", "127.0.0.1:1"])
        == sweep.NOTHING_RAN
    )
    assert time.monotonic() - began < 30
    assert "no Ray cluster answers at 127.0.0.1:1" in caplog.text


def test_only_the_cluster_ray_start_made_is_joined_unasked(monkeypatch):
    """The address `ray start` leaves in Ray's temp dir, if a Ray answers there; never any Ray found among the
    machine's processes (Ray's address="auto")."""
    import ray._private.utils as ray_utils

    answers = sweep._answers
    monkeypatch.setattr(ray_utils, "read_ray_address", lambda temp_dir=None: "127.0.0.1:6379")
    monkeypatch.setattr(sweep, "_answers", lambda address, timeout_s: None)  # a Ray answers there
    assert sweep._ray_start_address() == "127.0.0.1:6379"
    monkeypatch.setattr(sweep, "_answers", answers)
    monkeypatch.setattr(ray_utils, "read_ray_address", lambda temp_dir=None: "127.0.0.1:1")  # stale: nothing there
    assert sweep._ray_start_address() is None
    monkeypatch.setattr(ray_utils, "read_ray_address", lambda temp_dir=None: None)  # no `ray start` here
    assert sweep._ray_start_address() is None


@pytest.mark.parametrize(
    "own_ray, message",
    [
        (True, "no GPU on this machine: Ray found none"),
        (False, "the Ray cluster has no GPU: none of its 2 alive node(s) declares a GPU resource"),
    ],
)
def test_no_gpu_in_the_cluster_is_one_message(monkeypatch, own_ray, message):
    monkeypatch.setattr(fleet, "gpu_nodes", list)
    monkeypatch.setattr(fleet.ray, "nodes", lambda: [{"Alive": True}, {"Alive": True}, {"Alive": False}])
    with pytest.raises(SweepError) as err:
        start_workers(WorkerSpec("standin"), (), 10, none_here=own_ray)
    assert str(err.value).startswith(message) and "ray status" not in str(err.value)


def test_bench_without_a_gpu_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(
        cli, "_no_gpu", lambda: "CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected"
    )
    assert cli.main(["bench", "--kernels", "naive", "--sizes", "64", "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "needs an NVIDIA GPU and its driver" in err


def test_bench_rejects_a_bad_plan_and_an_output_file(tmp_path, capsys):
    assert cli.main(["bench", "--kernels", "naive", "--sizes", "3000000000x1x1"]) == 2
    assert "int32" in capsys.readouterr().err
    (tmp_path / "f").write_text("")
    assert cli.main(["bench", "--kernels", "naive", "--sizes", "64", "--output", str(tmp_path / "f")]) == 2
    assert "existing file" in capsys.readouterr().err


def test_fallback_dataset_is_a_dataset(tmp_path):
    """What lands in the fallback reads like any dataset (hive partitions, the farm's schema)."""
    out = tmp_path / "ds"
    out.write_text("not a directory")
    writer = BufferedWriter(str(out))
    writer.add(batch(8))
    writer.flush()
    table = pds.dataset(str(Path(writer.fallback) / "rows"), format="parquet", partitioning="hive").to_table()
    assert table.num_rows == 1 and table.column("gpu_model").to_pylist() == ["H200"]


def test_an_address_where_something_else_listens_fails_within_30_s(tmp_path, monkeypatch, caplog):
    """A port that accepts connections but is no Ray (Ray's own ray.init retries for minutes there)."""
    monkeypatch.setattr(sweep, "CONNECT_TIMEOUT_S", 3.0)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        address = f"127.0.0.1:{listening.getsockname()[1]}"
        began = time.monotonic()
        assert (
            sweep.main(["--kernels", "naive", "--sizes", "64", "--output", str(tmp_path), "--address", address])
            == sweep.NOTHING_RAN
        )
    assert time.monotonic() - began < 30
    assert f"no Ray cluster answers at {address} (something listens there, but no gRPC server" in caplog.text
