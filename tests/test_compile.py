"""Every kernel compiles through NVRTC for every CI arch: no GPU, no spills, within limits."""

import json
import re
from pathlib import Path

import pytest

from farm.cli import HARNESS_CHECKS, main
from farm.measure.checks import KERNELS as CHECK_KERNELS
from farm.measure.compiler import (
    CI_ARCHS,
    CompileError,
    code_sha256,
    compile_source,
    elf_end,
    parse_ptxas_log,
    whole_cubin,
)
from kernels.registry import catalog


@pytest.mark.parametrize("arch", CI_ARCHS)
def test_every_kernel_compiles(arch, capsys, within_limits):
    assert main(["compile", "--arch", arch, "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    stages = {s.name: s for s in catalog() if not s.is_baseline and s.compile_arch(arch)}
    kernels = {(name, k) for name, s in stages.items() for k in s.kernel_names}
    harness = {(HARNESS_CHECKS, k) for k in CHECK_KERNELS}  # every cell's inputs and verification
    assert {(r["stage"], r["kernel"]) for r in results} == kernels | harness
    for r in results:
        assert r["ok"] and r["arch"] == (
            arch if r["stage"] == HARNESS_CHECKS else stages[r["stage"]].compile_arch(arch)
        )
    within_limits(results, arch)


def test_a_kernel_over_a_limit_is_compiled_again(capsys, within_limits):
    """within_limits (conftest.py) given 12_multibuf spilling: a warning, as new processes compile it clean; and
    over a shared-memory limit that new processes meet too (its 66,560 bytes against 60 KB): a failure."""
    assert main(["compile", "--arch", "sm_86", "--kernels", "multibuf", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    with pytest.warns(UserWarning, match="odd compile.*sgemm_multibuf"):
        within_limits([{**row, "spill_bytes": 16}], "sm_86")
    with pytest.raises(AssertionError):
        within_limits([row], "sm_86", smem_limit=60 * 1024)


def test_no_generic_lambda_in_device_code():
    """NVRTC 13.0 (the GPU hosts') refuses a lambda with an `auto` parameter in device code ("not allowed in JIT
    mode"); 13.5 (CI's) takes it: 22 at f8a498c failed on every H200."""
    generic = re.compile(r"\[[^\]\n]*\]\s*\([^)]*\bauto\b")
    root = Path(__file__).resolve().parents[1]
    sources = [*root.glob("kernels/**/*.cu*"), *root.glob("farm/**/*.cu")]
    found = [(p.name, m[0]) for p in sources for m in generic.finditer(p.read_text())]
    assert sources and not found, found


def test_warp_rebalance_fits_three_blocks_per_sm_on_sm86():
    stage = next(s for s in catalog() if s.name == "warp_rebalance")
    res = next(iter(compile_source(stage.source_path, "sm_86", stage.kernel_names).resources.values()))
    threads = stage.launches[0].block()[0] * stage.launches[0].block()[1]
    regs_per_warp = -(-res.registers * 32 // 256) * 256  # per warp, in units of 256
    assert 3 * (threads // 32) * regs_per_warp <= 65536, res
    assert 3 * (res.static_smem_bytes + 1024) <= 100 * 1024, res  # 1 KB reserved per block


def test_cache_hit_second_time_and_key_covers_options(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_FARM_CACHE", str(tmp_path))
    stage = next(s for s in catalog() if s.name == "naive")
    first = compile_source(stage.source_path, "sm_86", stage.kernel_names)
    again = compile_source(stage.source_path, "sm_86", stage.kernel_names)
    other = compile_source(stage.source_path, "sm_86", stage.kernel_names, ("-lineinfo",))
    assert not first.cache_hit and again.cache_hit and not other.cache_hit
    assert first.cubin_path == again.cubin_path != other.cubin_path
    assert first.cubin_path.read_bytes()[:4] == b"\x7fELF"


def test_the_cached_cubin_is_the_whole_elf_image(tmp_path, monkeypatch):
    """The file ends where its ELF header says (CuPy's getCUBIN hands back one byte less: whole_cubin)."""
    from cupy.cuda import nvrtc

    monkeypatch.setenv("GEMM_FARM_CACHE", str(tmp_path))
    stage = next(s for s in catalog() if s.name == "d_tma_store_bf16")
    cubin = compile_source(stage.source_path, "sm_90a", stage.kernel_names).cubin_path.read_bytes()
    assert len(cubin) == elf_end(cubin)
    prog = nvrtc.createProgram('extern "C" __global__ void k() {}', "k.cu", [], [])
    try:
        nvrtc.compileProgram(prog, ["--gpu-architecture=sm_90"])
        short = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    assert len(whole_cubin(short)) == elf_end(short) and whole_cubin(whole_cubin(short)) == whole_cubin(short)


def test_code_hash_ignores_comments_and_sees_code(tmp_path, monkeypatch, capsys):
    """compile --json's code_sha256 is how a source refactor is shown to leave the machine code alone."""
    monkeypatch.setenv("GEMM_FARM_CACHE", str(tmp_path / "cache"))
    stage = next(s for s in catalog() if s.name == "ldg_vec")
    text = stage.source_path.read_text()
    commented, changed = tmp_path / "commented.cu", tmp_path / "changed.cu"
    commented.write_text("// a comment and a blank line shift every line below\n\n" + text)
    changed.write_text(text.replace("BK = 32", "BK = 16"))

    def code(path):
        return code_sha256(compile_source(path, "sm_90", stage.kernel_names).cubin_path.read_bytes())

    assert code(stage.source_path) == code(commented) != code(changed)
    assert main(["compile", "--arch", "sm_90", "--kernels", "ldg_vec", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["code_sha256"] == code(stage.source_path)


def test_code_hash_is_the_same_on_every_compile(tmp_path, monkeypatch):
    """WMMA kernels' CUBINs differ between compiles (a symbol's per-process number); their code hash does not."""
    stage = next(s for s in catalog() if s.name == "h_wmma_naive_fp16")
    cubins = []
    for run in ("first", "second"):
        monkeypatch.setenv("GEMM_FARM_CACHE", str(tmp_path / run))
        cubins.append(compile_source(stage.source_path, "sm_90", stage.kernel_names).cubin_path.read_bytes())
    assert code_sha256(cubins[0]) == code_sha256(cubins[1])
    with pytest.raises(ValueError, match="not a 64-bit ELF"):
        code_sha256(b"not a cubin")


def test_broken_source_reports_the_log(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* x) { x[0] = undefined_name; }')
    with pytest.raises(CompileError, match="undefined_name"):
        compile_source(bad, "sm_90", ("k",))


def test_compile_cli_rejects_bad_arch(capsys):
    assert main(["compile", "--arch", "sm90"]) == 2
    assert "sm_90" in capsys.readouterr().err


def test_parse_ptxas_log():
    log = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
ptxas info    : Function properties for _Z3fooPf
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'bar' for 'sm_90'
ptxas info    : Function properties for bar
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 380 bytes cmem[0]
"""
    res = parse_ptxas_log(log)
    assert res["_Z3fooPf"].registers == 40 and res["_Z3fooPf"].static_smem_bytes == 8192
    assert res["_Z3fooPf"].spill_store_bytes == 4 and res["_Z3fooPf"].stack_frame_bytes == 8
    assert res["bar"].registers == 12 and res["bar"].static_smem_bytes == 0


def test_compile_in_parallel_processes_reports_the_same(capsys):
    assert main(["compile", "--arch", "sm_80", "--families", "tf32", "--json"]) == 0
    serial = json.loads(capsys.readouterr().out)
    assert main(["compile", "--arch", "sm_80", "--families", "tf32", "--json", "--jobs", "2"]) == 0
    parallel = json.loads(capsys.readouterr().out)
    drop = lambda rs: [{k: v for k, v in r.items() if k != "cached"} for r in rs]  # noqa: E731
    assert drop(parallel) == drop(serial) and len(serial) == 5
    assert main(["compile", "--arch", "sm_80", "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_compile_in_parallel_keeps_each_stages_options(capsys, monkeypatch):
    """Each stage's options (walk F's -DFP8_B_E5M2) reach its compile in the worker processes, beside the harness's
    checks (before 2026-11-27 they were dropped there: the E5M2 stages reported their E4M3 twins' code)."""
    import farm.cli

    pair = [s for s in catalog() if s.name in ("f_mma_overlap_fp8", "f_mma_overlap_fp8_e4m3_e5m2")]
    monkeypatch.setattr(farm.cli, "select", lambda kernels, families: pair)
    assert pair[1].compile_options and main(["compile", "--arch", "sm_90a", "--json", "--jobs", "2"]) == 0
    code = {r["stage"]: r["code_sha256"] for r in json.loads(capsys.readouterr().out)}
    assert set(code) == {"checks", "f_mma_overlap_fp8", "f_mma_overlap_fp8_e4m3_e5m2"}
    assert code["f_mma_overlap_fp8_e4m3_e5m2"] != code["f_mma_overlap_fp8"]


def _compiles_for_sm90a_alone(family: str, capsys, within_limits) -> list:
    """The family's stages, once `farm compile` builds them for sm_90a on sm_90 within limits and leaves them out on
    sm_89, where their cells are skipped with the reason."""
    stages = [s for s in catalog() if s.family == family]
    assert main(["compile", "--arch", "sm_90", "--families", family, "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert {r["stage"] for r in results} == {s.name for s in stages}
    assert all(r["ok"] and r["arch"] == "sm_90a" for r in results), results
    within_limits(results, "sm_90")
    assert main(["compile", "--arch", "sm_89", "--families", family, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    for stage in stages:
        assert stage.unsupported_reason(4096, 4096, 4096, 90) is None
        assert (
            stage.unsupported_reason(4096, 4096, 4096, 89)
            == "needs sm_90a (Hopper's wgmma/TMA/setmaxnreg), this GPU is sm_89"
        )
        assert stage.unsupported_reason(4096, 4096, 4096, 100).endswith("this GPU is sm_100")
    return stages


def test_fp8_e4m3_e5m2_stages_are_their_e4m3_files_with_b_in_e5m2(capsys):
    """The B-in-E5M2 class is no copy: each stage is an E4M3 stage's file and kernel built with FP8_B_E5M2 (wgmma's B
    .e5m2), so other machine code; the E4M3 stage's compile has no define."""
    stages = {s.name: s for s in catalog() if s.family == "hopper_fp8"}
    mixed = [s for s in stages.values() if s.dtype == "fp8_e4m3_e5m2"]
    assert [s.name for s in mixed] == [
        "f_mma_overlap_fp8_e4m3_e5m2",
        "f_multicast_fp8_e4m3_e5m2",
        "f_swap_plan_fp8_e4m3_e5m2",
        "f_half_tiles_fp8_e4m3_e5m2",
    ]
    assert main(["compile", "--arch", "sm_90", "--families", "hopper_fp8", "--json"]) == 0
    code = {r["stage"]: r["code_sha256"] for r in json.loads(capsys.readouterr().out)}
    for stage in mixed:
        e4m3 = stages[stage.name.removesuffix("_e4m3_e5m2")]
        assert all(getattr(stage, a) == getattr(e4m3, a) for a in ("source_path", "kernel_names", "position"))
        assert stage.compile_options == ("-DFP8_B_E5M2",) and e4m3.compile_options == ()
        assert code[stage.name] != code[e4m3.name]


def test_walk_d_compiles_for_sm90a_alone_and_skips_elsewhere(capsys, within_limits):
    """Walk D (hopper_d) is in the catalog as BF16/FP16 pairs, sm_90a alone."""
    walk_d = _compiles_for_sm90a_alone("hopper_d", capsys, within_limits)
    assert len(walk_d) >= 2 and {s.walk for s in walk_d} == {"D"}
    assert {(s.dtype, s.baseline) for s in walk_d} == {("bf16", "cublas_bf16"), ("fp16", "cublas_fp16")}


def test_hopper_fp8_compiles_for_sm90a_alone_and_skips_elsewhere(capsys, within_limits):
    """The FP8 family, sm_90a alone (Ada's FP8 skipped too); shapes off TMA's 16-byte strides refused up front."""
    stages = _compiles_for_sm90a_alone("hopper_fp8", capsys, within_limits)
    classes = {(s.dtype, s.baseline) for s in stages}
    assert classes == {("fp8_e4m3", "cublaslt_fp8_e4m3"), ("fp8_e4m3_e5m2", "cublaslt_fp8_e4m3_e5m2")}
    fp8 = [s for s in stages if s.dtype == "fp8_e4m3"]
    assert [s.position for s in fp8] == list(range(len(fp8)))
    for stage in stages:
        assert stage.unsupported_reason(1001, 264, 272, 90) is None  # any M
        assert stage.unsupported_reason(1024, 1024, 1000, 90) == "K=1000 is not a multiple of 16"
