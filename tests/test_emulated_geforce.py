"""An emulated GeForce fleet in CI: an RTX 3050 Laptop, an RTX 4090 and an RTX 5060 Laptop, each its own node of a
local multi-node Ray, each worker's pynvml answering as its card (farm/cluster/emulated_geforce.py), swept by the
real driver and worker with the stand-in measurer on those cards (EmulatedGpuMeasurer, registered here). The rows
are test data: they go to a temporary directory, never to a shipped dataset.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as pds
import pytest
import ray
from ray.cluster_utils import Cluster

from farm.cells import Cell
from farm.cluster.cost import CostModel, _prior_rate, published_rates
from farm.cluster.emulated_geforce import CARDS
from farm.data.dataset import read_table
from farm.data.peak import pct_of_peak
from farm.data.published import published_rows
from farm.measure import measurers
from farm.measure.cell_timer import FLUSH_L2_MULTIPLE
from farm.measure.device import model_from_name
from farm.sweep import main, runtime_env
from kernels.registry import stage_named

ROOT = Path(__file__).resolve().parent.parent
L3050, D4090, L5060 = (CARDS[f"NVIDIA GeForce RTX {n}"] for n in ("3050 Laptop GPU", "4090", "5060 Laptop GPU"))
# One stage published on each card, one bf16 WMMA stage, one Hopper-only stage; with their cuBLAS baselines.
STAGES = "naive,c_naive,tf32_bt,h_wmma_warptile_bf16,d_wgmma_bf16"
BIG = 16384  # 4 GiB of FP32 buffers: more than a 3.68 GiB laptop has


@pytest.fixture(scope="module")
def fleet_rows(tmp_path_factory):
    """The rows of one cold-mode sweep over the three emulated cards."""
    registry = pytest.MonkeyPatch()
    registry.setattr(measurers, "_MEASURERS", dict(measurers._MEASURERS))  # the name is gone after this module
    measurers.register("emulated-geforce", "farm.cluster.standin:EmulatedGpuMeasurer")
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for card in (L3050, D4090, L5060):
        c.add_node(num_cpus=1, num_gpus=1, labels={"standin.gpu-name": card.nvml_name.replace(" ", "_")})
    ray.init(address=c.address, log_to_driver=False, runtime_env=runtime_env())
    out = tmp_path_factory.mktemp("emulated-geforce")
    try:
        status = main(
            [
                "--kernels",
                STAGES,
                "--sizes",
                f"2048,{BIG}",
                "--repeats",
                "1",
                "--measurer",
                "emulated-geforce",
                "--timing-mode",
                "cold",
                "--run-id",
                "emulated",
                "--output",
                str(out),
            ]
        )
    finally:
        ray.shutdown()
        c.shutdown()
        registry.undo()
    assert status == 0
    return read_table(str(out)).to_pylist()


def _of(rows: list[dict], card) -> list[dict]:
    return [r for r in rows if r["gpu_name"] == card.nvml_name]


def test_every_card_is_its_own_model_with_its_own_facts(fleet_rows):
    for card in (L3050, D4090, L5060):
        rows = _of(fleet_rows, card)
        assert len(rows) == 16  # 5 stages and 3 baselines at 2 sizes
        r = rows[0]
        assert r["gpu_model"] == model_from_name(card.nvml_name)
        assert (r["arch"], r["sm_count"], r["l2_bytes"], r["memory_bytes"]) == (
            card.arch,
            card.sm_count,
            card.l2_bytes,
            card.memory_bytes,
        )


def test_memory_and_architecture_skips_come_with_their_reasons(fleet_rows):
    for card in (L3050, D4090, L5060):
        rows = {(r["stage"], r["m"]): r for r in _of(fleet_rows, card)}
        for m in (2048, BIG):  # walk D needs Hopper on every GeForce
            assert rows[("d_wgmma_bf16", m)]["status"] == "skipped"
            assert "needs sm_90a" in rows[("d_wgmma_bf16", m)]["status_reason"]
        big = [r for (stage, m), r in rows.items() if m == BIG and stage != "d_wgmma_bf16"]
        if card is L3050:  # 4 GiB of buffers on a 3.68 GiB card: skipped before anything is allocated
            assert {r["status"] for r in big} == {"skipped"}
            assert all(
                re.fullmatch(r"needs [4-6]\.\d\d GiB of device memory, 3\.68 GiB free", r["status_reason"]) for r in big
            )
        else:
            assert {r["status"] for r in big} == {"ok"}
        assert {r["status"] for (stage, m), r in rows.items() if m == 2048 and stage != "d_wgmma_bf16"} == {"ok"}


def test_telemetry_says_what_each_card_did_not_report(fleet_rows):
    for card in (L3050, D4090, L5060):
        ok = [r for r in _of(fleet_rows, card) if r["status"] == "ok"]
        assert ok and all(r["telemetry"] and r["telemetry_samples"] > 0 for r in ok)
        # Fields that failed once (3050: memory clock, 4090: temperature) are reported; unsupported ones are named.
        assert {tuple(r["nvml_unreported"]) for r in ok} == {tuple(sorted(card.unsupported))}, card.nvml_name
        assert all((r["power_mean_w"] is None) == ("power_w" in card.unsupported) for r in ok)
        assert all((r["energy_timed_j"] is None) == ("energy_mj" in card.unsupported) for r in ok)


SETTLED = ("clock_settled", "clock_settled_earlier")  # the latter: the cell before ran moments ago


def test_warmup_and_throttle_rules_use_what_each_card_reports(fleet_rows):
    for r in [r for r in _of(fleet_rows, L3050) if r["status"] == "ok"]:  # power-capped under load, clock readable
        assert r["warmup_reason"] in SETTLED and r["throttle_power"] is True and r["throttled_fraction"] > 0
        assert r["clock_event_names"] == ["sw_power_cap"] and r["low_clock_fraction"] == 0.0
    for r in [r for r in _of(fleet_rows, D4090) if r["status"] == "ok"]:
        assert r["warmup_reason"] in SETTLED and r["throttle_power"] is False and r["throttled_fraction"] == 0.0
    for r in [r for r in _of(fleet_rows, L5060) if r["status"] == "ok"]:  # no SM clock, no reasons: nothing to judge
        assert r["warmup_reason"] == "fixed_no_clock" and r["warmup_seconds"] >= 0.5
        assert r["throttle_power"] is None and r["low_clock_fraction"] is None and r["throttled_fraction"] is None
        assert r["sm_clock_median_mhz"] is None and r["mem_clock_median_mhz"] is not None


def test_cold_mode_flushes_each_cards_own_l2(fleet_rows):
    for card in (L3050, D4090, L5060):
        ok = [r for r in _of(fleet_rows, card) if r["status"] == "ok"]
        assert {(r["timing_mode"], r["flush_bytes"]) for r in ok} == {("cold", FLUSH_L2_MULTIPLE * card.l2_bytes)}


def test_baseline_checks_are_sized_for_each_card(fleet_rows):
    checks = {
        (r["gpu_name"], r["m"]): r["verify_reference"]
        for r in fleet_rows
        if r["stage"] == "cublas_fp32" and r["status"] == "ok"
    }
    assert "every element" in checks[(L3050.nvml_name, 2048)]  # 0.15 s of FP64 on the laptop: whole
    assert "every element" in checks[(L5060.nvml_name, 2048)]
    for name in (D4090.nvml_name, L5060.nvml_name):  # 16384^3 in FP64 at 1/64 rate: blocks within the budget
        assert f"of {BIG} rows of C" in checks[(name, BIG)] and "would take est." in checks[(name, BIG)]


# Dense peaks from the cards' facts and the architecture whitepapers' FLOP per clock per SM (farm/data/peak.py):
# RTX 4090 FP32 82.6 and BF16 (FP32 accumulate) 165.2 TFLOPS, as the Ada whitepaper quotes them.
PEAKS = {
    (L3050.nvml_name, "fp32"): 256 * 16 * 1.740e-3,
    (L3050.nvml_name, "bf16"): 512 * 16 * 1.740e-3,
    (L3050.nvml_name, "tf32"): 256 * 16 * 1.740e-3,
    (D4090.nvml_name, "fp32"): 82.575,
    (D4090.nvml_name, "bf16"): 165.15,
    (D4090.nvml_name, "tf32"): 256 * 128 * 2.520e-3,
    (L5060.nvml_name, "fp32"): 256 * 26 * 2.497e-3,
    (L5060.nvml_name, "tf32"): 256 * 26 * 2.497e-3,
    (L5060.nvml_name, "bf16"): 512 * 26 * 2.497e-3,
}


def test_pct_of_peak_on_geforce_rows(fleet_rows):
    ok = [r for r in fleet_rows if r["status"] == "ok"]
    assert {(r["gpu_name"], r["dtype"]) for r in ok} == set(PEAKS)
    for r in ok:
        assert pct_of_peak(r) == pytest.approx(100 * r["tflops"] / PEAKS[(r["gpu_name"], r["dtype"])], rel=1e-3)


def test_published_figures_match_the_cards_they_were_measured_on(fleet_rows):
    models = {r["gpu_model"] for r in fleet_rows}
    published_on = {model_from_name(p["device"]) for p in published_rows()}
    assert published_on == models  # the write-ups' three GPUs, spelled as the farm spells the emulated cards
    for card, stage in ((L3050, "naive"), (D4090, "c_naive"), (L5060, "tf32_bt")):
        model = model_from_name(card.nvml_name)
        [p] = [p for p in published_rows() if p["stage"] == stage]
        rate = 2 * p["m"] * p["n"] * p["k"] / (p["ms"] / 1e3)
        assert published_rates()[(model, stage)] == pytest.approx(rate)
        # A cell is priced from the write-up's time on its own GPU model, and from the data-centre prior elsewhere.
        cost = CostModel({stage: stage_named(stage)})
        for gpu in (model, "H100"):
            cost.seconds(Cell(stage, 4096, 4096, 4096), gpu)
        assert cost._rates[(model, stage)] == pytest.approx(rate)
        assert cost._rates[("H100", stage)] == pytest.approx(_prior_rate(stage_named(stage))) != pytest.approx(rate)


def test_emulated_rows_never_ship():
    stand_in = pc.starts_with(pds.field("gpu_uuid"), "GPU-standin")
    for rows in sorted(ROOT.glob("datasets/*/rows")):
        assert pds.dataset(rows, format="parquet", partitioning="hive").count_rows(filter=stand_in) == 0, rows
