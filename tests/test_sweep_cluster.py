"""The sweep driver on a local multi-node Ray cluster with declared GPUs and the stand-in measurer.

Cluster: a CPU-only head, two nodes labelled farm.gpu-model=H200 (2 GPUs and 1 GPU) and
one unlabelled node whose stand-in NVML name is "NVIDIA GeForce RTX 4090".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.dataset as pds
import pytest
import ray
from ray.cluster_utils import Cluster

from farm.cluster.fleet import WorkerSpec, start_workers
from farm.data.dataset import open_dataset, read_table
from farm.data.rows import cell_row, git_commit
from farm.sweep import main, runtime_env

ROOT = Path(__file__).resolve().parent.parent
STANDIN = "standin"  # farm/measure/measurers.py: farm.cluster.standin, no GPU
H200 = {"farm.gpu-model": "H200", "standin.gpu-name": "NVIDIA_H200"}
RTX4090 = {"standin.gpu-name": "NVIDIA_GeForce_RTX_4090"}
# naive, tiled and their baseline cublas_fp32, at two shapes, twice: 12 cells.
PLAN = ["--kernels", "naive,tiled", "--sizes", "64,32x48x16", "--repeats", "2", "--measurer", STANDIN]
CELLS = 12
STAGES = ("naive", "tiled", "cublas_fp32")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    faults = tmp_path_factory.mktemp("standin") / "faults.json"
    faults.write_text("[]")
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1, num_gpus=2, labels=H200)
    c.add_node(num_cpus=1, num_gpus=1, labels=H200)
    c.add_node(num_cpus=1, num_gpus=1, labels=RTX4090)
    # The runtime env the driver gives a cluster it joins (farm/sweep.py), with the stand-in's faults file added.
    shipped = runtime_env()
    ray.init(
        address=c.address,
        log_to_driver=False,
        runtime_env={**shipped, "env_vars": {**shipped["env_vars"], "GEMM_FARM_STANDIN_FAULTS": str(faults)}},
    )
    yield c, faults
    ray.shutdown()
    c.shutdown()


@pytest.fixture
def faults(cluster):
    """Set the stand-in's faults for one test: a list of {"action", "stage", "m", "repeat"}."""
    path = cluster[1]
    for marker in path.parent.glob("faults.json.*.fired"):
        marker.unlink()

    def set_faults(*entries: dict) -> None:
        path.write_text(json.dumps(list(entries)))

    set_faults()
    yield set_faults
    set_faults()


def sweep(out: Path, *flags: str) -> int:
    return main([*PLAN, "--output", str(out), *flags])


def rows(out: Path) -> list[dict]:
    return read_table(str(out)).to_pylist()


def assert_unique_cells(table_rows: list[dict], scope: str) -> None:
    keys = Counter((r[scope], r["stage"], r["m"], r["n"], r["k"], r["repeat"]) for r in table_rows)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]


def the_failed_row(out: Path, stage: str, m: int, repeat: int, status: str) -> dict:
    """The one row of a one-GPU sweep at `out` that is not ok, checked to be that cell's with that status."""
    got = rows(out)
    assert len(got) == CELLS
    assert_unique_cells(got, "gpu_uuid")
    [bad] = [r for r in got if r["status"] != "ok"]
    assert (bad["stage"], bad["m"], bad["repeat"], bad["status"]) == (stage, m, repeat, status)
    return bad


def test_one_worker_per_gpu_pinned_with_its_model(cluster):
    nodes = {n["NodeID"]: n for n in ray.nodes() if n["Resources"].get("GPU")}
    workers = start_workers(WorkerSpec(STANDIN), (), start_timeout_s=120)
    try:
        assert len(workers) == 4 and len({w.uuid for w in workers}) == 4
        assert Counter(w.model for w in workers) == {"H200": 3, "GeForce-RTX-4090": 1}
        for w in workers:  # the stand-in reports the node it really runs on
            assert w.device["host"] == f"node-{w.node.node_id[:8]}"
            assert w.node.node_id in nodes
        assert Counter(w.node.node_id for w in workers) == {i: int(n["Resources"]["GPU"]) for i, n in nodes.items()}
    finally:
        for w in workers:
            ray.kill(w.actor)
    only = start_workers(WorkerSpec(STANDIN), ("geforce-rtx-4090",), start_timeout_s=120)
    try:
        assert [w.model for w in only] == ["GeForce-RTX-4090"]
    finally:
        for w in only:
            ray.kill(w.actor)


