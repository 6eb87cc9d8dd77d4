"""How the farm is launched: the driver's --help, and ray_cluster.yaml through Ray's own validation."""
from __future__ import annotations

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
    proc = subprocess.run([sys.executable, str(ROOT / "farm" / "sweep.py"), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for flag in ("--plan", "--kernels", "--families", "--sizes", "--repeats", "--gpus", "--mode", "--run-id",
                 "--output", "--cell-timeout", "--start-timeout", "--measurer", "--address"):
        assert flag in proc.stdout


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
@pytest.mark.parametrize("gpus, labels", [
    (["NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"], {"farm.gpu-model": "GeForce-RTX-4090"}),
    (["NVIDIA H100 80GB HBM3"], {"farm.gpu-model": "H100-80GB-HBM3"}),
    (["NVIDIA H200", "NVIDIA GeForce RTX 4090"], {}),  # mixed host: each worker names its GPU from NVML
    ([], {}),  # no GPU (or no nvidia-smi)
])
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
