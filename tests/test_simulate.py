"""`farm simulate`, small: the real driver, dispatcher and writer on a local Ray with declared GPUs and stand-in cells."""

from farm.cli import main
from farm.data.dataset import RUNS, read_table
from farm.data.validate import validate
from farm.simulate import simulate


def test_simulate_runs_every_cell_and_writes_one_file_per_flush(tmp_path):
    figures = simulate(gpus=3, cells=301, cell_ms=1.0, output=str(tmp_path))
    assert figures["cells"] == 302  # rounded up to even: two stages per shape
    rows = read_table(str(tmp_path)).to_pylist()
    assert {r["status"] for r in rows} == {"ok"} and len({r["gpu_uuid"] for r in rows}) == 3
    assert len({(r["stage"], r["m"], r["n"], r["k"]) for r in rows}) == 302  # shard mode: each cell once
    assert figures["row_files"] == figures["flushes"]  # one partition: one file per flush
    assert 0 < figures["busy_fraction"] <= 1 and figures["tail_s"] >= 0
    assert len(figures["rss_quarters_mib"]) == 4 and all(m > 0 for m in figures["rss_quarters_mib"])
    assert 0 < figures["machine_busy_cores"] <= figures["machine_cores"] + 0.5  # /proc/stat ticks: a little slack
    runs = read_table(str(tmp_path), RUNS).to_pylist()
    assert len(runs) == 3 and sum(r["cells_ok"] for r in runs) == 302
    assert validate(str(tmp_path)) == []


def test_simulate_command_prints_the_figures(capsys):
    assert main(["simulate", "--gpus", "2", "--cells", "40", "--cell-ms", "0"]) == 0
    out = capsys.readouterr().out
    assert (
        "40 cells of 0 ms on 2 GPUs" in out
        and "rows/s" in out
        and "peak RSS" in out
        and "each quarter of the run" in out
        and "row files" in out
        and "cores busy" in out
    )
