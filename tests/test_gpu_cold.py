"""On a real GPU, with Nsight Compute: cold mode is cold. The first launch after the flush reads its operands from
DRAM (dram__bytes_read.sum, ncu's caches left alone: --cache-control none), the warm launch before it does not.
Shown for a working set well inside L2 and one near the L2's size, on whatever chip runs the test (H100, H200,
GeForce...). Run with `pytest -m gpu`; skipped without a GPU or without ncu."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

PROBE = Path(__file__).resolve().parent / "gpu_cold_probe.py"


def dram_reads(size: int) -> tuple[list[float], dict]:
    """DRAM bytes read by the warm and the cold launch, and the probe's facts."""
    from farm.measure.ncu import NcuMissing, find_ncu

    try:
        ncu = find_ncu()
    except NcuMissing as exc:
        pytest.skip(str(exc))
    done = subprocess.run(
        [
            ncu,
            "--profile-from-start",
            "off",
            "--cache-control",
            "none",
            "--metrics",
            "dram__bytes_read.sum",
            "--print-units",
            "base",
            "--csv",
            "--kernel-name",
            "regex:naive",
            sys.executable,
            str(PROBE),
            "--size",
            str(size),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    facts = next(
        (json.loads(line[len("PROBE ") :]) for line in done.stdout.splitlines() if line.startswith("PROBE ")), None
    )
    assert done.returncode == 0 and facts, done.stdout[-2000:] + done.stderr[-2000:]
    if "ERR_NVGPUCTRPERM" in done.stdout:
        pytest.skip("this host does not allow performance counters")
    table = "\n".join(line for line in done.stdout.splitlines() if line.startswith('"'))
    values = [
        float(r["Metric Value"].replace(",", ""))
        for r in csv.DictReader(io.StringIO(table))
        if r.get("Metric Name") == "dram__bytes_read.sum"
    ]
    print(
        f"{facts['gpu']}: size {size}, operands {facts['operand_bytes']} B, L2 {facts['l2_bytes']} B, "
        f"flush {facts['flush_bytes']} B, DRAM read warm {values[0]:.0f} B, cold {values[1]:.0f} B"
    )
    return values, facts


@pytest.mark.parametrize("fill", [0.15, 0.8], ids=["inside-L2", "near-L2-size"])
def test_the_first_launch_after_the_flush_reads_its_operands_from_dram(fill):
    import cupy

    l2 = cupy.cuda.runtime.getDeviceProperties(0)["l2CacheSize"]
    size = int((fill * l2 / 8) ** 0.5)  # two FP32 S x S operands fill this share of L2
    (warm, cold), facts = dram_reads(size)
    assert cold >= 0.9 * facts["operand_bytes"], (
        f"cold launch read {cold:.0f} of {facts['operand_bytes']} operand bytes from DRAM"
    )
    if fill < 0.5:
        assert warm <= 0.1 * facts["operand_bytes"], (
            f"warm launch read {warm:.0f} B from DRAM: L2 was not warm, the test proves nothing"
        )
