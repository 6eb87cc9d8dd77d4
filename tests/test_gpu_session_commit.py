"""`.ci/gpu-session.sh` refuses to run where rows could not name their commit (a device copy has no .git and
GIT_COMMIT unset), instead of writing `git_commit = unknown` rows. CPU only: it stops before anything runs."""

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "gpu-session.sh"


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    shutil.copy(SCRIPT, tmp_path / "gpu-session.sh")  # a directory with no .git above it
    clean = {k: v for k, v in os.environ.items() if k not in ("GIT_COMMIT", "GEMM_FARM_GIT_COMMIT")}
    return subprocess.run(
        ["bash", "gpu-session.sh", "no-such-step"],
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
