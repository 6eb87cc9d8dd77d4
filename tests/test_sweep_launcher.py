"""How the farm is launched: the driver's --help, the local Ray it starts by itself, and ray_cluster.yaml through
Ray's own validation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ray._private.label_utils import parse_node_labels_from_yaml_file
from ray.autoscaler._private.util import prepare_config, validate_config

ROOT = Path(__file__).resolve().parent.parent


def test_sweep_help_explains_every_flag():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "farm" / "sweep.py"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    for flag in (
        "--plan",
        "--kernels",
        "--families",
        "--sizes",
        "--repeats",
        "--gpus",
        "--mode",
        "--run-id",
        "--output",
        "--cell-timeout",
        "--start-timeout",
        "--measurer",
        "--address",
    ):
        assert flag in proc.stdout


LOCAL_RAY = """
import sys
sys.path.insert(0, sys.argv[1])
import ray
from farm.sweep import connect
assert connect(None)
@ray.remote(num_cpus=0)
def where():
    import farm.cluster.worker
    return farm.cluster.worker.__file__
print(ray.get(where.remote()))
ray.shutdown()
"""


def test_a_sweep_started_anywhere_starts_its_own_ray_whose_workers_import_the_repo(tmp_path):
    """No RAY_ADDRESS and no cluster on this machine: a Ray of the command's own, started from another
    directory, whose workers import this checkout without a shipped package."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run(
        [sys.executable, "-c", LOCAL_RAY, str(ROOT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[0] == str(ROOT / "farm" / "cluster" / "worker.py")
    assert "Started a local Ray instance" in proc.stderr and "View the dashboard" not in proc.stderr


def _config() -> dict:
    return yaml.safe_load((ROOT / "ray_cluster.yaml").read_text())


def test_cluster_config_passes_ray_validation():
    config = prepare_config(_config())
    validate_config(config)
    assert config["provider"]["type"] == "local"
    assert config["available_node_types"]["local.cluster.node"]["max_workers"] == len(config["provider"]["worker_ips"])
    for command in (config["head_start_ray_commands"][-1], config["worker_start_ray_commands"][-1]):
        assert "--labels-file $HOME/.gemm-farm/ray-labels.yaml" in command and "RAY_AUTH_MODE=token" in command


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    "gpus, labels",
    [
        (["NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"], {"farm.gpu-model": "GeForce-RTX-4090"}),
        (["NVIDIA H100 80GB HBM3"], {"farm.gpu-model": "H100-80GB-HBM3"}),
        (["NVIDIA H200", "NVIDIA GeForce RTX 4090"], {}),  # mixed host: each worker names its GPU from NVML
        ([], {}),  # no GPU (or no nvidia-smi)
    ],
)
def test_setup_writes_a_labels_file_ray_accepts(tmp_path, gpus, labels):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text("#!/bin/sh\n" + "".join(f"echo '{g}'\n" for g in gpus))
    fake.chmod(0o755)
    setup = _config()["setup_commands"][0]
    env = {"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    proc = subprocess.run(["bash", "-c", setup], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert parse_node_labels_from_yaml_file(str(tmp_path / ".gemm-farm" / "ray-labels.yaml")) == labels