def test_replicate_runs_every_cell_on_every_gpu(cluster, faults, tmp_path):
    assert sweep(tmp_path, "--mode", "replicate", "--run-id", "rep") == 0
    got = rows(tmp_path)
    assert Counter(r["gpu_uuid"] for r in got) == dict.fromkeys({r["gpu_uuid"] for r in got}, CELLS)
    assert len({r["gpu_uuid"] for r in got}) == 4
    assert Counter(r["gpu_model"] for r in got) == {"H200": 3 * CELLS, "GeForce-RTX-4090": CELLS}
    assert {r["status"] for r in got} == {"ok"} and {r["run_id"] for r in got} == {"rep"}
    assert {r["plan_cells"] for r in got} == {CELLS}  # what each GPU's progress counts to (the dashboard's bar)
    assert {r["git_commit"] for r in got} == {git_commit()}  # the driver's, passed to the workers in the job's env
    assert_unique_cells(got, "gpu_uuid")
    # Every % has its baseline row on the same GPU, shape and repeat.
    for r in got:
        assert any(
            b["stage"] == "cublas_fp32"
            and (b["gpu_uuid"], b["m"], b["n"], b["k"], b["repeat"])
            == (r["gpu_uuid"], r["m"], r["n"], r["k"], r["repeat"])
            for b in got
        )


def test_shard_splits_a_models_cells_across_its_gpus(cluster, faults, tmp_path):
    assert sweep(tmp_path, "--mode", "shard", "--run-id", "shard") == 0
    got = rows(tmp_path)
    assert Counter(r["gpu_model"] for r in got) == {"H200": CELLS, "GeForce-RTX-4090": CELLS}
    assert_unique_cells(got, "gpu_model")
    assert {r["plan_cells"] for r in got} == {CELLS}  # each model's share: the whole plan, once
    h200_gpus = {r["gpu_uuid"] for r in got if r["gpu_model"] == "H200"}
    assert len(h200_gpus) > 1  # the 12 H200 cells were shared, not all run by one card


def test_a_cell_whose_repeats_disagree_gets_more_up_to_the_plans_most(cluster, faults, tmp_path):
    plan = tmp_path / "adaptive.toml"
    plan.write_text("repeats = 2\nmax_repeats = 4\nsizes = [64]\n")
    faults({"action": "slow", "stage": "naive", "m": 64, "repeat": 1})
    assert sweep(tmp_path / "out", "--plan", str(plan), "--gpus", "GeForce-RTX-4090", "--run-id", "adaptive") == 0
    got = Counter((r["stage"], r["m"]) for r in rows(tmp_path / "out"))
    # naive's two repeats are 5 % apart: two more; tiled's and cublas_fp32's agree: none, nor at the other shape
    assert got == {
        ("naive", 64): 4,
        ("tiled", 64): 2,
        ("cublas_fp32", 64): 2,
        ("naive", 32): 2,
        ("tiled", 32): 2,
        ("cublas_fp32", 32): 2,
    }


def test_resume_skips_cells_already_written(cluster, faults, tmp_path):
    assert sweep(tmp_path, "--gpus", "H200", "--kernels", "naive", "--run-id", "r1") == 0
    first = rows(tmp_path)
    assert len(first) == 3 * 8  # cublas_fp32 and naive cells on 3 GPUs
    # Same run id, one more stage: only that stage's cells run.
    assert sweep(tmp_path, "--gpus", "H200", "--run-id", "r1") == 0
    got = rows(tmp_path)
    assert len(got) == 3 * CELLS
    assert Counter(r["stage"] for r in got if r not in first) == {"tiled": 3 * 4}
    assert_unique_cells(got, "gpu_uuid")
    # Everything done: a third run writes no rows, only its runs rows (each resumed part adds one per GPU).
    before = sorted((tmp_path / "rows").rglob("*.parquet"))
    assert sweep(tmp_path, "--gpus", "H200", "--run-id", "r1") == 0
    assert sorted((tmp_path / "rows").rglob("*.parquet")) == before
    runs = read_table(str(tmp_path), "runs").to_pylist()
    assert len(runs) == 3 * 3 and {r["run_id"] for r in runs} == {"r1"}
    assert sorted(r["cells_ok"] for r in runs) == [0, 0, 0, 4, 4, 4, 8, 8, 8]
    assert sorted(r["cells_resumed"] for r in runs) == [0, 0, 0, 8, 8, 8, 12, 12, 12]


