import json

import pytest

from farm.cli import main
from kernels.registry import catalog, select
from kernels.stage import ShapeRule

WALK_A = [
    "naive",
    "tiled",
    "tiled_coalesced",
    "regblock",
    "warp_rebalance",
    "bank_pad_vec",
    "gmem_vec",
    "wider_m",
    "supertile",
    "ldg_vec",
    "ldg_super",
    "ldg_wider2",
    "multibuf",
    "splitk",
]
WALK_B = ["tf32_bt", "tf32_bt_swizzle", "tf32_bt_swizzle_dbf", "tf32_swizzle_bcf", "tf32_swizzle_bcf_dbf"]


def test_catalog_json_lists_every_stage(capsys):
    assert main(["catalog", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert [i["name"] for i in items] == [s.name for s in catalog()]
    for item in items:
        assert {"name", "family", "dtype"} <= item.keys()


def test_walk_a_is_complete_and_in_ladder_order():
    stages = [s for s in catalog() if s.family == "simt_fp32"]
    names = [s.name for s in stages]
    assert [n for n in names if n in WALK_A] == WALK_A
    geometry = [s for s in stages if s.group == "geometry"]
    assert len(geometry) >= 8 and len({s.source for s in geometry}) == 1
    positions = [s.position for s in stages if s.group != "geometry"]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    files = [s.source for s in stages if s.group != "geometry"]
    assert [int(f.split("/")[1][:2]) for f in files] == positions


def test_walk_b_is_complete_and_in_ladder_order():
    stages = [s for s in catalog() if s.family == "tf32"]
    assert [s.name for s in stages] == WALK_B
    assert [s.position for s in stages] == list(range(len(WALK_B)))
    assert [int(s.source.split("/")[1][:2]) for s in stages] == [s.position for s in stages]
    names = [s.name for s in catalog()]
    assert names.index("tf32_bt") > max(names.index(n) for n in WALK_A)  # families in ORDER: walk A first
    for s in stages:
        assert (s.walk, s.group, s.dtype, s.baseline, s.min_cc) == ("B", "ladder", "tf32", "cublas_tf32", 80)
        assert s.shapes == ShapeRule(n_multiple=4, k_multiple=4)
        assert s.unsupported_reason(1000, 1000, 1000, 90) is None and s.unsupported_reason(4100, 4100, 4100, 80) is None
        assert "needs compute capability 8.0" in s.unsupported_reason(1024, 1024, 1024, 75)
        assert s.unsupported_reason(127, 255, 33, 90)
        p = s.published
        assert p.device == "NVIDIA GeForce RTX 5060 Laptop GPU" and (p.m, p.n, p.k) == (4096, 4096, 4096)
        assert p.pct_of_baseline == pytest.approx(100 * 8.535476 / p.ms, abs=0.05)
    published = {s.name: s.published for s in stages}
    assert (
        published["tf32_bt"].ms == pytest.approx(15.925327)
        and published["tf32_swizzle_bcf_dbf"].pct_of_baseline == 103.1
    )


def test_every_stage_has_what_the_registry_promises():
    for s in catalog():
        if s.is_baseline:
            continue
        assert s.source_path.is_file(), s.name
        text = s.source_path.read_text()
        assert text.startswith("//"), f"{s.source} needs a header comment"
        for kernel in s.kernel_names:
            assert kernel.split("<")[0] in text
        assert s.baseline in {b.name for b in catalog() if b.is_baseline}
    published = {s.name: s.published for s in catalog() if s.published}
    assert published["naive"].ms == pytest.approx(39.73) and published["ldg_wider2"].pct_of_baseline == 88


def test_shape_rule_reasons():
    rule = ShapeRule(n_multiple=4, k_multiple=4)
    assert rule.rejects(128, 128, 128) is None
    assert rule.rejects(127, 255, 33) == "N=255 is not a multiple of 4; K=33 is not a multiple of 4"


def test_unknown_kernel_lists_valid_names(capsys):
    assert main(["catalog", "--kernels", "naive,bogus,other"]) == 2
    err = capsys.readouterr().err
    assert "bogus, other" in err and "tiled_coalesced" in err
    with pytest.raises(KeyError):
        select(["nope"])
    with pytest.raises(KeyError, match="valid: baseline"):
        select(families=["nope"])


def test_kernels_and_families_together_select_their_union_in_catalog_order():
    tf32 = [s.name for s in select(families=["tf32"])]
    both = [s.name for s in select(["naive", "c_naive"], ["tf32"])]
    assert set(both) == {"naive", "c_naive", *tf32} and len(both) == len(tf32) + 2
    order = [s.name for s in select()]
    assert both == sorted(both, key=order.index)


def test_catalog_text_shows_ladder_position_and_published_figure(capsys):
    assert main(["catalog", "--families", "simt_fp32"]) == 0
    naive = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("naive "))
    assert " 0 ladder " in naive and "% of cuBLAS, NVIDIA GeForce RTX 3050 Laptop GPU 2048^3" in naive


WALK_C_FP32 = ["c_naive", "c_coalesced", "c_smem", "c_blocktile_1d", "c_blocktile_2d", "c_vectorized", "c_warptile"]
WALK_C_HALF = ["h_simt_warptile", "h_wmma_naive", "h_wmma_warptile", "h_wmma_dbuf", "h_wmma_pipe"]


def test_walk_c_fp32_is_complete_and_in_ladder_order():
    stages = [s for s in catalog() if s.family == "simt_fp32_c"]
    assert [s.name for s in stages] == WALK_C_FP32
    assert all(
        s.walk == "C" and s.group == "ladder" and s.dtype == "fp32" and s.baseline == "cublas_fp32" for s in stages
    )
    assert [s.position for s in stages] == list(range(len(WALK_C_FP32)))
    assert [int(s.source.split("/")[1][:2]) for s in stages] == [s.position for s in stages]
    assert [s.source.split("/")[0] for s in stages] == ["simt_fp32_c"] * len(stages)
    # Published figures: the write-up's RTX 4090 4096^3 table, % of its (TF32) PyTorch, said so in the source.
    assert all(s.published and s.published.device.endswith("RTX 4090") and s.published.m == 4096 for s in stages)
    assert stages[0].published.ms == pytest.approx(210.29) and stages[-1].published.pct_of_baseline == pytest.approx(
        54.4
    )
    assert all("PyTorch" in s.published.source and "TF32" in s.published.source for s in stages)
    # Uncoalesced vs coalesced mapping is the only change between 00 and 01.
    naive, coalesced = (s.source_path.read_text() for s in stages[:2])
    assert "threadIdx.x % 32;  // consecutive threads: consecutive rows" in naive
    assert "threadIdx.x % 32;  // consecutive threads: consecutive columns" in coalesced


def test_walk_c_half_is_complete_and_in_ladder_order():
    stages = [s for s in catalog() if s.family == "half_c"]
    assert [s.name for s in stages] == [f"{k}_{d}" for k in WALK_C_HALF for d in ("fp16", "bf16")]
    for s in stages:
        dtype = s.name.rsplit("_", 1)[1]
        t = {"fp16": "__half", "bf16": "__nv_bfloat16"}[dtype]
        assert s.walk == "C" and s.dtype == dtype and s.baseline == f"cublas_{dtype}"
        assert all(k.split("<")[1].startswith(t) for k in s.kernel_names), s.kernel_names  # one template, two types
        assert s.min_cc == (80 if dtype == "bf16" or "pipe" in s.name else 70)
    # One source file per kernel, shared by both input types, numbered in ladder order.
    by_kernel = {}
    for s in stages:
        by_kernel.setdefault(s.name.rsplit("_", 1)[0], set()).add(s.source)
    assert all(len(v) == 1 for v in by_kernel.values())
    files = [next(iter(by_kernel[k])) for k in WALK_C_HALF]
    assert [int(f.split("/")[1][:2]) for f in files] == list(range(len(WALK_C_HALF)))
    positions = [s.position for s in stages]
    assert positions == sorted(positions)
    published = {s.name: s.published for s in stages if s.published}
    assert set(published) == {"h_wmma_warptile_fp16", "h_wmma_warptile_bf16", "h_wmma_dbuf_fp16", "h_wmma_dbuf_bf16"}
    assert published["h_wmma_warptile_fp16"].pct_of_baseline == pytest.approx(34.4)
    assert "does not state" in published["h_wmma_dbuf_bf16"].source


def test_walk_c_shape_rules_and_launches():
    by_name = {s.name: s for s in catalog()}
    for name in WALK_C_FP32[:5]:
        assert by_name[name].shapes.describe() == "any shape"
    for name in ("c_vectorized", "c_warptile"):
        assert by_name[name].shapes.rejects(127, 132, 36) is None and by_name[name].shapes.rejects(127, 130, 36)
    for dtype in ("fp16", "bf16"):
        assert by_name[f"h_wmma_naive_{dtype}"].shapes.rejects(48, 80, 32) is None
        assert by_name[f"h_wmma_naive_{dtype}"].shapes.rejects(40, 80, 32)
        for k in ("h_simt_warptile", "h_wmma_warptile", "h_wmma_dbuf", "h_wmma_pipe"):
            assert by_name[f"{k}_{dtype}"].shapes.rejects(127, 136, 40) is None  # any M, N and K multiples of 8
            assert by_name[f"{k}_{dtype}"].shapes.rejects(127, 132, 40)
    # Dynamic shared memory where the kernel declares it; the pipeline's 3 stages need more than 48 KB.
    assert by_name["h_wmma_pipe_fp16"].launches[0].dynamic_smem > 48 * 1024
    assert by_name["c_warptile"].launches[0].dynamic_smem == 1 * 16 * (128 + 4 + 128) * 4
    # The tuning stages are not in the catalog the default plan draws from.
    assert not any(s.group == "tuning" for s in catalog())
