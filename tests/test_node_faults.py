"""Nodes lost and joining mid-sweep, on a local multi-node Ray cluster with the stand-in measurer.

Each test adds its own GPU nodes to a CPU-only head and removes one while the sweep runs, as a raylet killed
outright (no graceful shutdown). The head checks its nodes' health every second and marks one dead after five
failures (Ray's default: 3 s and 5): the driver learns of the worker's death at once, when its connection closes,
and of its node's some 5 s later, as on a real cluster, only sooner.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import ray
from ray.cluster_utils import Cluster

from farm.data.dataset import read_table
from farm.sweep import NOT_RUN, OK, main, runtime_env

H200 = {"farm.gpu-model": "H200", "standin.gpu-name": "NVIDIA_H200"}
# 2 stages x 50 shapes x 20 repeats of the stand-in's 10 ms: 2000 cells, about 20 s of GPU time on this machine.
PLAN = [
    "--kernels",
    "naive",
    "--sizes",
    ",".join(str(8 * i) for i in range(1, 51)),
    "--repeats",
    "20",
    "--measurer",
    "standin",
    "--flush-every",
    "1",
]
CELLS = 2 * 50 * 20


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            "_system_config": {
                "health_check_period_ms": 1000,
                "health_check_failure_threshold": 5,
                "health_check_initial_delay_ms": 0,
            },
        },
    )
    ray.init(address=c.address, log_to_driver=False, runtime_env=runtime_env())
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture
def gpu_nodes(cluster):
    """Adds H200 nodes of one GPU each; every node it added and the test left is removed afterwards."""
    added = []

    def add():
        node = cluster.add_node(num_cpus=1, num_gpus=1, labels=H200)
        added.append(node)
        return node

    yield add
    for node in added:
        if node in cluster.worker_nodes:
            cluster.remove_node(node, allow_graceful=False)


def sweeping(out: Path, *flags: str) -> tuple[threading.Thread, list[int]]:
    """The sweep on a thread (Ray adds and removes nodes from the main thread only), returning once it has written
    its first rows and two seconds more; the list gets its exit status."""
    status: list[int] = []
    thread = threading.Thread(target=lambda: status.append(main([*PLAN, "--output", str(out), *flags])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 180
    while not list((out / "rows").rglob("*.parquet")):
        assert thread.is_alive() and time.monotonic() < deadline, "the sweep wrote no rows"
        time.sleep(0.05)
    time.sleep(2)
    return thread, status


def test_shard_node_lost_mid_sweep_its_cells_go_to_the_other_gpus_and_a_new_gpu_joins(
    cluster, gpu_nodes, tmp_path, caplog
):
    gpu_nodes()
    doomed = gpu_nodes()
    cluster.wait_for_nodes()
    thread, status = sweeping(tmp_path, "--mode", "shard", "--run-id", "lost")
    cluster.remove_node(doomed, allow_graceful=False)  # its raylet and workers killed outright
    joined = gpu_nodes()
    thread.join(timeout=300)
    assert status == [OK]
    assert "is given up" in caplog.text and "queued cells go to the other" in caplog.text
    # The worker's death came first and was counted against its cells, then taken back once its node was known dead.
    assert "died running" in caplog.text and "its last death is not counted against" in caplog.text
    assert (
        "joined the cluster and takes cells" in caplog.text and "given up: its node" in caplog.text
    )  # log and summary
    got = read_table(str(tmp_path)).to_pylist()
    keys = Counter((r["stage"], r["m"], r["repeat"]) for r in got)
    assert len(keys) == CELLS and set(keys.values()) == {1}  # every cell exactly once
    assert {r["status"] for r in got} == {"ok"}
    by_node = Counter(r["host"] for r in got)
    assert len(by_node) == 3  # the lost node's rows before it went, the survivor's, and the newcomer's
    assert by_node[f"node-{joined.node_id[:8]}"] > 0


def test_replicate_node_lost_mid_sweep_counts_its_cells_not_run(cluster, gpu_nodes, tmp_path, caplog):
    gpu_nodes()
    doomed = gpu_nodes()
    cluster.wait_for_nodes()
    thread, status = sweeping(tmp_path, "--mode", "replicate", "--run-id", "lostrep")
    cluster.remove_node(doomed, allow_graceful=False)
    thread.join(timeout=300)
    assert status == [NOT_RUN]
    assert "is given up" in caplog.text and "cells did not run; run again with --run-id lostrep" in caplog.text
    got = read_table(str(tmp_path)).to_pylist()
    per_gpu = Counter(r["gpu_uuid"] for r in got)
    assert sorted(per_gpu.values())[-1] == CELLS and sorted(per_gpu.values())[0] < CELLS
    assert max(Counter((r["gpu_uuid"], r["stage"], r["m"], r["repeat"]) for r in got).values()) == 1
    runs = {r["gpu_uuid"]: r for r in read_table(str(tmp_path), "runs").to_pylist()}
    lost = min(per_gpu, key=per_gpu.get)
    assert runs[lost]["cells_not_run"] == CELLS - per_gpu[lost] > 0  # the summary and runs table say what did not run
