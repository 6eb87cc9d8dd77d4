"""plans/llm.toml and the report's LLM model rows (farm/data/llm_shapes.py): CPU only."""

import math
import re
from pathlib import Path

from farm.data.llm_shapes import MODELS, TOKENS, plan_shapes
from farm.plan import load_plan

PLANS = Path(__file__).resolve().parent.parent / "plans"
PLAN = PLANS / "llm.toml"


H100 = {  # the device fields of the synthetic rows below (test data, never shipped)
    "host": "h",
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "gpu_model": "H100",
    "gpu_uuid": "GPU-1",
    "gpu_index": 0,
    "compute_capability": "9.0",
    "arch": "sm_90",
    "sm_count": 132,
}


def test_the_plan_runs_every_models_shapes_on_walk_d_and_both_vendor_libraries():
    plan = load_plan(PLAN)  # validates fields, names and that the largest cell fits a GPU the farm knows
    assert list(plan.sizes) == plan_shapes() and len(plan.sizes) == len(MODELS) * 4 * len(TOKENS)
    names = {s.name for s in plan.stages()}
    assert {"cublas_bf16", "cublas_fp16", "cublaslt_bf16", "cublaslt_fp16"} <= names
    walk_d = [s for s in plan.stages() if s.family == "hopper_d"]
    assert {s.dtype for s in walk_d} == {"bf16", "fp16"} and {"d_split_k_bf16", "d_narrow_tiles_fp16"} <= names
    assert {"d_host_plan_bf16", "d_host_plan_fp16", "d_tma_store_bf16", "d_tma_store_fp16"} <= names
    stated = re.search(r"repeats = 1 +# (\d+) cells a GPU", PLAN.read_text())  # the plan's comment says its size
    assert stated and int(stated.group(1)) == len(plan.sizes) * len(plan.stages())
    for stage in walk_d:  # no cell of the plan is skipped by walk D's shape rule on an H100 or H200
        assert all(stage.unsupported_reason(m, n, k, 90) is None for m, n, k in plan.sizes), stage.name


FP8_CLASSES = ("fp8_e4m3", "fp8_e4m3_e5m2")