def test_resume_on_a_card_new_to_the_run(cluster, faults, tmp_path, caplog):
    """A run continued on another card of the model (a rented machine): replicate mode warns and measures every
    cell again on the new card; shard mode skips the model's cells the other card already has."""
    from farm.data.dataset import write_rows
    from farm.plan import load_plan
    from kernels.registry import stage_named

    other = {
        "host": "elsewhere",
        "gpu_name": "NVIDIA GeForce RTX 4090",
        "gpu_model": "GeForce-RTX-4090",
        "gpu_uuid": "GPU-another-card",
        "gpu_index": 0,
        "compute_capability": "8.9",
        "arch": "sm_89",
        "sm_count": 128,
    }
    plan = load_plan(None, kernels=["naive", "tiled"], sizes=["64", "32x48x16"], repeats=2)
    earlier = [
        cell_row(other, stage_named(c.stage), c, "moved", "skipped", "measured elsewhere") for c in plan.cells()[:5]
    ]
    write_rows(earlier, str(tmp_path))
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "moved") == 0
    assert "rows from other GeForce-RTX-4090 cards but none from" in caplog.text and "--mode shard" in caplog.text
    assert len(rows(tmp_path)) == 5 + CELLS
    out = tmp_path / "shard"
    write_rows(earlier, str(out))
    caplog.clear()
    assert sweep(out, "--gpus", "GeForce-RTX-4090", "--run-id", "moved", "--mode", "shard") == 0
    assert "none from" not in caplog.text
    assert len(rows(out)) == CELLS
    assert_unique_cells(rows(out), "gpu_model")


def test_worker_killed_mid_sweep_reruns_its_cell(cluster, faults, tmp_path, caplog):
    faults({"action": "die_once", "stage": "naive", "m": 32, "repeat": 0})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "kill") == 0
    assert "died running" in caplog.text and "Cell(stage='naive', m=32" in caplog.text
    got = rows(tmp_path)
    assert len(got) == CELLS and {r["status"] for r in got} == {"ok"}
    assert_unique_cells(got, "gpu_uuid")


def test_worker_killed_in_shard_mode_keeps_every_cell(cluster, faults, tmp_path, caplog):
    faults({"action": "die_once", "stage": "tiled", "m": 64, "repeat": 1})
    assert sweep(tmp_path, "--gpus", "H200", "--mode", "shard", "--run-id", "killshard") == 0
    assert "died running" in caplog.text and "Cell(stage='tiled', m=64" in caplog.text
    got = rows(tmp_path)
    assert len(got) == CELLS and {r["status"] for r in got} == {"ok"}
    assert_unique_cells(got, "gpu_model")


def test_cell_that_always_kills_its_worker_ends_as_error(cluster, faults, tmp_path, caplog):
    faults({"action": "die", "stage": "tiled", "m": 32, "repeat": 1})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "die") == 0
    assert "died 3 times" in the_failed_row(tmp_path, "tiled", 32, 1, "error")["status_reason"]
    # The three deaths counted are those with the cell alone: a death amid gathered results names no culprit.
    for death in (1, 2, 3):
        assert f"died running Cell(stage='tiled', m=32, n=48, k=16, repeat=1) ({death}/3)" in caplog.text


def test_death_amid_gathered_results_runs_each_suspect_alone(cluster, faults, tmp_path, caplog):
    """12 quick cells in one batch: the worker dies with results unsent, so every unfinished cell runs alone
    once (one batch each), the culprit dies alone and is named, and every cell ends with one row."""
    faults({"action": "die_once", "stage": "tiled", "m": 64, "repeat": 1})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "suspects", "--flush-every", "1") == 0
    got = rows(tmp_path)
    assert len(got) == CELLS and {r["status"] for r in got} == {"ok"}
    assert_unique_cells(got, "gpu_uuid")
    assert "died running one of" in caplog.text or "died running Cell(stage='tiled', m=64" in caplog.text


def test_worker_that_fails_to_start_once_is_started_again(cluster, faults, tmp_path, caplog):
    faults({"action": "fail_start_once"})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "startagain") == 0
    assert "failed to start, trying once more" in caplog.text and "its GPU is left out" not in caplog.text
    assert len(rows(tmp_path)) == CELLS


