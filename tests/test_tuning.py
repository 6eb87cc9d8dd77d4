"""Walk C tile autotuning: the candidate grid, rejections before compiling, the `tune` plan field,
and NVRTC compilation of every valid configuration for sm_90 (a sample for the other CI archs)."""

import json
import os
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from farm.cli import _compile_work, main, stage_work
from farm.measure.compiler import CI_ARCHS
from farm.plan import PlanError, load_plan
from kernels import tuning
from kernels.registry import catalog
from kernels.tuning import TUNABLES, Config, candidates, find, tuning_stages

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_tunable_kernel_has_at_least_20_valid_configurations():
    assert set(TUNABLES) == {
        "c_warptile",
        "h_wmma_dbuf_fp16",
        "h_wmma_dbuf_bf16",
        "h_wmma_pipe_fp16",
        "h_wmma_pipe_bf16",
    }
    for kernel in TUNABLES:
        cands = candidates(kernel)
        valid = [c for c in cands if c.reason is None]
        assert len(valid) >= 20, kernel
        assert len({c.name for c in cands}) == len(cands)  # names encode the whole configuration
        assert all(c.reason for c in cands if c not in valid)  # every rejection says why
        assert len(candidates(kernel, "sm_90")) == len(cands)
        assert sum(c.reason is None for c in candidates(kernel, "sm_90")) >= len(valid)  # 227 KB admits more


def test_the_ladder_configurations_are_in_the_tuning_space():
    by_name = {s.name: s for s in catalog()}
    for kernel in TUNABLES:
        ladder = by_name[kernel].launches[0]
        tuned = {s.launches[0].kernel: s for s in tuning_stages([kernel])}
        assert ladder.kernel in tuned, kernel
        assert tuned[ladder.kernel].launches[0] == ladder  # same template arguments, threads, tile and smem


def test_rejections_name_their_rule():
    def reason(kernel, *cfg, arch=None):
        t = TUNABLES[kernel]
        return tuning._check(t, Config(*cfg), arch).reason

    assert "over the 99 KB every CI arch" in reason("h_wmma_pipe_fp16", 128, 256, 64, 64, 64, 4)  # 4 x 51 KB
    assert reason("h_wmma_pipe_fp16", 128, 256, 64, 64, 64, 2, arch="sm_90") is None
    assert "over the 227 KB of sm_90" in reason("h_wmma_pipe_fp16", 256, 128, 64, 64, 64, 5, arch="sm_90")
    assert "2 warps per block" in reason("c_warptile", 64, 64, 16, 32, 64, 1)
    assert "BK (k steps of 16): 24 is not a multiple of 16" in reason("h_wmma_dbuf_fp16", 128, 128, 24, 64, 32, 2)
    assert "B tile chunks BK*BN/4 = 128 over threads: 128 is not a multiple of 256" in reason(
        "c_warptile", 128, 64, 8, 32, 32, 1
    )
    assert "registers" in reason("c_warptile", 128, 256, 32, 64, 64, 2)  # spilled on sm_80/86/90 when compiled
    for bm, bn in ((128, 128), (128, 256), (256, 128)):  # spilled 16-32 bytes with NVRTC 13.0 on an H200
        assert "registers" in reason("c_warptile", bm, bn, 32, 64, 64, 1, arch="sm_90")
    assert "registers" in reason("h_wmma_dbuf_bf16", 128, 128, 64, 64, 64, 2)
    # No rejected configuration is ever turned into a stage.
    valid = {s.name for s in tuning_stages()}
    assert all(c.name not in valid for k in TUNABLES for c in candidates(k) if c.reason)


def test_tuning_stages_look_like_their_ladder_stage():
    by_name = {s.name: s for s in catalog()}
    for s in tuning_stages():
        base = by_name[s.name.split("_tune_")[0]]
        assert s.group == "tuning" and s.family == base.family and s.walk == "C"
        assert (s.dtype, s.baseline, s.shapes, s.min_cc, s.source) == (
            base.dtype,
            base.baseline,
            base.shapes,
            base.min_cc,
            base.source,
        )
        assert s.published is None
        assert find(s.name) == s
    assert find("c_warptile_tune_1x1x1_1x1_s1") is None and find("c_naive") is None


def test_tune_plan_field():
    plan = load_plan(ROOT + "/plans/tune.toml")
    stages = plan.stages()
    names = [s.name for s in stages]
    assert plan.sizes == tuple((s, s, s) for s in (64, 128, 256, 512, 1024, 2048, 4096, 8192))
    assert names[:3] == ["cublas_fp32", "cublas_fp16", "cublas_bf16"]
    for kernel in plan.tune:
        assert kernel in names  # the ladder configuration, the untuned reference
        assert sum(n.startswith(kernel + "_tune_") for n in names) >= 20
    assert len(plan.cells()) == len(stages) * 8
    only = load_plan(tune=["c_warptile"], sizes=[256])
    assert [s.name for s in only.stages()][0] == "cublas_fp32"
    assert all(s.name.startswith("c_warptile_tune_") for s in only.stages()[1:])
    with pytest.raises(PlanError, match="has no tuning space; tunable: c_warptile"):
        load_plan(tune=["c_naive"], sizes=[256])
    plain = load_plan(kernels=["c_naive"], sizes=[256])
    assert [s.name for s in plain.stages()] == ["cublas_fp32", "c_naive"]


def _compile(name_arch) -> list[dict]:
    """A configuration's `farm compile --json` rows."""
    name, arch = name_arch
    return _compile_work(stage_work(find(name), arch))


def _compile_within_limits(jobs, within_limits):
    with ProcessPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        rows = list(pool.map(_compile, jobs))
    assert all(r["ok"] for rs in rows for r in rs), rows
    for arch in {arch for _, arch in jobs}:
        within_limits([r for rs, (_, a) in zip(rows, jobs) if a == arch for r in rs], arch)


def test_every_valid_configuration_compiles_for_sm_90(within_limits):
    jobs = [(s.name, "sm_90") for s in tuning_stages(arch="sm_90")]
    assert len(jobs) >= 5 * 20
    _compile_within_limits(jobs, within_limits)


def test_a_sample_of_configurations_compiles_for_the_other_archs(within_limits):
    rng = random.Random(6)
    jobs = []
    for arch in CI_ARCHS:
        if arch == "sm_90":
            continue
        for kernel in TUNABLES:
            valid = [s.name for s in tuning_stages([kernel], arch=arch)]
            jobs += [(n, arch) for n in rng.sample(valid, 2)]
    _compile_within_limits(jobs, within_limits)


def test_compile_cli_tuning_flag(capsys):
    # not tunable: --tuning would add nothing, and says so rather than being ignored
    assert main(["compile", "--arch", "sm_90", "--kernels", "h_wmma_naive_fp16", "--tuning", "--json"]) == 2
    assert "none of the selected kernels is tunable" in capsys.readouterr().err
    # sm_90: the configurations test_every_valid_configuration_compiles_for_sm_90 compiled are cache hits now.
    assert main(["compile", "--arch", "sm_90", "--kernels", "h_wmma_pipe_bf16", "--tuning", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    expected = {"h_wmma_pipe_bf16"} | {s.name for s in tuning_stages(["h_wmma_pipe_bf16"], arch="sm_90")}
    assert {r["stage"] for r in results} == expected and all(r["ok"] and r["spill_bytes"] == 0 for r in results)
    assert (
        max(r["static_smem_bytes"] + r["dynamic_smem_bytes"] for r in results) > 99 * 1024
    )  # sm_90-only ones included
