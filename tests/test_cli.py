"""Bad input to the CLI: one clear error and exit status 2, before any GPU work."""
import subprocess
import sys

import pytest

from farm.cli import main


@pytest.mark.parametrize("argv, message", [
    (["bench", "--sizes", "0"], "dimensions must be positive"),
    (["bench", "--sizes", "-5"], "dimensions must be positive"),
    (["bench", "--sizes", "12.5"], "'12.5' is not an integer"),
    (["bench", "--sizes", "128x64"], "three dimensions"),
    (["bench", "--kernels", "naive,warp_rebalanced", "--sizes", "128"], "unknown kernel warp_rebalanced; valid: cublas_fp32, cublas_tf32"),
    (["bench", "--repeats", "0", "--sizes", "128"], "repeats must be a positive integer"),
    (["compile", "--arch", "sm_30"], "cannot compile for sm_30"),
    (["catalog", "--families", "simt"], "unknown family simt"),
])
def test_bad_input_is_one_clear_error(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "farm", "catalog", "--json"], capture_output=True, text=True, check=True)
    assert '"name": "naive"' in out.stdout
