"""Verdicts on synthetic series of known noise (repeat level and run level), change points on synthetic and shipped
series, attribution, comparing across two dataset paths, and bad input."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from farm.analysis import changepoints, compare, plant
from farm.analysis.noise import NoiseModel
from farm.cli import main

DATASETS = Path(__file__).resolve().parent.parent / "datasets"
SIZES = [(s, s, s) for s in (256, 512, 1024, 2048, 4096)] + [(2048, 2048, 2080)]


def run_rows(
    run: str,
    rng: random.Random,
    cells: int = 60,
    repeats: int = 3,
    repeat_sd: float = 0.004,
    run_sd: float = 0.003,
    within_sd: float = 0.005,
    step: float = 0.0,
    commit: str = "c0",
    run_effects: dict | None = None,
    **extra,
) -> list[dict]:
    """One run of `cells` cells (all one family, 0.3-1 ms) on one card: each cell's log time is its own level plus a
    run effect (sd run_sd, shared by the run's repeats of the cell), plus a repeat effect (sd repeat_sd), and each of
    its 15 batch samples scatters around that by within_sd; `step` slows every cell by that fraction."""
    rows = []
    for c in range(cells):
        base = 0.35 + 0.6 * (c / cells)
        level = base * math.exp(rng.gauss(0, run_sd)) * (1 + step)
        if run_effects is not None:
            run_effects[c] = level
        for r in range(repeats):
            rep = level * math.exp(rng.gauss(0, repeat_sd))
            samples = [rep * (1 + rng.gauss(0, within_sd)) for _ in range(15)]
            m, n, k = SIZES[c % len(SIZES)]
            rows.append(
                {
                    "run_id": run,
                    "repeat": r,
                    "gpu_model": "H100-80GB-HBM3",
                    "gpu_uuid": "GPU-aaaa0001",
                    "family": "hopper_d",
                    "stage": f"d_stage{c // len(SIZES)}",
                    "m": m,
                    "n": n,
                    "k": k,
                    "timing_mode": "hot",
                    "status": "ok",
                    "samples_ms": samples,
                    "median_ms": sorted(samples)[7],
                    "git_commit": commit,
                    "driver_version": "580.1",
                    "sm_clock_median_mhz": 1980.0,
                    "mem_clock_median_mhz": 2619.0,
                    **extra,
                }
            )
    return rows


def history_runs(seed: int, runs: int = 4, **kw) -> list[dict]:
    """An A/A history: `runs` runs of one commit."""
    rng = random.Random(seed)
    return [r for i in range(runs) for r in run_rows(f"h{i}", rng, **kw)]


@pytest.mark.parametrize(
    "repeat_sd,run_sd,max_unclear",
    [
        (0.002, 0.001, 0.15),  # the shipped data's unthrottled cells: repeats 0.1-0.5 %, runs under 0.1 % apart
        (
            0.004,
            0.003,
            1.0,
        ),  # noisier (power-capped tensor-core cells): still no false differences, but rarely SAME within 1 %
    ],
)
def test_aa_false_differences_at_most_one_percent(repeat_sd, run_sd, max_unclear):
    comps = []
    for seed in range(5):
        rows = history_runs(seed, runs=4, repeat_sd=repeat_sd, run_sd=run_sd)
        model = NoiseModel.learn(rows)
        for a, b in (("h0", "h1"), ("h2", "h3")):
            comps += compare.compare_runs(rows, a, b, model=model)
    s = compare.summary(comps)
    assert s["comparisons"] == 600
    assert s["difference_rate"] <= 0.01, s
    assert s["unclear_rate"] <= max_unclear, s


def test_noise_model_learns_repeat_and_run_noise():
    rows = history_runs(1, runs=6, cells=90, repeat_sd=0.004, run_sd=0.003)
    noise = NoiseModel.learn(rows).lookup(rows[0])
    assert noise.repeat_source.startswith("stage:") and noise.run_source.startswith("stage:")
    assert math.sqrt(noise.repeat_var) == pytest.approx(0.004, rel=0.35)  # a stage's few cells: a rough estimate
    assert math.sqrt(noise.run_var) == pytest.approx(0.003, rel=0.6)
    family = next(c for c in NoiseModel.learn(rows).classes() if c["class"].startswith("family"))
    assert family["repeat_sd"] == pytest.approx(0.0043, rel=0.1)  # repeats 0.4 %, plus their medians' own noise
    assert family["run_sd"] == pytest.approx(0.003, rel=0.15)
    prior = NoiseModel().lookup(rows[0])
    assert not prior.learned and prior.run_source == "prior"


def test_a_three_percent_step_is_detected_at_least_90_percent():
    detected = total = 0
    for seed in range(5):
        rng = random.Random(100 + seed)
        history = history_runs(seed, runs=4)
        before = run_rows("a", rng, commit="c1")
        after = run_rows("b", rng, commit="c2", step=0.03)
        comps = compare.compare_rows(before, after, model=NoiseModel.learn(history + before + after))
        detected += sum(c.verdict == "SLOWER" for c in comps)
        total += len(comps)
        assert not any(c.verdict == "FASTER" for c in comps)
    assert detected / total >= 0.9, detected / total


def test_planted_slowdowns_scale_samples_and_detection_grows_with_size():
    rows = history_runs(3, runs=2)
    a = [r for r in rows if r["run_id"] == "h0"]
    b = [r for r in rows if r["run_id"] == "h1"]
    slowed = plant.planted(b, 0.05)
    assert (
        slowed[0]["samples_ms"][3] == pytest.approx(b[0]["samples_ms"][3] * 1.05)
        and b[0]["median_ms"] != slowed[0]["median_ms"]
    )
    table = plant.detection(a, b, [0.01, 0.03, 0.05], model=NoiseModel.learn(history_runs(4, runs=4) + rows))
    assert [t["planted_pct"] for t in table] == [0, 1, 3, 5]
    assert table[0]["false_difference"] <= 0.02 and table[0]["detected"] is None
    assert table[2]["detected"] >= 0.9 and table[3]["detected"] == 1.0
    assert table[1]["detected"] <= table[2]["detected"] <= table[3]["detected"]


def test_small_samples_and_bad_input_give_unclear_with_a_reason():
    rows = run_rows("a", random.Random(0), cells=1, repeats=1)
    other = run_rows("b", random.Random(1), cells=1, repeats=1)
    one = compare.compare_sides(("c",), rows, other)  # one repeat a side, nothing learned: noise unknown
    assert one.verdict == "UNCLEAR" and "no A/A history" in one.reason
    learned = compare.compare_sides(("c",), rows, other, model=NoiseModel.learn(history_runs(0, runs=3)))
    assert learned.verdict != "UNCLEAR" or not learned.reason
    empty = compare.compare_sides(("c",), rows, [{**other[0], "samples_ms": []}])
    assert empty.verdict == "UNCLEAR" and empty.reason == "side B has no timed rows with samples"
    assert compare.compare_rows(rows, [{**other[0], "stage": "elsewhere"}]) == []


def test_a_slower_cell_on_another_card_at_a_lower_clock_says_so_and_equal_clocks_explain_it():
    rng = random.Random(5)
    a = run_rows("a", rng, cells=5)
    # the same code on another card held at 10 % lower SM clock: 10 % slower, all of it the clock
    b = [
        {
            **r,
            "gpu_uuid": "GPU-bbbb0002",
            "sm_clock_median_mhz": 1800.0,
            "throttle_power": True,
            "median_ms": r["median_ms"] * 1.1,
            "samples_ms": [x * 1.1 for x in r["samples_ms"]],
        }
        for r in run_rows("b", rng, cells=5)
    ]
    model = NoiseModel.learn(history_runs(0, runs=3))
    plain = compare.compare_rows(a, b, model=model)
    assert {c.verdict for c in plain} == {"SLOWER"} and all(c.confounded for c in plain)
    assert any(t.startswith("card …aaaa0001 → …bbbb0002") for t in plain[0].context)
    assert any("SM clock 1980 → 1800 MHz (-9.1 %)" in t for t in plain[0].context)
    assert any(t.startswith("power cap A 0/3 rows, B 3/3") for t in plain[0].context)
    scaled = compare.compare_rows(a, b, model=model, equal_clocks=True)
    assert {c.verdict for c in scaled} <= {"SAME", "UNCLEAR"} and "at equal clocks" in scaled[0].reason
    swinging = [
        {**r, "sm_clock_min_mhz": 1560.0, "sm_clock_max_mhz": 1965.0} for r in b
    ]  # a power cap swinging the clock
    assert (
        "the SM clock moved by up to 22 % within a timing window"
        in compare.compare_rows(a, swinging, model=model, equal_clocks=True)[0].reason
    )
    other_memory = [{**r, "mem_clock_median_mhz": 1593.0} for r in b]
    refused = compare.compare_rows(a, other_memory, model=model, equal_clocks=True)
    assert "not at equal clocks: memory clocks differ" in refused[0].reason and refused[0].verdict == "SLOWER"


def series_runs(levels: list[float], seed: int, card_change_at: int | None = None) -> list[list[dict]]:
    rng = random.Random(seed)
    out = []
    for i, level in enumerate(levels):
        card = "GPU-bbbb0002" if card_change_at is not None and i >= card_change_at else "GPU-aaaa0001"
        rows = run_rows(f"r{i}", rng, cells=1, commit=f"c{i}", step=level - 1)
        out.append([{**r, "gpu_uuid": card} for r in rows])
    return out


def test_change_points_find_a_three_percent_step_once_where_it_happens():
    model = NoiseModel.learn(history_runs(0, runs=4))
    found = 0
    for seed in range(20):
        steps = changepoints.steps(series_runs([1.0] * 6 + [1.03] * 6, seed), model, tol=0.01)
        assert len(steps) <= 1
        if steps and steps[0].run == 6 and steps[0].verdict == "SLOWER" and not steps[0].environment:
            found += 1
    assert found >= 18  # 90 %


def test_change_points_on_noise_alone_find_nothing_and_a_card_change_is_environment():
    model = NoiseModel.learn(history_runs(0, runs=4))
    false = sum(len(changepoints.steps(series_runs([1.0] * 12, seed), model, tol=0.01)) for seed in range(100))
    assert false <= 1
    steps = changepoints.steps(series_runs([1.0] * 4 + [1.08] * 4, 1, card_change_at=4), model, tol=0.01)
    assert [s.run for s in steps] == [4] and steps[0].environment == ("card …aaaa0001 → …bbbb0002",)


def test_step_fit_is_exact_on_a_clean_two_step_series():
    y = [0.0] * 5 + [0.05] * 5 + [0.02] * 5
    assert changepoints.step_fit(y, [1e-6] * 15) == [5, 10]
    assert changepoints.step_fit([0.0, 0.001, -0.001], [1e-4] * 3) == []


def test_change_points_on_the_shipped_series_mark_card_changes_as_environment(tmp_path):
    """A step across a card change is no regression (the History page once marked one so): h_wmma_pipe_bf16
    8192^3, +25.8 % between two H200 cards, from run walkC (the archived h200-ladders, read beside the shipped
    datasets) to h200-ref3."""
    import tarfile

    pd = pytest.importorskip("pandas")
    from dashboard import data
    from dashboard.views import history

    with tarfile.open(DATASETS / "archive" / "schema2.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    shipped = sorted(str(p) for p in [*DATASETS.iterdir(), *tmp_path.iterdir()] if p.is_dir() and p.name != "archive")
    hist = history.history(data.load_uncached(shipped).rows)
    marked = history.changes(hist)
    pipe = marked[(marked["stage"] == "h_wmma_pipe_bf16") & (marked["m"] == 8192)]
    assert len(pipe) == 1 and pipe["diff_pct"].iloc[0] == pytest.approx(25.8, abs=1)
    assert (pipe["prev_run"].iloc[0], pipe["run_id"].iloc[0]) == ("walkC · h200-ladders", "h200-ref3")
    assert not pipe["change"].iloc[0] and pipe["environment"].iloc[0].startswith("card ")
    aa = marked["dataset"] == "h100-aa"
    assert (marked.loc[~aa, "environment"] != "").all(), "every other step in the shipped data crosses a card change"
    # the H100 A/A pair (identical code, one card): 7 of its 316 series step between the runs, 2 with a clock change
    # named; 5 moved beyond the run noise learned over all of them with nothing else differing
    # (triton_fp16 1024^3 +18 %, regblock 1024^3 -4.5 %...): heavy-tailed run-level noise, 1.6 % of the series
    assert (aa & (marked["environment"] == "")).sum() <= 0.02 * 316
    # no series flaps: at most one step a series with nothing but the run differing (a series of several cards may step
    # at each, as H100 cuBLAS BF16 2048^3 does, -4.1 % and +10.9 % at its two card changes, each step so marked)
    steps = hist[(hist["verdict"] != "") & hist["change"]]
    per_series = steps.groupby(history.SERIES, dropna=False)["verdict"].size()
    assert isinstance(per_series, pd.Series) and per_series.max() <= 1


def _write(tmp_path: Path, name: str, rows: list[dict]) -> str:
    from farm.data.dataset import write_rows
    from farm.data.schema import ROW_SCHEMA

    path = str(tmp_path / name)
    write_rows([{f.name: r.get(f.name) for f in ROW_SCHEMA} for r in rows], path)
    return path


def test_compare_across_two_dataset_paths(tmp_path, capsys):
    rng = random.Random(11)
    same_id = _write(tmp_path, "one", run_rows("ref", rng, cells=12))
    other = _write(
        tmp_path, "two", run_rows("ref", rng, cells=12, step=0.05, commit="c1")
    )  # the same run id in another dataset
    history = _write(tmp_path, "history", history_runs(2, runs=3, cells=12))
    assert main(["compare", "ref", "ref", "--data", same_id, "--data-b", other, "--history", history, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["comparisons"] == 12 and out["summary"]["SLOWER"] == 12
    assert main(["compare", "ref", "ref", "--data", same_id, "--data-b", other, "--plant", "1,3"]) == 0
    assert "planted" in capsys.readouterr().out
    empty = _write(tmp_path, "three", [{**r, "stage": "x"} for r in run_rows("x", rng, cells=2)])
    assert main(["compare", "ref", "x", "--data", same_id, "--data-b", empty]) == 1
    assert "measured no cell in common" in capsys.readouterr().err
    assert main(["compare", "nope", "ref", "--data", same_id]) == 2
    assert "no rows for run nope" in capsys.readouterr().err
    several = _write(tmp_path, "several", [r for side in _sides_of_runs(12, 2, cells=12) for r in side])
    assert main(["compare", "a0,a1", "b0,b1", "--data", several]) == 0
    out = capsys.readouterr().out
    assert "Common shift: B is" in out and "over all 12 cells" in out
    assert main(["compare", "a0,a1", "--aa", "--data", several]) == 2
    assert "--aa and --gpu-to-gpu take one run" in capsys.readouterr().err


def test_aa_prints_the_false_difference_rate_per_gpu_model_and_family(tmp_path, capsys):
    path = _write(tmp_path, "aa", history_runs(0, runs=1, cells=20))
    assert main(["compare", "h0", "--aa", "--data", path]) == 0
    out = capsys.readouterr().out
    assert "every FASTER/SLOWER is a false difference" in out and "H100-80GB-HBM3     hopper_d" in out
    single = _write(tmp_path, "single", history_runs(0, runs=1, cells=3, repeats=1))
    assert main(["compare", "h0", "--aa", "--data", single]) == 1
    assert "no cell measured twice on one GPU" in capsys.readouterr().err


def _sides_of_runs(seed: int, runs: int, step: float = 0.0, **kw) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    a = [r for i in range(runs) for r in run_rows(f"a{i}", rng, commit="c1", **kw)]
    b = [r for i in range(runs) for r in run_rows(f"b{i}", rng, commit="c1", step=step, **kw)]
    return a, b


def test_sides_of_several_runs_average_run_level_noise():
    """As on the H100's A/A (plans/aa.toml): repeats within a run agree to 0.1 % while the run moves a cell by 0.5 %
    (the robust spread of that A/A's run-to-run differences). One run a side seldom tells a 3 % step from that; three
    runs a side (one repeat each) do, at least 90 % of the time, and identical code stays at or under 1 % false
    differences. History: A/A runs of the same noise (their run pairs teach the run variance)."""
    noise = dict(repeat_sd=0.001, run_sd=0.005, within_sd=0.001)
    history = history_runs(7, runs=4, repeats=2, **noise)
    aa = []
    for seed in range(4):
        a, b = _sides_of_runs(seed, 3, repeats=1, **noise)
        comps = compare.compare_rows(a, b, model=NoiseModel.learn(history + a + b, apart=(a, b)))
        assert all(c.noise.startswith("runs 3 vs 3") for c in comps)
        aa += comps
    assert compare.summary(aa)["difference_rate"] <= 0.01
    found = {}
    for runs in (1, 3):
        detected = []
        for seed in range(4):
            a, b = _sides_of_runs(50 + seed, runs, step=0.03, repeats=1 if runs > 1 else 2, **noise)
            detected += [
                c.verdict == "SLOWER"
                for c in compare.compare_rows(a, b, model=NoiseModel.learn(history + a + b, apart=(a, b)))
            ]
        found[runs] = sum(detected) / len(detected)
    assert found[3] >= 0.9 and found[1] <= found[3] - 0.2, found


def test_common_shift_reports_what_every_cell_shares():
    a, b = _sides_of_runs(3, 1, step=0.02)
    model = NoiseModel.learn(history_runs(2, runs=4) + a + b, apart=(a, b))
    shift = compare.common_shift(compare.compare_rows(a, b, model=model))
    assert (
        shift["cells"] == 60
        and shift["low"] < 0.02 < shift["high"]
        and shift["shift"] == pytest.approx(0.02, abs=0.004)
    )
    assert "B is 2." in compare.format_shift(shift) and "% slower than A over all 60 cells" in compare.format_shift(
        shift
    )
    same = compare.common_shift(compare.compare_rows(*_sides_of_runs(4, 1), model=model))
    assert same["low"] < 0 < same["high"]
    assert compare.common_shift(compare.compare_rows(a[:9], b[:9], model=model)) is None


def test_single_runs_get_no_verdict_on_unmeasured_run_noise():
    """Run-level noise is the GPU model's own: an H200's A/A run pairs say nothing of an H100's, and a single run a
    side whose run noise was never measured is UNCLEAR with the reason, not SAME on a guessed prior."""
    quiet = dict(repeat_sd=0.002, run_sd=0.001)  # the first A/A test's quiet cells: 95 % SAME with history
    a, b = _sides_of_runs(5, 1, **quiet)
    h200 = [{**r, "gpu_model": "H200"} for r in history_runs(6, runs=4, **quiet)]
    comps = compare.compare_rows(a, b, model=NoiseModel.learn(h200 + a + b, apart=(a, b)))
    assert {c.verdict for c in comps} == {"UNCLEAR"}
    assert all(
        "run-to-run noise never measured on this GPU model" in c.reason and c.noise.endswith("run: prior")
        for c in comps
    )
    learned = compare.compare_rows(a, b, model=NoiseModel.learn(history_runs(6, runs=4, **quiet) + a + b, apart=(a, b)))
    assert sum(c.verdict == "SAME" for c in learned) >= 0.85 * len(learned)


def test_the_default_tolerance_calls_identical_code_same_and_a_two_percent_step_slower():
    """The issue's own words: identical code SAME, a 2 % regression SLOWER. With the default tolerance (2 %), SAME
    means shown within +-2 % and SLOWER a difference beyond the noise and 1 %: on cells whose repeats agree to 0.2 %
    and runs to 0.1 % (the shipped data's unthrottled cells), both hold at least 90 % of the time, and a true 2 % step
    is never called SAME (the equivalence test at the tolerance allows 5 %)."""
    quiet = dict(repeat_sd=0.002, run_sd=0.001)
    history = history_runs(11, runs=4, **quiet)
    verdicts: dict[float, list[str]] = {0.0: [], 0.02: []}
    for seed in range(4):
        for step in verdicts:
            a, b = _sides_of_runs(60 + seed, 1, step=step, **quiet)
            verdicts[step] += [
                c.verdict for c in compare.compare_rows(a, b, model=NoiseModel.learn(history + a + b, apart=(a, b)))
            ]
    same, slower = verdicts[0.0], verdicts[0.02]
    assert same.count("SAME") >= 0.9 * len(same) and same.count("SLOWER") + same.count("FASTER") <= 0.01 * len(same)
    assert slower.count("SLOWER") >= 0.9 * len(slower) and slower.count("SAME") == 0


def test_a_difference_beyond_the_noise_between_half_the_tolerance_and_the_tolerance_is_reported():
    """SLOWER from half the tolerance, SAME within it: a precisely measured 1.5 % is SLOWER (a difference shown beyond
    the noise is reported before an equivalence); 0.5 %, however precise, is SAME; anything imprecise is UNCLEAR."""
    assert compare.verdict(math.log(1.015), 0.002, 0.02) == "SLOWER"
    assert compare.verdict(math.log(0.985), 0.002, 0.02) == "FASTER"
    assert compare.verdict(math.log(1.005), 0.002, 0.02) == "SAME"
    assert compare.verdict(math.log(1.005), 0.03, 0.02) == "UNCLEAR"
    assert compare.verdict(math.log(1.025), 0.002, 0.02, same_band=0.001) == "SLOWER"


def test_runs_of_one_repeat_teach_the_whole_run_noise():
    """A/A history of runs with one repeat each (plans/aa-runs.toml) cannot split a run's noise into repeat and run
    levels: the run variance learned from their pairs holds both, the repeat variance adds nothing on top, and single
    runs then get verdicts on it, identical code staying at or under 1 % false differences."""
    noise = dict(repeat_sd=0.003, run_sd=0.002)
    history = history_runs(21, runs=4, repeats=1, **noise)
    model = NoiseModel.learn(history)
    learned = model.lookup(history[0])
    assert learned.run_holds_repeats and not learned.learned  # between repeats of one run (--aa) nothing is known
    assert math.sqrt(learned.run_var) == pytest.approx(math.hypot(0.003, 0.002), rel=0.25)
    comps = []
    for seed in range(4):
        a, b = _sides_of_runs(80 + seed, 1, repeats=1, **noise)
        comps += compare.compare_rows(a, b, model=NoiseModel.learn(history + a + b, apart=(a, b)))
    s = compare.summary(comps)
    assert s["difference_rate"] <= 0.01 and s["SAME"] >= 0.5 * s["comparisons"], s
    assert not any("no A/A history" in c.reason for c in comps) and all(
        c.noise.startswith("repeat: within the run noise") for c in comps
    )


def paired_sweep(
    sweep: str,
    rng: random.Random,
    cells: int = 60,
    repeats: int = 1,
    process_sd: float = 0.01,
    pair_sd: float = 0.003,
    step: float = 0.0,
    code_b: str = "k0",
) -> tuple[list[dict], list[dict]]:
    """A paired sweep's two arms (runs SWEEP-a and SWEEP-b): each cell draws a process effect (sd process_sd, heavy:
    a t with 3 df, as the H100's per-process shifts of whole sizes and Triton picks are) that both arms of its pairs
    share, and each arm of a pair its own noise (sd pair_sd); arm b is slower by `step` and runs code `code_b`."""
    arms: tuple[list[dict], list[dict]] = ([], [])
    for row in run_rows(sweep, rng, cells=cells, repeats=repeats, repeat_sd=0.0, run_sd=0.0, within_sd=0.0):
        c = int(row["stage"].removeprefix("d_stage")) * len(SIZES) + SIZES.index((row["m"], row["n"], row["k"]))
        shared = row["median_ms"] * math.exp(process_sd * rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 1 / 1.5)))
        pair = f"{sweep}/{row['stage']}/{row['m']}x{row['n']}x{row['k']}/{row['repeat']}"
        for i, (arm, slower, code) in enumerate((("a", 0.0, "k0"), ("b", step, code_b))):
            ms = shared * math.exp(rng.gauss(0, pair_sd)) * (1 + slower)
            arms[i].append(
                {
                    **row,
                    "run_id": f"{sweep}-{arm}",
                    "pair": pair,
                    "arm": arm,
                    "code_sha256": f"{code}-{c}",
                    "samples_ms": [ms] * 15,
                    "median_ms": ms,
                }
            )
    return arms


def paired_history(seed: int, sweeps: int = 3, **kw) -> list[dict]:
    rng = random.Random(seed)
    return [r for i in range(sweeps) for arm in paired_sweep(f"p{i}", rng, **kw) for r in arm]


def test_paired_aa_false_differences_at_most_one_percent_and_unclear_at_most_15_percent():
    """Arms of identical code whose cells move together by a heavy-tailed 1 % per process: the paired design judges
    the pairs, which a run's draw does not move."""
    comps = []
    for seed in range(5):
        history = paired_history(seed)
        a, b = paired_sweep("x", random.Random(50 + seed))
        comps += compare.compare_rows(a, b, model=NoiseModel.learn([*history, *a, *b], apart=(a, b)))
    s = compare.summary(comps)
    assert s["comparisons"] == 300 and s["designs"] == {"paired": 300}
    assert s["difference_rate"] <= 0.01 and s["unclear_rate"] <= 0.15, s
    assert {c.noise.split(" ", 2)[2].split(":")[0] for c in comps} == {"paired family"}  # 18 pairs a stage: too few


def test_paired_three_percent_step_detected_at_least_90_percent_and_attributed_to_the_code():
    detected = total = 0
    for seed in range(5):
        history = paired_history(seed)
        a, b = paired_sweep("x", random.Random(70 + seed), step=0.03, code_b="k1")
        comps = compare.compare_rows(a, b, model=NoiseModel.learn([*history, *a, *b], apart=(a, b)))
        detected += sum(c.verdict == "SLOWER" for c in comps)
        total += len(comps)
        assert not any(c.verdict == "FASTER" for c in comps)
        assert all("code …" in c.context[0] and not c.confounded for c in comps)  # the code differed, nothing else
    assert detected / total >= 0.9, detected / total


def test_the_same_process_noise_defeats_the_sequential_design():
    """Without pair ids the same rows are two sequential runs: a process's heavy-tailed 1 % is run-to-run noise
    that the run's own single repeat cannot show, and the verdicts are left open or wrong far more often."""
    unpaired = [{**r, "pair": None, "arm": None} for r in paired_history(1, sweeps=4)]
    a, b = paired_sweep("x", random.Random(9))
    a, b = ([{**r, "pair": None, "arm": None} for r in side] for side in (a, b))
    comps = compare.compare_rows(a, b, model=NoiseModel.learn([*unpaired, *a, *b], apart=(a, b)))
    s = compare.summary(comps)
    assert s["designs"] == {"runs": 60} and s["unclear_rate"] > 0.5, s


def test_paired_noise_is_keyed_by_design_and_needs_paired_history():
    history = paired_history(2, sweeps=1, cells=240)
    noise = NoiseModel.learn(history).lookup(history[0])
    assert noise.pair_source.startswith("paired family:") and math.sqrt(noise.pair_var) == pytest.approx(
        0.003 * math.sqrt(2), rel=0.35
    )
    assert noise.run_source == "prior"  # the two arms of one paired sweep are no sequential A/A run pair
    a, b = paired_sweep("x", random.Random(3))
    comps = compare.compare_rows(a, b)  # the compared pair alone: no paired history
    assert {c.verdict for c in comps} == {"UNCLEAR"} and "paired noise never measured" in comps[0].reason
    # Arms whose machine code differs are no A/A evidence.
    changed = [r for side in paired_sweep("y", random.Random(4), code_b="k1") for r in side]
    assert NoiseModel.learn(changed).lookup(changed[0]).pair_source == "prior"


def test_cross_fitted_paired_aa_and_plants_through_the_cli(tmp_path, capsys):
    a, b = paired_sweep("aa", random.Random(21), cells=240)  # each half learns from the other's 120 pairs
    path = _write(tmp_path, "paired", [*a, *b])
    assert main(["compare", "aa-a", "aa-b", "--data", path, "--cross-fit", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    s = out["summary"]
    assert s["comparisons"] == 240 and s["designs"] == {"paired": 240}
    assert s["difference_rate"] <= 0.01 and s["unclear_rate"] <= 0.15, s
    assert main(["compare", "aa-a", "aa-b", "--data", path, "--cross-fit", "--plant", "1,3", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert [t["planted_pct"] for t in table] == [0, 1, 3] and table[2]["detected"] >= 0.9
    assert main(["compare", "aa-a", "aa-b", "--data", path]) == 0  # no cross-fit: its only paired history is itself
    out = capsys.readouterr().out
    assert "Noise model: 240 cells paired" in out and "paired noise never measured" in out
    few = _write(tmp_path, "few", [r for side in paired_sweep("f", random.Random(5), cells=120) for r in side])
    assert main(["compare", "f-a", "f-b", "--data", few, "--cross-fit"]) == 0  # 60 pairs a half: tails unknown
    assert "fewer than 100 pairs" in capsys.readouterr().out