def test_worker_that_never_starts_leaves_its_gpu_out(cluster, faults, tmp_path, caplog):
    faults({"action": "fail_start"})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "nostart") == 2
    assert "failed to start twice, its GPU is left out" in caplog.text


def test_kernel_fault_keeps_error_row_and_restarts_worker(cluster, faults, tmp_path, caplog):
    faults({"action": "fault", "stage": "naive", "m": 64, "repeat": 0})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "fault") == 0
    assert "ILLEGAL_ADDRESS" in the_failed_row(tmp_path, "naive", 64, 0, "error")["status_reason"]
    # A poisoned stand-in fails every later cell: all ok means the worker was restarted.
    assert "restarting the worker" in caplog.text


def test_hanging_cell_times_out_and_sweep_goes_on(cluster, faults, tmp_path):
    faults({"action": "hang", "stage": "tiled", "m": 32, "repeat": 0})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "hang", "--cell-timeout", "3") == 0
    bad = the_failed_row(tmp_path, "tiled", 32, 0, "timeout")
    assert bad["gpu_model"] == "GeForce-RTX-4090" and bad["gpu_uuid"].startswith("GPU-standin")
    assert bad["family"] == "simt_fp32" and bad["baseline"] == "cublas_fp32"


def test_measurer_exception_is_an_error_row(cluster, faults, tmp_path):
    faults({"action": "raise", "stage": "cublas_fp32", "m": 64, "repeat": 1})
    assert sweep(tmp_path, "--gpus", "GeForce-RTX-4090", "--run-id", "raise") == 0
    assert "stand-in raised" in the_failed_row(tmp_path, "cublas_fp32", 64, 1, "error")["status_reason"]


def test_unknown_model_fails_at_start_and_writes_nothing(cluster, faults, tmp_path, caplog):
    out = tmp_path / "ds"
    assert sweep(out, "--gpus", "H200,A100") == 2
    assert "no ready GPU of model A100" in caplog.text
    assert "models present: GeForce-RTX-4090, H200" in caplog.text
    assert out.is_dir() and not any(out.iterdir())  # created and probed before Ray, and nothing written


def test_dataset_readable_with_pyarrow_and_pandas(cluster, faults, tmp_path):
    assert sweep(tmp_path, "--gpus", "H200", "--mode", "shard", "--run-id", "read") == 0
    table = pds.dataset(str(tmp_path / "rows"), format="parquet", partitioning="hive").to_table()
    assert table.num_rows == CELLS and set(table.column("gpu_model").to_pylist()) == {"H200"}
    assert open_dataset(str(tmp_path)).count_rows() == CELLS
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(tmp_path / "rows")
    assert len(frame) == CELLS and set(frame["run_id"].astype(str)) == {"read"}


def test_script_runs_against_the_cluster(cluster, tmp_path):
    """`python farm/sweep.py` as a script (its own driver, shipping the repo to the workers)."""
    env = {**os.environ, "RAY_ADDRESS": cluster[0].address}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "farm" / "sweep.py"),
            *PLAN,
            "--gpus",
            "GeForce-RTX-4090",
            "--output",
            str(tmp_path),
            "--run-id",
            "script",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"rows of run script are in {tmp_path}" in proc.stderr
    assert len(rows(tmp_path)) == CELLS


# 2 stages x 40 shapes x 10 repeats of 10 ms: several seconds on one GPU, long enough to stop the driver midway.
LONG = [
    "--kernels",
    "naive",
    "--sizes",
    ",".join(str(8 * i) for i in range(1, 41)),
    "--repeats",
    "10",
    "--measurer",
    STANDIN,
    "--gpus",
    "GeForce-RTX-4090",
]
LONG_CELLS = 2 * 40 * 10


def start_script(cluster, out: Path, *flags: str) -> subprocess.Popen:
    """`python farm/sweep.py` in its own process, once it has written its first rows file."""
    env = {**os.environ, "RAY_ADDRESS": cluster[0].address}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "farm" / "sweep.py"), *LONG, "--output", str(out), *flags],
        cwd=out,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180
    while not list((out / "rows").rglob("*.parquet")):
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep wrote no rows"
        time.sleep(0.05)
    return proc


