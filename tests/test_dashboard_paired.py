"""The dashboard's verdicts on paired sweeps (farm/sweep.py --paired, --base-kernels), on synthetic paired rows written
to a temporary dataset: Compare offers a sweep's two arms first and says the pair judged them, every comparison names
its noise model, and the A/A calibration shows the paired design's false-difference rate per family and GPU model
beside the sequential one. CPU only; the rows are test data, never shipped."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard import data, verdicts  # noqa: E402
from dashboard.views import compare, history  # noqa: E402
from farm.analysis import compare as fcompare  # noqa: E402
from farm.cli import main  # noqa: E402
from farm.data.dataset import write_rows  # noqa: E402
from farm.data.schema import ROW_SCHEMA  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")
START = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
STAGES = ["naive", "tiled", "regblock", "bank_pad_vec", "ldg_vec", "multibuf", "splitk", "supertile"]
SIZES = [(s, s, s) for s in (512, 768, 1024, 1280, 1536, 1792, 2048, 2304)]
MODEL = "H100-80GB-HBM3"


def cell_row(run: str, stage: str, shape: tuple[int, int, int], repeat: int, ms: float, when: dt.datetime) -> dict:
    """One timed row as a sweep writes it (15 per-batch samples around `ms`)."""
    m, n, k = shape
    return {
        "run_id": run,
        "repeat": repeat,
        "timestamp": when,
        "host": "node-a",
        "gpu_model": MODEL,
        "gpu_uuid": "GPU-1a2b3c4d-0000-0000-0000-000000000001",
        "family": "simt_fp32",
        "stage": stage,
        "m": m,
        "n": n,
        "k": k,
        "dtype": "fp32",
        "timing_mode": "hot",
        "status": "ok",
        "verified": True,
        "median_ms": ms,
        "samples_ms": [ms] * 15,
        "flops": 2 * m * n * k,
        "git_commit": "c0ffee1",
        "driver_version": "580.95.05",
        "launch_method": "cuda_graph",
        "baseline": "cublas_fp32",
        "baseline_launch_method": "cuda_graph",
        "sm_clock_median_mhz": 1980.0,
        "mem_clock_median_mhz": 2619.0,
    }


def cells():
    """Every (stage, shape) cell with its level: 0.4-0.9 ms, one duration band."""
    for i, stage in enumerate(STAGES):
        for j, shape in enumerate(SIZES):
            yield stage, shape, 0.4 + 0.5 * (i * len(SIZES) + j) / (len(STAGES) * len(SIZES))


def paired_sweep(sweep: str, rng: random.Random, day: int, step: float = 0.0, changed: tuple[str, ...] = ()) -> list:
    """A paired sweep's arms SWEEP-a and SWEEP-b, one pair a cell: each cell draws a heavy-tailed 1 % process effect
    (a t with 3 df) that both arms share, each arm 0.3 % of its own. The stages in `changed` run other code on arm b
    (another code_sha256: a --base-kernels sweep), slower by `step`; every other stage is the same code on both arms."""
    out = []
    for c, (stage, shape, ms) in enumerate(cells()):
        shared = ms * math.exp(0.01 * rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 1 / 1.5)))
        pair = f"{sweep}/{stage}/{'x'.join(map(str, shape))}/0"
        for arm in ("a", "b"):
            other = arm == "b" and stage in changed
            when = START + dt.timedelta(days=day, seconds=2 * c + (arm == "b"))
            row = cell_row(f"{sweep}-{arm}", stage, shape, 0, shared * math.exp(rng.gauss(0, 0.003)), when)
            row["median_ms"] *= 1 + (step if other else 0.0)
            row.update(
                samples_ms=[row["median_ms"]] * 15,
                pair=pair,
                arm=arm,
                code_sha256=hashlib.sha256(f"{'base' if other else 'k'}-{stage}".encode()).hexdigest(),
            )
            out.append(row)
    return out


def sequential_run(run: str, rng: random.Random, day: int) -> list:
    """A run without pairs, two repeats a cell: the repeats' A/A."""
    level = {(stage, shape): ms * math.exp(rng.gauss(0, 0.003)) for stage, shape, ms in cells()}
    return [
        cell_row(run, stage, shape, r, ms * math.exp(rng.gauss(0, 0.002)), START + dt.timedelta(days=day, minutes=r))
        for (stage, shape), ms in level.items()
        for r in (0, 1)
    ]


