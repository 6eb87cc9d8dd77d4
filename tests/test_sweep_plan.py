"""Sweep plans, resume keys and GPU-model naming: no Ray cluster needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from farm.cells import Cell
from farm.cluster.fleet import model_wanted
from farm.cluster.worker import gpu_model
from farm.data.dataset import PROFILE, completed_keys, default_output, write_rows, write_table
from farm.data.rows import cell_row
from farm.measure.cell_timer import MeasureOptions
from farm.measure.profiler import base_record
from farm.plan import PlanError, load_plan, parse_size
from kernels.registry import select

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_plans_load():
    default = load_plan(ROOT / "plans" / "default.toml")
    assert default.families == ("simt_fp32",) and default.repeats == 3
    assert default.sizes == ((1024,) * 3, (2048,) * 3, (4096,) * 3)
    assert default.mode == "replicate" and default.output == default_output()
    quick = load_plan(ROOT / "plans" / "quick.toml")
    assert (127, 255, 33) in quick.sizes and quick.repeats == 1
    assert [s.name for s in quick.stages()] == ["cublas_fp32", "naive", "tiled"]


def test_cells_bring_baselines_and_are_ordered_by_repeat_shape_stage():
    plan = load_plan(kernels="tiled,naive", sizes=[64, "8x16x32"], repeats=2)
    cells = plan.cells()
    assert cells[:4] == [
        Cell("cublas_fp32", 64, 64, 64, 0),
        Cell("naive", 64, 64, 64, 0),
        Cell("tiled", 64, 64, 64, 0),
        Cell("cublas_fp32", 8, 16, 32, 0),
    ]
    assert len(cells) == 3 * 2 * 2 and cells[6] == Cell("cublas_fp32", 64, 64, 64, 1)


def test_overrides_replace_file_fields_and_none_is_ignored(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('kernels = ["naive"]\nsizes = [128]\nrepeats = 2\nmode = "shard"\n')
    plan = load_plan(path, sizes="256,1x2x3", repeats=None, run_id="abc", gpus="H100, GeForce-RTX-4090")
    assert plan.kernels == ("naive",) and plan.repeats == 2 and plan.mode == "shard"
    assert plan.sizes == ((256, 256, 256), (1, 2, 3)) and plan.run_id == "abc"
    assert plan.gpus == ("H100", "GeForce-RTX-4090")
    assert load_plan(path).run_id != load_plan(path).run_id  # a fresh id each time none is given


def test_a_selection_flag_replaces_the_file_s_selection(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('families = ["simt_fp32"]\nkernels = ["c_naive"]\nsizes = [64]\n')
    assert {s.name for s in load_plan(path).stages()} >= {"naive", "tiled", "c_naive"}  # the file's union
    only = {s.name for s in load_plan(path, kernels="naive").stages()}
    assert only == {"naive", "cublas_fp32"}  # the flag's selection alone, its baseline brought along
    assert {s.family for s in load_plan(path, families="tf32").stages()} == {"tf32", "baseline"}


def test_unknown_kernel_lists_the_valid_ones():
    with pytest.raises(PlanError) as err:
        load_plan(kernels="naive,warp_drive", sizes=[64])
    assert "warp_drive" in str(err.value) and "valid:" in str(err.value) and "tiled" in str(err.value)


@pytest.mark.parametrize("size", [0, -4, "12x0x3", "1x2", 1.5, True, "abc", "8x8x-1", ""])
def test_bad_sizes_are_rejected(size):
    with pytest.raises(PlanError, match="size"):
        load_plan(sizes=[size])


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"sizes": [64], "mode": "broadcast"}, "mode"),
        ({"sizes": []}, "sizes"),
        ({"sizes": [64], "repeats": 0}, "repeats"),
        ({"sizes": [64], "cell_timeout_s": -1}, "cell_timeout_s"),
        ({"sizes": [64], "measurer": "farm.measure.gpu.GpuMeasurer"}, "measurer"),
        ({"sizes": [64], "families": ["no_such_family"]}, "unknown family"),
        ({"sizes": [64], "kernel": ["naive"]}, "unknown plan field kernel"),
    ],
)
def test_bad_plans_say_what_is_wrong(fields, match):
    with pytest.raises(PlanError, match=match):
        load_plan(**fields)


def test_parse_size():
    assert parse_size(1024) == (1024, 1024, 1024)
    assert parse_size("127x255x33") == (127, 255, 33)
    assert parse_size("2048") == (2048, 2048, 2048)


def test_the_measure_table_becomes_one_typed_options_object_that_crosses_to_workers_small(tmp_path):
    import pickle

    from farm.cluster.fleet import WorkerSpec

    path = tmp_path / "p.toml"
    path.write_text('sizes = [64]\n[measure]\nmode = "cold"\nwarmup_max_s = 1.5\n')
    plan = load_plan(path, measure={"target_noise": 0.01})  # a flag refines the file's table
    assert isinstance(plan.measure, MeasureOptions) and plan.measure.timing.mode == "cold"
    assert plan.measure.timing.warmup.max_s == 1.5 and plan.measure.timing.stopping.target_noise == 0.01
    assert load_plan(None, sizes=[64]).measure == MeasureOptions()
    spec = WorkerSpec(plan.measurer, plan.measure, tuple(s.name for s in plan.stages()))
    assert pickle.loads(pickle.dumps(spec)) == spec  # what each worker is sent
    assert len(pickle.dumps(plan.measure)) < 1000  # the options' share of it: a few hundred bytes


def test_completed_keys_per_gpu_or_per_model(tmp_path):
    out = str(tmp_path / "ds")
    assert completed_keys(out, "r1", "gpu_uuid") == set()
    [stage] = select(["naive"])
    device = {"gpu_model": "H200", "gpu_uuid": "GPU-1", "gpu_name": "NVIDIA H200"}
    write_rows(
        [cell_row(device, stage, Cell("naive", 8, 8, 8, r), run, "ok") for r in (0, 1) for run in ("r1", "r2")], out
    )
    write_rows([cell_row(device, stage, Cell("naive", 16, 16, 16, 0), "r1", "timeout")], out)
    assert completed_keys(out, "r1", "gpu_uuid") == {
        ("GPU-1", "naive", 8, 8, 8, 0),
        ("GPU-1", "naive", 8, 8, 8, 1),
        ("GPU-1", "naive", 16, 16, 16, 0),
    }
    assert ("H200", "naive", 8, 8, 8, 1) in completed_keys(out, "r2", "gpu_model")
    assert completed_keys(out, "r3", "gpu_model") == set()
    profile = [{**base_record(device, stage, Cell("naive", 8, 8, 8), "r1"), "status": "no_ncu"}]
    write_table(profile, out, PROFILE)  # a profiled cell is done per (stage, shape): its repeat is 0
    assert completed_keys(out, "r1", "gpu_uuid", PROFILE) == {("GPU-1", "naive", 8, 8, 8, 0)}


def test_gpu_model_label_wins_over_nvml_name():
    assert gpu_model({"farm.gpu-model": "H200"}, "NVIDIA H200") == "H200"
    assert gpu_model({}, "NVIDIA GeForce RTX 4090") == "GeForce-RTX-4090"
    assert gpu_model({}, "NVIDIA H200") == "H200"  # the same spelling as a labelled node


def test_model_filter_ignores_case_and_nvidia_prefix():
    assert model_wanted("NVIDIA-GeForce-RTX-4090", ("geforce-rtx-4090",))
    assert model_wanted("H200", ("NVIDIA-H200", "H100"))
    assert model_wanted("anything", ())
    assert not model_wanted("H100", ("H200",))


def test_paired_plans_name_two_arm_runs_and_base_kernels_only_from_the_command_line(tmp_path):
    from farm.cells import arm_order

    plan = load_plan("aa-paired", run_id="pa")
    assert plan.paired and plan.base_kernels == "" and plan.arm_runs() == ("pa-a", "pa-b")
    assert load_plan(sizes=[64], run_id="s").arm_runs() == ("s",)
    orders = [arm_order(c) for c in plan.cells()]
    assert {orders.count(("a", "b")), orders.count(("b", "a"))} <= set(
        range(len(orders) // 2 - 60, len(orders) // 2 + 60)
    )
    assert arm_order(Cell("naive", 64, 64, 64, 0)) != arm_order(Cell("naive", 64, 64, 64, 1))  # two repeats: ABBA
    kernels = Path(__file__).resolve().parent.parent / "kernels"
    based = load_plan(sizes=[64], base_kernels=str(kernels))
    assert based.paired and based.base_kernels == str(kernels)
    with pytest.raises(PlanError, match="holds no family folder"):
        load_plan(sizes=[64], base_kernels=str(tmp_path))
    file = tmp_path / "p.toml"
    file.write_text(f'sizes = [64]\nbase_kernels = "{kernels}"\n')
    with pytest.raises(PlanError, match="cannot name a kernels tree"):
        load_plan(file)
