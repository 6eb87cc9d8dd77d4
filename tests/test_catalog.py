import json

import pytest

from farm.cli import main
from kernels.registry import ShapeRule, catalog, select

WALK_A = ["naive", "tiled", "tiled_coalesced", "regblock", "warp_rebalance", "bank_pad_vec",
          "gmem_vec", "wider_m", "supertile", "ldg_vec", "ldg_super", "ldg_wider2", "multibuf", "splitk"]
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
    assert published["tf32_bt"].ms == pytest.approx(15.925327) and published["tf32_swizzle_bcf_dbf"].pct_of_baseline == 103.1


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
