"""Walk D in TF32 (kernels/hopper_tf32): in the catalog, compiled for sm_90a alone, skipped elsewhere with the
reason; tensor maps sized for FP32 (boxes one 128-byte swizzle row wide) while walk D's 16-bit boxes stay as
they were."""

import json

import numpy as np
import pytest

from farm.cli import main
from farm.measure import tma
from kernels.registry import catalog, stage_named


def _family():
    return [s for s in catalog() if s.family == "hopper_tf32"]


def test_family_is_a_tf32_ladder_against_cublas_tf32_for_sm90a():
    stages = _family()
    assert [s.position for s in stages] == list(range(len(stages))) and len(stages) >= 3
    for s in stages:
        assert (s.dtype, s.baseline, s.requires_arch, s.walk, s.min_cc) == ("tf32", "cublas_tf32", "sm_90a", "D", 90)
        assert s.source.startswith(f"hopper_tf32/{s.position:02d}_") and s.source_path.is_file()
        assert s.launches[0].args[:2] == ("TMA_A", "TMA_B")


def test_compiles_for_sm90a_alone_without_spills(capsys, within_limits):
    stages = _family()
    assert main(["compile", "--arch", "sm_90", "--families", "hopper_tf32", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert {r["stage"] for r in results} == {s.name for s in stages}
    assert all(r["ok"] and r["arch"] == "sm_90a" for r in results), results
    within_limits(results, "sm_90")
    assert main(["compile", "--arch", "sm_89", "--families", "hopper_tf32", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_skipped_with_the_reason_off_hopper_and_on_unaligned_rows():
    for s in _family():
        assert s.unsupported_reason(1000, 1000, 1000, 90) is None
        assert (
            s.unsupported_reason(1024, 1024, 1024, 89)
            == "needs sm_90a (Hopper's wgmma/TMA/setmaxnreg), this GPU is sm_89"
        )
        assert s.unsupported_reason(1024, 1024, 1024, 100).endswith("this GPU is sm_100")
        assert "N=255 is not a multiple of 4" in s.unsupported_reason(127, 255, 32, 90)
        assert "K=33 is not a multiple of 4" in s.unsupported_reason(128, 256, 33, 90)


@pytest.mark.parametrize(
    "stage,storage,width",
    [
        ("tf32_persistent", np.float32, 32),
        ("tf32_wgmma", np.float32, 32),
        ("d_persistent_bf16", np.uint16, 64),
        ("d_tma_fp16", np.float16, 64),
    ],
)
def test_tensor_map_boxes_are_one_swizzle_row_wide(monkeypatch, stage, storage, width):
    built = {}
    monkeypatch.setattr(
        tma, "tensor_map", lambda matrix, dtype, rows, cols: built.setdefault(id(matrix), (dtype, rows, cols))
    )
    launch = stage_named(stage).launches[0]
    a, b = np.zeros((300, 200), storage), np.zeros((200, 100), storage)
    args = tma.tensor_map_args(launch, stage_named(stage).dtype, {"A": a, "B": b, "C": None})
    assert set(args) == {"TMA_A", "TMA_B"}
    assert built[id(a)] == (stage_named(stage).dtype, launch.tile_m, width)
    assert built[id(b)] == (stage_named(stage).dtype, width, width)
    assert width * a.itemsize == tma.SWIZZLE_BYTES
