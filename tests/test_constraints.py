"""Each shipped dataset has a pip constraints file (datasets/NAME/constraints.txt) whose versions are the ones its
rows and runs record: what a `recorded in ...` comment names must match every row, and the pins must agree."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.compute as pc
import pytest

from farm.data.dataset import RUNS, read_table

ROOT = Path(__file__).resolve().parent.parent
DATASETS = sorted(p for p in (ROOT / "datasets").iterdir() if (p / "rows").is_dir())


def recorded(text: str, where: str) -> dict[str, str]:
    """The key=value pairs of the comment line `# recorded in WHERE: ...`."""
    line = next((ln for ln in text.splitlines() if ln.startswith(f"# recorded in {where}")), "")
    return dict(re.findall(r"(\w+)=(\S+)", line))


def pins(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([\w.-]+)==(\S+)$", text, flags=re.M))


def distinct(table, column: str) -> set:
    return set(pc.unique(table.column(column).drop_null()).to_pylist())


def test_every_shipped_dataset_has_one():
    assert DATASETS and [p.name for p in DATASETS if not (p / "constraints.txt").is_file()] == []


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda p: p.name)
def test_constraints_match_what_the_rows_record(dataset):
    text = (dataset / "constraints.txt").read_text()
    rows = read_table(str(dataset))
    every_row = recorded(text, "every row")
    assert {"driver_version", "cuda_runtime_version", "nvrtc_version", "cupy_version"} <= every_row.keys()
    for column, value in every_row.items():
        assert distinct(rows, column) == {value}, column
    assert f"runs {', '.join(sorted(distinct(rows, 'run_id')))}" in re.sub(r" \(commit \w+\)", "", text.splitlines()[0])
    pinned = pins(text)
    cuda_major = every_row["cuda_runtime_version"].split(".")[0]
    assert pinned[f"cupy-cuda{cuda_major}x"] == every_row["cupy_version"]

    cublas = recorded(text, "every cuBLAS")
    if cublas:
        libraries = {v for v in distinct(rows, "library_algorithm") if v.startswith("cuBLAS")}  # Triton's pick too
        assert {re.match(r"cuBLAS(?:Lt)? (\S+)", v).group(1) for v in libraries} == {cublas["cublas_version"]}
    else:
        assert "library_algorithm" not in rows.column_names or not distinct(rows, "library_algorithm")
        assert "recorded by no row: cuBLAS" in text

    in_runs = recorded(text, "the runs table")
    if (dataset / "runs").is_dir():
        runs = read_table(str(dataset), RUNS)
        assert distinct(runs, "ray_version") == {in_runs["ray_version"]} == {pinned["ray"]}
        assert distinct(runs, "python_version") == {in_runs["python_version"]}
    else:
        assert not in_runs and "ray" not in pinned and "recorded by no row: Ray and Python" in text
