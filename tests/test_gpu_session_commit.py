"""`.ci/gpu-session.sh` refuses to run where rows could not name their commit (a device copy has no .git and
GIT_COMMIT unset), instead of writing `git_commit = unknown` rows, and where a run named for one card (h200-...) would
run on another. CPU only: it stops before anything runs."""

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "gpu-session.sh"


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    shutil.copy(SCRIPT, tmp_path / "gpu-session.sh")  # a directory with no .git above it
    clean = {k: v for k, v in os.environ.items() if k not in ("GIT_COMMIT", "GEMM_FARM_GIT_COMMIT")}
    return subprocess.run(
        ["bash", "gpu-session.sh", "no-such-step", *args],
        cwd=tmp_path,
        env={**clean, "OUT": str(tmp_path / "out"), "GIT_CEILING_DIRECTORIES": str(tmp_path.parent), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_no_commit_and_no_git_is_refused(tmp_path):
    done = _run(tmp_path)
    assert done.returncode == 2
    assert "GIT_COMMIT unset" in done.stderr


def test_a_named_commit_gets_past_the_check(tmp_path):
    done = _run(tmp_path, GIT_COMMIT="abc1234", PATH="/usr/bin:/bin")  # no ray on PATH: stops later, not at the check
    assert "GIT_COMMIT unset" not in done.stderr


def _fake_card(tmp_path: Path, name: str) -> str:
    """A PATH whose nvidia-smi names one card, as the device machine's does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '{name}'\n")
    smi.chmod(0o755)
    return f"{bin_dir}:/usr/bin:/bin"


def test_a_run_named_for_another_card_is_refused(tmp_path):
    done = _run(tmp_path, "h200-llmf8c", GIT_COMMIT="abc1234", PATH=_fake_card(tmp_path, "NVIDIA H100 80GB HBM3"))
    assert done.returncode == 3
    assert "named for an H200, this card is NVIDIA H100 80GB HBM3" in done.stderr


def test_a_run_named_for_this_card_gets_past_the_check(tmp_path):
    done = _run(tmp_path, "h200-llmf8c", GIT_COMMIT="abc1234", PATH=_fake_card(tmp_path, "NVIDIA H200"))
    assert done.returncode != 3
    assert "named for" not in done.stderr
