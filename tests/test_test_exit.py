"""The test run's own exit (tests/conftest.py): where Ray ran in the process, pytest leaves without finalising the
interpreter, and must still exit with its status, so that a failing test can never pass CI."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")


@pytest.mark.parametrize("outcome, status", [("assert True", 0), ("assert False", 1)])
def test_a_run_that_imported_ray_exits_with_pytests_status(tmp_path, outcome, status):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_one.py").write_text(f"import ray\n\n\ndef test_one():\n    {outcome}\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == status, run.stdout + run.stderr
    assert ("1 passed" if status == 0 else "1 failed") in run.stdout  # the report was written before the exit