def test_the_fp8_plan_runs_the_same_shapes_on_walk_f_from_02_and_both_fp8_references():
    """E4M3: walk F from 02 on; B in E5M2: the stages built for it (03, 04, 07, 09); each class with its cuBLASLt and
    torch._scaled_mm."""
    plan = load_plan(PLANS / "llm_fp8.toml")
    assert list(plan.sizes) == list(load_plan(PLAN).sizes)
    names = {s.name for s in plan.stages()}
    walk_f = {c: [s for s in plan.stages() if s.family == "hopper_fp8" and s.dtype == c] for c in FP8_CLASSES}
    assert {s.dtype for s in plan.stages()} == set(FP8_CLASSES)
    assert {f"{lib}_{c}" for lib in ("cublaslt", "torch") for c in FP8_CLASSES} <= names
    assert sorted(s.position for s in walk_f["fp8_e4m3"]) == [2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert {"f_half_tiles_fp8", "f_swap_dependent_fp8"} <= names
    assert sorted(s.position for s in walk_f["fp8_e4m3_e5m2"]) == [3, 4, 7, 9]
    stated = re.search(r"# (\d+) cells a GPU", (PLANS / "llm_fp8.toml").read_text())
    assert stated and int(stated.group(1)) == len(plan.sizes) * len(plan.stages()) * plan.repeats
    for stage in walk_f["fp8_e4m3"] + walk_f["fp8_e4m3_e5m2"]:  # no cell skipped by walk F's shape rule on Hopper
        assert all(stage.unsupported_reason(m, n, k, 90) is None for m, n, k in plan.sizes), stage.name


def test_the_walk_f_plan_holds_both_fp8_classes_and_says_its_size():
    """plans/walkf.toml: the family's stages of fp8_e4m3 and fp8_e4m3_e5m2, each class's cuBLASLt and torch._scaled_mm;
    its comment's cell count is the plan's (the B-in-E5M2 class added 20 cells to 40; 08, 09, 09 in E5M2 and 10 four
    more each)."""
    plan = load_plan(PLANS / "walkf.toml")
    by_class = {}
    for s in plan.stages():
        by_class.setdefault(s.dtype, set()).add(s.name)
    assert set(by_class) == {"fp8_e4m3", "fp8_e4m3_e5m2"}
    assert {"cublaslt_fp8_e4m3_e5m2", "torch_fp8_e4m3_e5m2", "f_multicast_fp8_e4m3_e5m2"} <= by_class["fp8_e4m3_e5m2"]
    stated = re.search(r"= (\d+) cells", (PLANS / "walkf.toml").read_text())
    assert stated and int(stated.group(1)) == len(plan.sizes) * len(plan.stages()) * plan.repeats == 76


def test_a_models_layers_follow_from_its_configuration():
    llama = next(m for m in MODELS if m.name == "Llama-3-8B")
    assert llama.head_dim == 128
    assert llama.layers() == {
        "q_proj, o_proj": (4096, 4096),
        "k_proj, v_proj": (1024, 4096),
        "gate_proj, up_proj": (14336, 4096),
        "down_proj": (4096, 14336),
    }
    assert (1, 1024, 4096) in llama.shapes() and (8192, 4096, 14336) in llama.shapes()
    assert all(m.hidden % m.heads == 0 and m.source.startswith("https://huggingface.co/") for m in MODELS)


def test_headline_adds_one_row_per_gpu_llm_model_family_and_precision(tmp_path):
    from farm.analysis.report import headline_table
    from farm.cells import Cell
    from farm.data.dataset import write_rows
    from farm.data.rows import cell_row
    from kernels.registry import stage_named

    device = H100

    def row(stage, shape, pct, ms=1.0):
        r = cell_row(device, stage_named(stage), Cell(stage, *shape), "run", "ok")
        return {
            **r,
            "verified": True,
            "median_ms": ms,
            "pct_of_baseline": pct,
            "timing_mode": "hot",
            "max_sm_clock_mhz": 1980.0,
            "post_checked": True,
        }

    decode, prefill = (1, 1024, 4096), (4096, 4096, 14336)  # two of Llama-3-8B's 24 shapes
    write_rows(
        [
            row("d_split_k_bf16", decode, 80.0),
            row("d_tma_bf16", decode, 50.0),  # best at decode: 80 %
            row("d_mma_overlap_bf16", prefill, 100.0),
            row("d_mma_overlap_bf16", prefill, 96.0, ms=1.1),  # median 98
            row("d_tma_fp16", decode, 60.0),
            row("d_tma_bf16", (1024, 1024, 1024), 10.0),
        ],
        str(tmp_path),
    )  # no model's shape: in no model row
    lines = headline_table(str(tmp_path)).splitlines()
    models = [line.split(" | ") for line in lines if "| Llama-3-8B |" in line]
    assert [m[3] for m in models] == ["bf16", "fp16"]
    bf16 = models[0]
    assert bf16[4] == "2 of 24" and bf16[5] == f"{math.sqrt(80.0 * 98.0):.1f}"
    assert bf16[6] == "" and bf16[7] == "80.0 at 1x1024x4096 |"  # no vendor rows: no % of vendor best
    assert not any("Qwen2.5-7B" in line or "Llama-3.1-70B" in line for line in lines)


def test_headline_takes_fp8_rows_with_cublaslt_fp8_as_the_vendor_best(tmp_path):
    """Walk F's rows make their own model row (family hopper_fp8, precision fp8_e4m3): the best stage per shape, and
    % of vendor best against cuBLASLt FP8's own cell (the library's name carries a two-part precision, fp8_e4m3)."""
    from farm.analysis.report import headline_table
    from farm.cells import Cell
    from farm.data.dataset import write_rows
    from farm.data.rows import cell_row
    from kernels.registry import stage_named

    device = H100

    def row(stage, shape, pct, ms):
        r = cell_row(device, stage_named(stage), Cell(stage, *shape), "run", "ok")
        return {
            **r,
            "verified": True,
            "median_ms": ms,
            "pct_of_baseline": pct,
            "baseline_median_ms": ms * pct / 100,
            "timing_mode": "hot",
            "max_sm_clock_mhz": 1980.0,
            "post_checked": True,
        }

    decode, prefill = (1, 4096, 4096), (4096, 4096, 14336)
    write_rows(
        [
            row("f_swap_ab_fp8", decode, 80.0, 0.010),
            row("f_mma_overlap_fp8", decode, 20.0, 0.040),  # best at decode: 06's 80 %
            row("cublaslt_fp8_e4m3", decode, 100.0, 0.008),  # the vendor's own cell: 0.008 / 0.010 = 80 % for 06
            row("f_mma_overlap_fp8", prefill, 105.0, 0.400),
            row("cublaslt_fp8_e4m3", prefill, 100.0, 0.420),
        ],
        str(tmp_path),
    )
    lines = headline_table(str(tmp_path)).splitlines()
    models = [line.split(" | ") for line in lines if "| Llama-3-8B |" in line]
    assert len(models) == 1 and models[0][2:4] == ["hopper_fp8", "fp8_e4m3"]
    assert models[0][4] == "2 of 24" and models[0][5] == f"{math.sqrt(80.0 * 105.0):.1f}"
    assert models[0][6] == f"{math.sqrt(80.0 * 105.0):.1f}"  # % of vendor best: cuBLASLt FP8 in both cells
    assert models[0][7] == "80.0 at 1x4096x4096 |"