def test_driver_killed_outright_loses_at_most_one_flush_interval_and_resumes(cluster, faults, tmp_path):
    proc = start_script(cluster, tmp_path, "--run-id", "killed", "--flush-every", "1")
    time.sleep(1.5)
    killed_at = time.time()
    proc.kill()  # SIGKILL: no clean-up at all
    proc.wait()
    newest = max(f.stat().st_mtime for f in (tmp_path / "rows").rglob("*.parquet"))
    assert killed_at - newest <= 1 + 1.0  # the flush interval, and a second of slack for a loaded CI machine
    written = rows(tmp_path)
    assert 0 < len(written) < LONG_CELLS and not (tmp_path / "runs").exists()
    assert main([*LONG, "--output", str(tmp_path), "--run-id", "killed"]) == 0
    got = rows(tmp_path)
    assert len(got) == LONG_CELLS and {r["status"] for r in got} == {"ok"}
    assert_unique_cells(got, "gpu_uuid")


def test_ray_job_stop_writes_every_finished_row_and_the_runs_rows(cluster, faults, tmp_path):
    proc = start_script(cluster, tmp_path, "--run-id", "stopped", "--flush-every", "1")
    time.sleep(0.5)  # rows arrive that no timed flush has written yet
    proc.send_signal(signal.SIGTERM)  # what `ray job stop` sends
    assert proc.wait(timeout=60) == 130, proc.stderr.read()[-2000:]
    [run] = read_table(str(tmp_path), "runs").to_pylist()
    assert run["interrupted"] and run["run_id"] == "stopped"
    assert len(rows(tmp_path)) == run["cells_ok"] < LONG_CELLS  # nothing it had measured was lost


def test_output_failing_mid_sweep_keeps_every_row_in_the_fallback_and_a_resume_takes_them_back(
    cluster, faults, tmp_path, monkeypatch, caplog
):
    """The output passes its probe, then every write to it fails (a disk that filled up): the rows and the runs
    rows go to the fallback, the exit status says so, and the same --run-id resumes with every row in the output."""
    import farm.data.dataset as dataset

    monkeypatch.setenv("GEMM_FARM_FALLBACK", str(tmp_path / "fallback"))
    out = tmp_path / "ds"
    real = dataset.write_partition_file

    def disk_full(fs, directory, table, archive=False):
        if directory.startswith(str(out)):
            raise OSError(28, "No space left on device")
        return real(fs, directory, table, archive)

    monkeypatch.setattr(dataset, "write_partition_file", disk_full)
    assert sweep(out, "--gpus", "GeForce-RTX-4090", "--run-id", "full") == 3
    assert "No space left on device" in caplog.text and str(tmp_path / "fallback") in caplog.text
    assert not list(out.rglob("*.parquet"))
    monkeypatch.setattr(dataset, "write_partition_file", real)
    assert sweep(out, "--gpus", "GeForce-RTX-4090", "--run-id", "full") == 0
    assert "moved" in caplog.text and "into " + str(out) in caplog.text
    got = rows(out)
    assert len(got) == CELLS and {r["status"] for r in got} == {"ok"}  # measured once, none again
    assert_unique_cells(got, "gpu_uuid")
    assert sorted(r["cells_ok"] for r in read_table(str(out), "runs").to_pylist()) == [0, CELLS]
    assert not list((tmp_path / "fallback").rglob("*.parquet"))


def test_a_plan_past_the_gpu_hour_bound_needs_yes(cluster, faults, tmp_path, caplog):
    assert sweep(tmp_path, "--gpus", "H200", "--max-gpu-hours", "0.0001") == 2
    assert "expected" in caplog.text and "GPU-hours" in caplog.text and "run it with --yes" in caplog.text
    assert not list(tmp_path.rglob("*.parquet"))
    assert sweep(tmp_path, "--gpus", "H200", "--max-gpu-hours", "0.0001", "--yes") == 0
    assert len(rows(tmp_path)) == 3 * CELLS


