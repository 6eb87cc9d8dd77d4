"""Programmatic dependent launch (farm/measure/dependent_launch.py, Launch.dependent): the kernel parameter packing
for cuLaunchKernelEx, and which stages ask for it. CPU only; the launches themselves run in tests/test_gpu_walkd_shapes.py.
"""

import numpy as np
import pytest

from farm.measure.dependent_launch import packed_arguments
from farm.measure.tma import TENSOR_MAP
from kernels.registry import catalog


class _Device:  # a CuPy array's shape as far as packing goes: .data.ptr
    def __init__(self, ptr):
        self.data = type("Mem", (), {"ptr": ptr})()


def test_packing_gives_each_argument_its_bytes_and_an_address():
    tmap = np.array([(np.arange(16, dtype=np.uint64),)], dtype=TENSOR_MAP)[0]
    buffers, pointers = packed_arguments([tmap, _Device(0xDEADBEEF000), np.int32(1024), 7])
    assert [b.nbytes for b in buffers] == [128, 8, 4, 4]
    assert buffers[0].tobytes() == tmap.tobytes()
    assert int(buffers[1][0]) == 0xDEADBEEF000
    assert int(buffers[2][0]) == 1024 and int(buffers[3][0]) == 7
    assert pointers.dtype == np.uint64 and [int(p) for p in pointers] == [b.ctypes.data for b in buffers]


def test_packing_refuses_what_it_cannot_pass():
    with pytest.raises(TypeError):
        packed_arguments([1.5])


def test_only_walk_d_15_to_24_and_walk_f_09_and_10_are_dependent_launches():
    dependent = sorted(s.name for s in catalog() for launch in getattr(s, "launches", ()) if launch.dependent)
    assert dependent == [
        f"d_{s}_{t}"
        for s in (
            "dependent_launch",
            "evict_first_c",
            "half_tiles",
            "lean_k_loop",
            "mixed_tiles",
            "priced_plan",
            "swap_dependent",
            "tail_halves",
            "tall_tiles",
            "tile_order",
        )
        for t in ("bf16", "fp16")
    ] + ["f_half_tiles_fp8", "f_half_tiles_fp8_e4m3_e5m2", "f_swap_dependent_fp8"]


def test_the_launcher_holds_its_function_and_so_its_module():
    pytest.importorskip("cuda.bindings")
    from farm.measure.dependent_launch import dependent_launcher

    function = type("Function", (), {"ptr": 0})()
    launch = dependent_launcher(function, (1, 1, 1), (32, 1, 1), [np.int32(1)], 0)
    assert launch.keep[0] is function
