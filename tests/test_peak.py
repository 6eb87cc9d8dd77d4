"""The peak table (farm/data/peak.py) against the throughputs NVIDIA publishes, the roofline's intensity, and the
% of peak the dashboard and `farm report` derive from a row."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from farm.data import peak
from farm.measure.compiler import CI_ARCHS

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


@pytest.mark.parametrize("arch", [*CI_ARCHS, "sm_100"])
def test_every_arch_we_compile_for_has_every_precision_with_a_source(arch):
    for dtype in PRECISIONS:
        r = peak.rate(arch, dtype)
        assert r is not None and r.flop > 0 and "https://" in r.source, (arch, dtype)
        assert r.flop & (r.flop - 1) == 0, "FLOP per clock per SM is a power of two"


# (arch, precision, board name, SMs, the clock NVIDIA quotes at (MHz), its published dense TFLOP/s)
PUBLISHED = [
    ("sm_90", "bf16", "NVIDIA H100 80GB HBM3", 132, 1830, 989.4),
    ("sm_90", "fp16", "NVIDIA H100 80GB HBM3", 132, 1830, 989.4),
    ("sm_90", "tf32", "NVIDIA H100 80GB HBM3", 132, 1830, 494.7),
    ("sm_90", "fp32", "NVIDIA H100 80GB HBM3", 132, 1980, 66.9),
    ("sm_90", "fp8_e4m3", "NVIDIA H100 80GB HBM3", 132, 1830, 1978.9),  # dense; 3957.8 with 2:4 sparsity
    ("sm_90", "fp8_e4m3", "NVIDIA H200", 132, 1830, 1978.9),  # its data sheet: 3,958 with sparsity
    ("sm_90", "fp8_e4m3_e5m2", "NVIDIA H100 80GB HBM3", 132, 1830, 1978.9),  # the whitepaper's FP8: E4M3 and E5M2
    ("sm_80", "fp16", "NVIDIA A100-SXM4-80GB", 108, 1410, 312.0),
    ("sm_80", "tf32", "NVIDIA A100-SXM4-80GB", 108, 1410, 156.0),
    ("sm_80", "fp32", "NVIDIA A100-SXM4-80GB", 108, 1410, 19.5),
    ("sm_86", "fp16", "NVIDIA GeForce RTX 3090", 82, 1695, 71.0),  # GeForce: half rate with FP32 accumulate
    ("sm_86", "fp16", "NVIDIA A40", 84, 1740, 149.7),
    ("sm_86", "tf32", "NVIDIA GeForce RTX 3090", 82, 1695, 35.6),
    ("sm_86", "fp32", "NVIDIA GeForce RTX 3090", 82, 1695, 35.6),
    ("sm_89", "fp16", "NVIDIA GeForce RTX 4090", 128, 2520, 165.2),
    ("sm_89", "tf32", "NVIDIA GeForce RTX 4090", 128, 2520, 82.6),
    ("sm_89", "fp32", "NVIDIA GeForce RTX 4090", 128, 2520, 82.6),
    ("sm_120", "bf16", "NVIDIA GeForce RTX 5090", 170, 2407, 209.5),
    ("sm_120", "tf32", "NVIDIA GeForce RTX 5090", 170, 2407, 104.8),
]


@pytest.mark.parametrize("arch,dtype,name,sms,mhz,published", PUBLISHED)
def test_peak_matches_the_published_figure_at_its_clock(arch, dtype, name, sms, mhz, published):
    assert peak.peak_tflops(arch, dtype, sms, mhz, name) == pytest.approx(published, rel=0.01)


def test_no_peak_without_an_entry_or_a_clock():
    assert peak.peak_tflops("sm_75", "fp16", 40, 1590) is None
    assert peak.peak_tflops("sm_90", "fp8", 132, 1980) is None
    assert peak.peak_tflops("sm_89", "fp8_e4m3", 128, 2520) is None  # FP8 known for Hopper alone so far
    assert (
        peak.peak_tflops("sm_90", "fp32", 132, None) is None
        and peak.peak_tflops("sm_90", "fp32", 132, float("nan")) is None
    )
    assert peak.arch_of(None, "10.0") == "sm_100" and peak.arch_of("sm_90", "9.0") == "sm_90"


def test_intensity_counts_each_operand_once_and_fp32_output():
    assert peak.intensity(4096, 4096, 4096, "fp32") == pytest.approx(2 * 4096 / 12)  # (4 + 4 + 4) bytes per element
    assert peak.intensity(4096, 4096, 4096, "bf16") == pytest.approx(2 * 4096 / 8)  # (2 + 2 + 4)
    assert peak.compulsory_bytes(2, 3, 5, "fp16") == (2 * 5 + 5 * 3) * 2 + 2 * 3 * 4


def test_pct_of_peak_of_a_row():
    row = {
        "arch": "sm_90",
        "dtype": "bf16",
        "sm_count": 132,
        "max_sm_clock_mhz": 1980.0,
        "gpu_name": "NVIDIA H200",
        "flops": 2 * 4096**3,
        "median_ms": 0.25,
    }
    tflops = 2 * 4096**3 / 0.25e9
    assert peak.pct_of_peak(row) == pytest.approx(100 * tflops / (4096 * 132 * 1980e6 / 1e12))
    assert peak.pct_of_peak({**row, "max_sm_clock_mhz": None}) is None
    assert peak.bandwidth_tbs("NVIDIA H200") == 4.8 and peak.bandwidth_tbs("NVIDIA GeForce RTX 3050 Laptop GPU") is None


def test_dashboard_peak_columns_and_roofs():
    from dashboard.views import peak as peak_page

    rows = pd.DataFrame(
        [
            {
                "gpu_model": "H200",
                "gpu_name": "NVIDIA H200",
                "arch": "sm_90",
                "compute_capability": "9.0",
                "dtype": d,
                "sm_count": 132,
                "max_sm_clock_mhz": 1980.0,
                "m": 4096,
                "n": 4096,
                "k": 4096,
                "flops": 2 * 4096**3,
                "median_ms": ms,
            }
            for d, ms in (("fp32", 3.0), ("bf16", 0.25))
        ]
    )
    out = peak_page.with_peak(rows)
    assert list(out["pct_of_peak"]) == [pytest.approx(peak.pct_of_peak(r)) for r in rows.to_dict("records")]
    assert list(out["bandwidth_tbs"]) == [4.8, 4.8]
    table = peak_page.peak_table(rows).set_index("dtype")
    assert table.loc["fp32", "ridge_flop_per_byte"] == pytest.approx(table.loc["fp32", "peak_tflops"] / 4.8)
    roofs = peak_page.roofs(table.reset_index(), 1.0, 10_000.0)
    low = roofs[roofs["intensity"] == roofs["intensity"].min()]
    assert list(low["tflops"]) == pytest.approx([4.8, 4.8]), "memory-bound left of the ridge: 4.8 TB/s x 1 FLOP/byte"
    assert list(roofs.groupby("dtype")["tflops"].max()) == pytest.approx(
        list(table["peak_tflops"].reindex(["bf16", "fp32"]))
    )


def test_the_dataset_card_shows_the_table_in_the_code():
    card = (Path(__file__).resolve().parent.parent / "datasets" / "README.md").read_text()
    for arch, rates in peak.RATES.items():
        line = next(x for x in card.splitlines() if x.startswith(f"| {arch} |"))
        cells = [c.strip() for c in line.split("|")[2:6]]
        for cell, dtype in zip(cells, PRECISIONS):
            r = rates[dtype]
            assert cell == (f"{r.flop} (GeForce {r.geforce})" if r.geforce else str(r.flop)), (arch, dtype)
        fp8 = line.split("|")[6].strip()
        assert fp8 == (str(rates["fp8_e4m3"].flop) if "fp8_e4m3" in rates else "-"), arch
        assert rates.get("fp8_e4m3") == rates.get("fp8_e4m3_e5m2"), arch  # one FP8 rate, whatever B's format
