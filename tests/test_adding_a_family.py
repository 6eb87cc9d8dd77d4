"""docs/adding-a-stage.md, done by a test: a family written in a temporary folder is in the catalog, compiles
through NVRTC (no GPU) and runs end to end in a sweep on a Ray cluster through the stand-in measurer."""

import pytest

from kernels import registry
from kernels.sources import declared, declared_launch

KERNEL = """\
// 00 naive: the example walk's first stage, one thread per element of C (a test's family, never shipped).
enum : int { THREADS = 256, BM = 16, BN = 16 };  // the launch: 256 threads cover a 16 x 16 tile of C

extern "C" __global__ void __launch_bounds__(THREADS)
ex_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    const int row = blockIdx.y * BM + threadIdx.x / BN, col = blockIdx.x * BN + threadIdx.x % BN;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
"""

STAGES_PY = '''\
"""Walk X: an example family (tests/test_adding_a_family.py)."""
from pathlib import Path

from kernels.sources import declared_launch
from kernels.stage import Stage

FAMILY = "example_walk"
ORDER = 90  # after every shipped family
HERE = Path(__file__).resolve().parent

STAGES = [
    Stage(name="ex_naive", family=FAMILY, walk="X", group="ladder", position=0, source_path=HERE / "00_naive.cu",
          launches=(declared_launch(HERE / "00_naive.cu", "ex_naive"),), what_changed="one thread per element of C"),
]
'''


@pytest.fixture
def example_family(tmp_path, monkeypatch):
    """kernels/-like folder holding one family, example_walk, named by $GEMM_FARM_KERNELS."""
    family = tmp_path / "families" / "example_walk"
    family.mkdir(parents=True)
    (family / "00_naive.cu").write_text(KERNEL)
    (family / "stages.py").write_text(STAGES_PY)
    monkeypatch.setenv(registry.FAMILIES_ENV, str(tmp_path / "families"))
    return family


def test_the_family_is_in_the_catalog_with_the_launch_its_source_declares(example_family, capsys):
    from farm.cli import main

    stage = registry.select(families=["example_walk"])[0]
    assert (stage.name, stage.family, stage.position, stage.source) == (
        "ex_naive",
        "example_walk",
        0,
        "example_walk/00_naive.cu",
    )
    launch = stage.launches[0]
    assert (launch.block(), launch.tile_m, launch.tile_n, launch.grid(100, 40)) == ((256, 1, 1), 16, 16, (3, 7, 1))
    assert [s.name for s in registry.catalog()][-1] == "ex_naive"  # ORDER 90: after the shipped families
    assert main(["catalog"]) == 0 and "ex_naive" in capsys.readouterr().out
    assert main(["compile", "--families", "example_walk", "--arch", "sm_80", "--json"]) == 0
    assert "ex_naive" in capsys.readouterr().out


def test_a_launch_constant_the_source_does_not_declare_is_an_error(example_family):
    with pytest.raises(ValueError, match="00_naive.cu declares no SPLITS"):
        declared(example_family / "00_naive.cu", "SPLITS")
    (example_family / "01_twice.cu").write_text(
        "namespace a { constexpr int THREADS = 128, BM = 8, BN = 8; }\nnamespace b { constexpr int THREADS = 256; }\n"
    )
    with pytest.raises(ValueError, match="declares THREADS more than once"):
        declared_launch(example_family / "01_twice.cu", "k")


def test_the_family_runs_end_to_end_in_a_sweep_through_the_stand_in(example_family, tmp_path):
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    from farm.data.dataset import read_table
    from farm.sweep import main, runtime_env

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1, num_gpus=1, labels={"farm.gpu-model": "H200", "standin.gpu-name": "NVIDIA_H200"})
    try:
        shipped = runtime_env()  # what the driver gives a cluster it joins, with the family's folder named
        ray.init(
            address=c.address,
            log_to_driver=False,
            runtime_env={
                **shipped,
                "env_vars": {**shipped["env_vars"], registry.FAMILIES_ENV: str(example_family.parent)},
            },
        )
        out = tmp_path / "ds"
        assert (
            main(
                [
                    "--kernels",
                    "ex_naive",
                    "--sizes",
                    "64,48x32x16",
                    "--repeats",
                    "1",
                    "--measurer",
                    "standin",
                    "--output",
                    str(out),
                ]
            )
            == 0
        )
        rows = sorted((r["stage"], r["family"], r["m"], r["status"]) for r in read_table(str(out)).to_pylist())
        assert rows == [
            ("cublas_fp32", "baseline", 48, "ok"),
            ("cublas_fp32", "baseline", 64, "ok"),
            ("ex_naive", "example_walk", 48, "ok"),
            ("ex_naive", "example_walk", 64, "ok"),
        ]
    finally:
        ray.shutdown()
        c.shutdown()


def test_every_shipped_stage_lives_in_its_family_folder():
    for s in registry.catalog():
        if not s.is_baseline:
            assert s.source_path.parent.name == s.family and s.source_path.is_file(), s.name
