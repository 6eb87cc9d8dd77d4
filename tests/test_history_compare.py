"""History's change points, Compare's verdicts (synthetic rows); both pages and Peak on shipped data."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard import data  # noqa: E402
from dashboard.views import compare, history  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")
SHIPPED = sorted(str(p) for p in (Path(__file__).resolve().parent.parent / "datasets").iterdir() if p.is_dir())
START = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)


def run_rows(
    run: int,
    ms: float,
    rng: random.Random,
    noise: float,
    stage: str = "multibuf",
    gpu: str = "H200",
    repeats: int = 3,
    commit: str | None = None,
    dataset: str = "d",
) -> list[dict]:
    """One run's rows of one cell as the dashboard has them: `repeats` rows of 15 samples with relative noise
    `noise`, each repeat drifting a little (warm-up, another card)."""
    out = []
    for repeat in range(repeats):
        level = ms * (1 + rng.gauss(0, noise / 3))
        samples = [level * (1 + rng.gauss(0, noise)) for _ in range(15)]
        out.append(
            {
                "dataset": dataset,
                "run_id": f"run{run:02d}",
                "gpu_model": gpu,
                "gpu_uuid": f"GPU-{repeat % 2}",
                "family": "simt_fp32",
                "stage": stage,
                "dtype": "fp32",
                "order": 10.0,
                "m": 4096,
                "n": 4096,
                "k": 4096,
                "size_label": "4096³",
                "timing_mode": "hot",
                "repeat": repeat,
                "status": "ok",
                "median_ms": sorted(samples)[7],
                "samples_ms": samples,
                "flops": 2 * 4096**3,
                "timestamp": START + dt.timedelta(days=run, minutes=repeat),
                "git_commit": commit or f"c{run:02d}",
                "launch_method": "cuda_graph",
                "baseline": "cublas_fp32",
                "baseline_launch_method": "cuda_graph",
            }
        )
    return out


def series(levels: list[float], seed: int, noise: float = 0.005) -> pd.DataFrame:
    rng = random.Random(seed)
    return pd.DataFrame([r for i, ms in enumerate(levels) for r in run_rows(i, ms, rng, noise)])


@pytest.mark.parametrize("seed", range(5))
def test_a_3_percent_step_is_marked_once_where_it_happens(seed):
    hist = history.history(series([3.0] * 6 + [3.09] * 6, seed))
    marked = history.changes(hist)
    assert list(marked["run_id"]) == ["run06"] and list(marked["verdict"]) == ["SLOWER"]
    assert marked["prev_run"].iloc[0] == "run05 · d" and marked["diff_pct"].iloc[0] == pytest.approx(3.0, abs=1.0)
    assert list(hist["run_id"]) == [f"run{i:02d}" for i in range(12)], "runs in time order"


def test_a_change_of_launch_method_is_named_beside_the_change():
    rows = series([3.0] * 3 + [3.09] * 3, seed=0)
    rows["launch_method"] = ["direct" if r < "run03" else "cuda_graph" for r in rows["run_id"]]
    marked = history.changes(history.history(rows))
    assert list(marked["launch_change"]) == ["direct → cuda_graph"]


@pytest.mark.parametrize("seed", range(5))
def test_noise_alone_marks_nothing(seed):
    hist = history.history(series([3.0] * 20, seed))
    assert not hist["change"].any(), hist.loc[hist["change"], ["run_id", "diff_pct", "band_pct"]]
    assert set(hist["verdict"]) == {""}


def test_a_faster_step_within_noisy_runs_is_not_a_change():
    noisy = history.history(series([3.0] * 4 + [2.91] * 4, seed=1, noise=0.08))
    assert not noisy["change"].any() and set(noisy["verdict"]) == {""}
    clean = history.history(series([3.0] * 4 + [2.91] * 4, seed=1))
    assert list(history.changes(clean)["verdict"]) == ["FASTER"]


def test_compare_counts_verdicts_per_family_and_gpu_and_puts_regressions_first():
    rng = random.Random(7)
    rows = []
    for run, commit in ((0, "aaa"), (1, "bbb")):
        for stage, slower in (("multibuf", 1.05), ("tiled", 1.0), ("naive", 0.9)):
            for gpu in ("H200", "H100"):
                rows += run_rows(run, 2.0 * (slower if run else 1.0), rng, 0.003, stage=stage, gpu=gpu, commit=commit)
    rows = pd.DataFrame(rows)
    assert compare.side_options(rows, "git_commit") == ["aaa", "bbb"]
    assert compare.side_options(rows, "run") == ["run00 · d", "run01 · d"]
    df = compare.compare(rows, "git_commit", "aaa", "bbb", 0.01)
    assert list(df["verdict"][:2]) == ["SLOWER", "SLOWER"] and set(df["stage"][:2]) == {"multibuf"}
    assert df["diff_pct"].iloc[0] == pytest.approx(5.0, abs=1.0)
    s = compare.summary(df).set_index("gpu_model")
    assert s.loc["H200", "summary"] == "1 faster, 1 slower, 1 same, 0 unclear" and s.loc["H200", "cells"] == 3
    across = compare.compare(rows[rows["run_id"] == "run00"], "gpu_model", "H100", "H200", 0.01)
    assert set(across["gpu_model"]) == {"H200 vs H100"} and len(across) == 3
    assert compare.compare(rows, "git_commit", "aaa", "zzz", 0.01).empty
    graphed = rows.assign(launch_method="cuda_graph")
    assert compare.launch_note(graphed, "git_commit", "aaa", "bbb") == ""
    mixed = graphed.assign(launch_method=graphed["launch_method"].where(graphed["git_commit"] == "bbb", "direct"))
    assert "launched direct, B's cuda_graph" in compare.launch_note(mixed, "git_commit", "aaa", "bbb")


def app(monkeypatch, *paths: str, query: dict | None = None) -> AppTest:
    monkeypatch.setenv(data.ENV, ":".join(paths))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query or {})
    at.run()
    return at


def test_new_pages_on_the_shipped_datasets(monkeypatch):
    at = app(monkeypatch, *SHIPPED)
    at.switch_page("views/history.py").run()
    assert not at.exception, [e.message for e in at.exception]
    changes = at.dataframe[0].value
    assert len(changes) > 0 and set(changes["verdict"]) <= {"FASTER", "SLOWER"}
    link = parse_qs(urlsplit(changes["compare"].iloc[0]).query)
    assert (
        link["by"] == ["run"] and link["a"] == [changes["prev_run"].iloc[0]] and link["b"] == [changes["run"].iloc[0]]
    )
    assert at.get("vega_lite_chart")

    at.switch_page("views/compare.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="cmp_by").value == "run" and len(at.get("download_button")) == 1
    assert int(at.metric[0].value) > 100, "the two runs sharing the most cells are compared by default"

    at.switch_page("views/peak.py").run()
    assert not at.exception, [e.message for e in at.exception]
    best = at.dataframe[0].value
    cublas = best[best["family"] == "simt_fp32"].set_index("gpu_model")["cublas_pct_of_peak"]
    assert set(cublas.index) == {"H100-80GB-HBM3", "H200"} and ((cublas > 50) & (cublas < 100)).all()
    peaks = at.dataframe[-1].value
    assert (peaks["source"].str.contains("https://")).all() and peaks["bandwidth_tbs"].notna().all()


def test_a_history_link_opens_compare_on_those_runs(monkeypatch):
    runs = compare.side_options(data.load_uncached(SHIPPED).rows, "run")
    a, b = runs[0], runs[-1]  # not the pair the page picks itself
    at = app(monkeypatch, *SHIPPED, query={"by": "run", "a": a, "b": b})
    at.switch_page("views/compare.py").run()
    assert not at.exception
    assert (at.selectbox(key="cmp_a_run").value, at.selectbox(key="cmp_b_run").value) == (a, b)


def test_new_pages_with_one_run_say_why_there_is_nothing(monkeypatch, tmp_path):
    from farm.data.dataset import write_rows
    from farm.data.schema import ROW_SCHEMA

    rows = [{f.name: r.get(f.name) for f in ROW_SCHEMA} for r in run_rows(0, 2.0, random.Random(1), 0.003)]
    write_rows(rows, str(tmp_path / "one"))
    at = app(monkeypatch, str(tmp_path / "one"))
    at.switch_page("views/compare.py").run()
    assert not at.exception and "nothing to compare" in at.info[0].value
    at.switch_page("views/history.py").run()
    assert not at.exception and "one run only" in at.info[0].value