def test_paired_sweep_measures_both_arms_of_each_cell_in_one_worker_and_resumes_by_pair(cluster, faults, tmp_path):
    """--paired: two runs, RUN-a and RUN-b, a row each per cell and GPU, sharing a pair id, measured by one worker
    (same card) in one measurement of the cell (Measurer.measure_pair: one timestamp, one cell time); a second sweep
    with the run id finds every pair done."""
    assert sweep(tmp_path, "--paired", "--gpus", "GeForce-RTX-4090", "--run-id", "pp") == 0
    got = rows(tmp_path)
    assert Counter(r["run_id"] for r in got) == {"pp-a": CELLS, "pp-b": CELLS}
    assert {r["arm"] for r in got if r["run_id"] == "pp-a"} == {"a"} and {r["status"] for r in got} == {"ok"}
    pairs = {}
    for r in got:
        pairs.setdefault(r["pair"], []).append(r)
    assert len(pairs) == CELLS and all(sorted(x["arm"] for x in p) == ["a", "b"] for p in pairs.values())
    for p in pairs.values():  # one card, one cell, one repeat
        assert len({(x["gpu_uuid"], x["stage"], x["m"], x["repeat"]) for x in p}) == 1
        assert len({(x["timestamp"], x["cell_seconds"], x["warmup_seconds"]) for x in p}) == 1  # one measurement
        assert p[0]["pair"] == f"pp/{p[0]['stage']}/{p[0]['m']}x{p[0]['n']}x{p[0]['k']}/{p[0]['repeat']}"
    runs = read_table(str(tmp_path), "runs").to_pylist()
    assert sorted(r["run_id"] for r in runs) == ["pp-a", "pp-b"]
    assert sweep(tmp_path, "--paired", "--gpus", "GeForce-RTX-4090", "--run-id", "pp") == 0
    assert len(rows(tmp_path)) == 2 * CELLS  # resumed: nothing measured again


def test_a_power_capped_paired_cell_gets_a_second_pair_and_no_other_cell_more(cluster, faults, tmp_path):
    """Adaptive pairs (farm/cluster/repeats.py) through the driver: one pair a cell planned, three at most; the cell
    whose pair rows are power-capped gets a second (its pairs agree: no third), every other cell its one."""
    plan = tmp_path / "paired.toml"
    plan.write_text("max_repeats = 3\npaired = true\n")
    faults({"action": "capped", "stage": "naive", "m": 64})
    flags = ("--plan", str(plan), "--repeats", "1", "--gpus", "GeForce-RTX-4090", "--run-id", "cap")
    assert sweep(tmp_path / "out", *flags) == 0
    got = rows(tmp_path / "out")
    per_arm = Counter((r["stage"], r["m"]) for r in got if r["run_id"] == "cap-a")
    assert per_arm == {(stage, m): 2 if (stage, m) == ("naive", 64) else 1 for stage in STAGES for m in (64, 32)}
    assert Counter(r["run_id"] for r in got) == {"cap-a": 7, "cap-b": 7}
    assert {r["throttle_power"] for r in got if (r["stage"], r["m"]) == ("naive", 64)} == {True}
    assert sorted({r["pair"] for r in got if (r["stage"], r["m"]) == ("naive", 64)}) == [
        "cap/naive/64x64x64/0",
        "cap/naive/64x64x64/1",
    ]


def test_base_kernels_arm_runs_the_other_trees_stages_and_skips_what_it_lacks(cluster, faults, tmp_path):
    """--base-kernels DIR: arm b's kernel stages come from DIR; a stage DIR lacks is skipped on arm b, with the reason,
    while the baselines run on both arms."""
    base = tmp_path / "base"
    base.mkdir()
    import shutil

    shutil.copytree(ROOT / "kernels" / "simt_fp32", base / "simt_fp32")
    stages_py = base / "simt_fp32" / "stages.py"  # the base commit had no `tiled` stage
    text = stages_py.read_text()
    assert '        "tiled",\n' in text
    stages_py.write_text(text.replace('        "tiled",\n', '        "tiled_renamed",\n'))
    out = tmp_path / "out"
    assert sweep(out, "--base-kernels", str(base), "--gpus", "GeForce-RTX-4090", "--run-id", "bk") == 0
    got = rows(out)
    b = [r for r in got if r["run_id"] == "bk-b"]
    assert len(b) == CELLS and len([r for r in got if r["run_id"] == "bk-a"]) == CELLS
    assert {r["status"] for r in b if r["stage"] == "tiled"} == {"skipped"}
    assert all("base-kernels" in r["status_reason"] for r in b if r["stage"] == "tiled")
    assert {r["status"] for r in b if r["stage"] != "tiled"} == {"ok"}