@pytest.fixture(scope="module")
def paired_dataset(tmp_path_factory) -> Path:
    """Two paired A/A sweeps (p0, p1), two sequential runs of the same commit between them (s0, s1), and a
    --base-kernels sweep (pb, newest) whose stage `multibuf` is 3 % slower on arm b (the base tree)."""
    rng = random.Random(26)
    rows = [
        *paired_sweep("p0", rng, 0),
        *sequential_run("s0", rng, 1),
        *sequential_run("s1", rng, 2),
        *paired_sweep("p1", rng, 3),
        *paired_sweep("pb", rng, 4, step=0.03, changed=("multibuf",)),
    ]
    path = tmp_path_factory.mktemp("paired") / "paired"
    write_rows([{f.name: r.get(f.name) for f in ROW_SCHEMA} for r in rows], str(path))
    return path


def test_paired_sweeps_are_found_and_offered_first(paired_dataset):
    rows = data.load_uncached([str(paired_dataset)]).rows
    assert verdicts.paired_sweeps(rows) == [("paired", f"{s}-a", f"{s}-b") for s in ("pb", "p1", "p0")]
    assert verdicts.best_run_pair(rows) == (("paired", "pb-b"), ("paired", "pb-a")), "A: the base arm; B: this tree"
    assert verdicts.paired_sweeps(rows[rows["pair"].isna()]) == []
    assert verdicts.best_run_pair(rows[rows["pair"].isna()]) == (("paired", "s0"), ("paired", "s1"))
    assert "two arms of one paired sweep" in verdicts.sweep_of(rows, ("paired", "p1-b"), ("paired", "p1-a"))
    assert "against another run it is judged as a sequential run" in verdicts.sweep_of(
        rows, ("paired", "s0"), ("paired", "p1-a")
    )
    assert verdicts.sweep_of(rows, ("paired", "s0"), ("paired", "s0")) == ""


def test_a_comparison_names_its_noise_model(paired_dataset):
    rows = data.load_uncached([str(paired_dataset)]).rows
    cells_n = len(STAGES) * len(SIZES)
    arms = compare.compare(rows, "run", "pb-b · paired", "pb-a · paired", 0.02)
    assert set(arms["design"]) == {"paired"} and len(arms) == cells_n
    assert verdicts.design_line(arms) == f"Noise model: {cells_n} cells {fcompare.DESIGNS['paired']}."
    base = arms[arms["stage"] == "multibuf"]
    assert (base["verdict"] == "FASTER").mean() >= 0.9, "this tree 3 % faster than the base, judged per pair"
    assert base["differed"].str.contains("code").all()
    same = arms[arms["stage"] != "multibuf"]
    assert (same["verdict"] == "SAME").mean() >= 0.9, "the unchanged stages: identical code, an A/A inside the sweep"
    sequential = compare.compare(rows, "run", "s0 · paired", "p1-a · paired", 0.02)
    assert set(sequential["design"]) == {"runs"} and "cells sequential runs" in verdicts.design_line(sequential)


