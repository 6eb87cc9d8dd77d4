"""Walk D 17's host plan (kernels/hopper_d/host_plan.py, half_launch_plan): its choices on an H100's 132 SMs (the
shapes its GPU tests run, tests/test_gpu_walkd_shapes.py, and the LLM layers it changes), 16's plan wherever 64-row
tiles save nothing. CPU only."""

import dataclasses
import json
from functools import partial

import h100_plans
import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_walkd_shapes import HALF_TILES_SHAPES

from farm.cli import main
from farm.measure.compiler import compile_source
from kernels.hopper_d.host_plan import half_cost
from kernels.registry import stage_named

LAUNCH = stage_named("d_half_tiles_bf16").launches[0]
SIXTEEN = stage_named("d_priced_plan_bf16").launches[0]
planned = partial(h100_plans.planned, LAUNCH)


def branch(args: dict) -> tuple[int, int, int]:
    return args["ROWS"], args["WIDTH"], args["SK"]


@pytest.mark.parametrize("shape", HALF_TILES_SHAPES, ids=shape_id)
def test_the_plan_at_the_gpu_tests_shapes(shape):
    assert branch(planned(*shape)) == HALF_TILES_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    reached = {(rows, width, sk > 0) for rows, width, sk in HALF_TILES_SHAPES.values()}
    half = {(64, w, False) for w in (64, 128, 256)}
    assert half | {(128, 64, True)} <= reached and {(128, w, False) for w in (64, 128, 256)} <= reached


def test_where_64_row_tiles_save_nothing_it_is_16s_plan_and_workspace():
    for shape in [
        (1024, 1024, 1024),
        (2048, 2048, 2048),
        (4096, 4096, 4096),
        (8192, 8192, 8192),
        (1024, 1024, 8192),
        (4096, 512, 3584),
        (1024, 3584, 18944),
        (4096, 3584, 18944),
        (100, 2056, 4104),
    ]:
        mine, sixteen = LAUNCH.plan(*shape, H100_SMS), SIXTEEN.plan(*shape, H100_SMS)
        assert mine.args == {"ROWS": 128, **sixteen.args} and mine.workspace_floats == sixteen.workspace_floats, shape


def test_the_k_v_projection_runs_128_tiles_of_64_x_64_with_no_workspace():
    p = LAUNCH.plan(1024, 512, 3584, H100_SMS)
    assert p.args == {"ROWS": 64, "WIDTH": 64, "DP": 16 * 8, "SK": 0} and p.workspace_floats == 0  # every tile whole
    # 16: 64 tiles of 128 x 64 at 56 k tiles x (64 + 32); 17: 128 of 64 x 64 at 56 x (32 + 32), one wave each
    assert half_cost(1024, 512, 3584, H100_SMS, 64) == 56 * 64


def test_a_tie_goes_to_16s_plan():
    # 1024 x 1024 x 8192: 128 tiles of 128 x 64 or of 64 x 128, one wave, 128 k tiles at 96 each way
    assert half_cost(1024, 1024, 8192, H100_SMS, 128) == 128 * 96
    assert planned(1024, 1024, 8192)["ROWS"] == 128


def test_19_is_17s_launch_with_its_own_k_loop(capsys):
    """19 changes 17's consumer k loop (stream_k.cuh's LEAN), nothing it is launched with; its code differs from 17's,
    and ptxas keeps its wgmmas asynchronous (a loop with a path around it had them serialised: warning C7515), in the
    floor probe's builds too (.ci/walkd15_probe.py)."""
    assert dataclasses.replace(stage_named("d_lean_k_loop_bf16").launches[0], kernel=LAUNCH.kernel) == LAUNCH
    kernels = "d_half_tiles_bf16,d_lean_k_loop_bf16,d_lean_k_loop_fp16"
    assert main(["compile", "--arch", "sm_90a", "--kernels", kernels, "--json"]) == 0
    code = {r["stage"]: r["code_sha256"] for r in json.loads(capsys.readouterr().out)}
    assert code["d_lean_k_loop_bf16"] != code["d_half_tiles_bf16"]
    lean = stage_named("d_lean_k_loop_bf16")
    probes = [dataclasses.replace(lean, defines=(d,)) for d in ("PROBE_LOADS_ONCE", "PROBE_L2_RESIDENT")]
    for stage in [*map(stage_named, kernels.split(",")[1:]), *probes]:
        assert wgmmas_asynchronous(stage), stage.name


def wgmmas_asynchronous(stage) -> bool:
    """Whether ptxas kept the stage's wgmmas asynchronous: no warning C7515 that it serialised them."""
    compiled = compile_source(stage.source_path, "sm_90a", stage.kernel_names, stage.compile_options)
    log = json.loads(compiled.cubin_path.with_suffix(".json").read_text())["log"]
    return "C7515" not in log and "serialized" not in log