def test_calibration_shows_the_paired_rate_beside_the_repeats(paired_dataset, capsys):
    rows = data.load_uncached([str(paired_dataset)]).rows
    cal = verdicts.calibration(rows, 0.02).set_index("design")
    assert list(cal.index) == list(verdicts.CALIBRATIONS.values()), "the designs of one family side by side"
    assert set(cal["family"]) == {"simt_fp32"} and set(cal["gpu_model"]) == {MODEL}
    paired, repeats = cal.loc[verdicts.CALIBRATIONS["paired"]], cal.loc[verdicts.CALIBRATIONS["repeats"]]
    cells_n = len(STAGES) * len(SIZES)
    # both A/A sweeps and the base sweep's unchanged stages: its changed stage is no A/A
    assert paired["comparisons"] == 3 * cells_n - len(SIZES)
    assert paired["difference_rate"] <= 0.02 and paired["unclear_rate"] <= 0.15, paired  # 1 % by construction
    assert repeats["comparisons"] == 2 * cells_n  # s0's and s1's one pair of repeats a cell
    assert verdicts.one_commit_run_pairs(rows) == [(("paired", "s0"), ("paired", "s1"))], "no arm of a paired sweep"
    assert cal.loc[verdicts.CALIBRATIONS["runs"], "comparisons"] == cells_n
    # the A/A sweeps' verdicts are `farm compare RUN_ID-a RUN_ID-b --cross-fit`'s, pair for pair
    comps = verdicts.paired_calibration(rows, 0.02, verdicts.compare_records(rows))
    for sweep, mine in (("p1", comps[cells_n - len(SIZES) : 2 * cells_n - len(SIZES)]), ("p0", comps[-cells_n:])):
        assert (
            main(["compare", f"{sweep}-a", f"{sweep}-b", "--data", str(paired_dataset), "--cross-fit", "--json"]) == 0
        )
        cli = json.loads(capsys.readouterr().out)["cells"]
        assert [(c["verdict"], c["design"]) for c in cli] == [(c.verdict, c.design) for c in mine]
    assert main(["compare", "s0", "s1", "--data", str(paired_dataset), "--cross-fit", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["cells"]
    mine = verdicts.sequential_calibration(rows, 0.02, verdicts.compare_records(rows))
    assert [(c["verdict"], c["design"]) for c in cli] == [(c.verdict, c.design) for c in mine]
    alone = rows[rows["run_id"].isin(["p0-a", "p0-b"])]  # one sweep, 32 pairs a half: its tails are unknown
    only = verdicts.calibration(alone, 0.02)
    assert list(only["design"]) == [verdicts.CALIBRATIONS["paired"]] and only["unclear_rate"].iloc[0] == 1.0


def test_calibration_is_cached_on_the_rows_until_they_change(paired_dataset, monkeypatch):
    rows = data.load_uncached([str(paired_dataset)]).rows
    computed = []
    real = verdicts.calibration
    monkeypatch.setattr(verdicts, "calibration", lambda r, tol: computed.append(len(r)) or real(r, tol))
    verdicts._calibration.clear()
    first = verdicts.cached_calibration(rows, 0.02)
    again = verdicts.cached_calibration(
        data.load_uncached([str(paired_dataset)]).rows, 0.02
    )  # the same files, read again
    assert computed == [len(rows)] and first.equals(again)
    fewer = rows[rows["run_id"] != "s1"]  # a filter, a new file, a rewritten one: other rows
    verdicts.cached_calibration(fewer, 0.02)
    verdicts.cached_calibration(rows, 0.01)
    moved = rows.assign(median_ms=rows["median_ms"] * 1.01)
    verdicts.cached_calibration(moved, 0.02)
    assert computed == [len(rows), len(fewer), len(rows), len(rows)]


def test_history_takes_a_paired_sweep_as_one_run_with_two_arms(paired_dataset):
    """A paired sweep is one point of a series: both arms pooled where they ran the same code; where arm b ran the base
    tree's changed stage, arm a alone (the base code is no point in time of this tree's history)."""
    rows = data.load_uncached([str(paired_dataset)]).rows
    changed = history.history(rows[(rows["stage"] == "multibuf") & (rows["m"] == 1024)]).set_index("run_id")
    assert list(changed.index) == ["p0-a", "s0", "s1", "p1-a", "pb-a"], "one point a sweep, in time order"
    assert changed.loc["s0", "arm"] == "" and changed.loc["s0", "code"] == ""
    assert (changed.loc["p1-a", "arm"], changed.loc["p1-a", "rows"]) == ("a, b", 2)
    assert (changed.loc["pb-a", "arm"], changed.loc["pb-a", "rows"]) == ("a", 1)
    assert changed.loc["p1-a", "code"] == changed.loc["pb-a", "code"] and changed["code"].str.count("…").max() == 1
    same = history.history(rows[(rows["stage"] == "tiled") & (rows["m"] == 1024)]).set_index("run_id")
    assert same.loc["pb-a", "arm"] == "a, b" and "pb-b" not in same.index  # a stage the base tree left unchanged


def app(monkeypatch, path: Path) -> AppTest:
    monkeypatch.setenv(data.ENV, str(path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return at


def test_compare_and_reproducibility_pages_show_the_design(paired_dataset, monkeypatch):
    at = app(monkeypatch, paired_dataset)
    at.switch_page("views/compare.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert (at.selectbox(key="cmp_a_run").value, at.selectbox(key="cmp_b_run").value) == (
        "pb-b · paired",
        "pb-a · paired",
    ), "a paired sweep's arms are the comparison offered first"
    assert "two arms of one paired sweep" in at.info[0].value
    captions = " ".join(c.value for c in at.caption)
    assert "Noise model: 64 cells paired" in captions
    table = at.dataframe[-1].value
    assert set(table["design"]) == {"paired"}
    cal = [d.value for d in at.dataframe if "design" in d.value.columns and "difference_rate" in d.value.columns]
    assert set(cal[0]["design"]) == set(verdicts.CALIBRATIONS.values())
    at.checkbox(key="cmp_cross_fit").check().run()
    assert not at.exception and set(at.dataframe[-1].value["design"]) == {"paired"}

    at.switch_page("views/history.py").run()
    assert not at.exception, [e.message for e in at.exception]

    at.switch_page("views/reproducibility.py").run()
    assert not at.exception, [e.message for e in at.exception]
    cal = [d.value for d in at.dataframe if "design" in d.value.columns and "difference_rate" in d.value.columns]
    assert set(cal[0]["design"]) == set(verdicts.CALIBRATIONS.values())
    assert (at.selectbox(key="repro_run_a").value, at.selectbox(key="repro_run_b").value) == (
        ("paired", "pb-b"),
        ("paired", "pb-a"),
    )
    assert "Noise model: 64 cells paired" in " ".join(c.value for c in at.caption)
