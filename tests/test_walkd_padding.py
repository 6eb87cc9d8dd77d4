"""Walk D at any N, without a GPU: the shape rule, the padded launch sequence (farm/measure/padding.py), the pad and
unpad launches' geometry (farm/measure/checks.py), the memory a padded cell needs, and plans/walkd.toml's cells.
tests/test_gpu_walkd_shapes.py runs every stage at odd N on an sm_90 GPU."""

import sys
import types

import numpy as np
import pytest

from farm.measure.checks import Checks
from farm.measure.padding import padded_launcher, padding_note
from farm.measure.sizing import bytes_needed
from farm.plan import load_plan
from kernels.registry import catalog, stage_named

WALK_D = [s for s in catalog() if s.family == "hopper_d"]
ODD_N = [(1, 4097, 4096), (127, 255, 40), (4097, 4097, 4104), (3, 5, 8)]


@pytest.mark.parametrize("shape", ODD_N, ids=lambda s: "x".join(map(str, s)))
def test_every_walk_d_stage_takes_any_n_and_pads_it_to_a_multiple_of_8(shape):
    m, n, k = shape
    for s in WALK_D:
        assert s.unsupported_reason(m, n, k, 90) is None, s.name
        assert s.padded_n(n) == -(-n // 8) * 8 > n
        assert padding_note(s, n).startswith(f"ran at N={s.padded_n(n)}: B copied into a zero-padded K x")
        assert s.describe_shapes() == "K % 8 == 0, any N (pad to 8)"


def test_n_multiples_of_8_run_as_they_are_and_k_off_8_is_still_skipped():
    for s in WALK_D:
        assert s.padded_n(4096) == 4096 and s.padded_n(8) == 8 and padding_note(s, 4096) is None
        assert s.unsupported_reason(3, 5, 7, 90) == "K=7 is not a multiple of 8"
        assert s.unsupported_reason(127, 255, 33, 90) == "K=33 is not a multiple of 8"
        assert "needs sm_90a" in s.unsupported_reason(4097, 4097, 4104, 89)
    for s in catalog():  # no other stage pads, and a library never does
        if s.family != "hopper_d":
            assert s.padded_n(4097) == 4097 and padding_note(s, 4097) is None, s.name


def test_a_planned_or_split_stage_sizes_its_workspace_at_the_padded_n():
    split_k, host_plan = stage_named("d_split_k_bf16"), stage_named("d_host_plan_bf16")
    assert split_k.workspace_floats(127, 255, 40, 132) == split_k.workspace_floats(127, 256, 40, 132) == 8 * 127 * 256
    # host plans that share tiles: 3 and 7 planes at N of 2056 and 1000 (tests/test_gpu_walkd_shapes.py)
    for m, n, k in [(3000, 2053, 2048), (2500, 999, 2048)]:
        padded = host_plan.padded_n(n)
        assert host_plan.workspace_floats(m, n, k, 132) == host_plan.workspace_floats(m, padded, k, 132) > 0


def test_a_padded_cell_counts_the_copies_of_b_and_c_in_its_memory():
    device = {"sm_count": 132, "memory_bytes": 80e9, "arch": "sm_90"}
    s = stage_named("d_tma_bf16")
    plain = 4 * (4097 * 4104 + 4104 * 4097 + 2 * 4097 * 4097)
    assert bytes_needed(s, 4097, 4097, 4104, device) == plain + 4 * (4104 + 4097) * 4104
    assert bytes_needed(s, 4096, 4096, 4104, device) == 4 * (4096 * 4104 * 2 + 2 * 4096 * 4096)


class _Recorder:
    """A stand-in for Checks and a stage's launcher: records what would be launched, in order."""

    def __init__(self):
        self.calls = []

    def pad_columns(self, x, padded):
        self.calls.append(("pad", x.shape, padded.shape))

    def poison(self, c):
        self.calls.append(("poison", c.shape))

    def unpad_columns(self, padded, x):
        self.calls.append(("unpad", padded.shape, x.shape))

    def launcher(self, operands, m, n, k):
        self.calls.append(("launcher", operands["B"].shape, operands["C"].shape, (m, n, k)))
        return lambda: self.calls.append(("stage", operands["B"].shape, operands["C"].shape))


@pytest.fixture
def host_cupy(monkeypatch):
    """NumPy in CuPy's place: the launch sequence's buffers, without a GPU."""
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(empty=np.empty, float32=np.float32))


def test_the_padded_sequence_is_pad_then_the_stage_at_the_padded_n_then_unpad(host_cupy):
    rec, s = _Recorder(), stage_named("d_multicast_fp16")
    m, n, k = 127, 255, 40
    a, b, c = np.empty((m, k), np.float16), np.empty((k, n), np.float16), np.empty((m, n), np.float32)
    run = padded_launcher(s, rec, rec.launcher, {"A": a, "B": b, "C": c, "W": None}, m, n, k)
    assert rec.calls == [("poison", (m, 256)), ("launcher", (k, 256), (m, 256), (m, 256, k))]  # once, at padded N
    rec.calls.clear()
    run()
    run()
    once = [("pad", (k, n), (k, 256)), ("stage", (k, 256), (m, 256)), ("unpad", (m, 256), (m, n))]
    assert rec.calls == once * 2  # every launch of the sequence (every timed one) copies B in and C out


def test_an_n_that_needs_no_padding_gets_the_stages_own_launches(host_cupy):
    rec, s = _Recorder(), stage_named("d_tma_store_bf16")
    b, c = np.empty((40, 256), np.uint16), np.empty((127, 256), np.float32)
    padded_launcher(s, rec, rec.launcher, {"B": b, "C": c}, 127, 256, 40)()
    assert rec.calls == [("launcher", (40, 256), (127, 256), (127, 256, 40)), ("stage", (40, 256), (127, 256))]


def _launches(name, x, padded):
    """(grid, block, args) of Checks' pad or unpad launch between `x` and `padded`, on a 132-SM chip."""
    checks, launched = Checks.__new__(Checks), []
    checks._max_grid = 32 * 132
    checks._kernels = {name: lambda grid, block, args: launched.append((grid, block, args))}
    (checks.pad_columns if name.startswith("pad") else lambda x, p: checks.unpad_columns(p, x))(x, padded)
    return launched[0]


def test_pad_and_unpad_launch_one_thread_a_16_byte_chunk_of_a_padded_row():
    b, wide_b = np.empty((4104, 4097), np.uint16), np.empty((4104, 4104), np.uint16)
    grid, block, args = _launches("pad_columns<unsigned short>", b, wide_b)
    assert (grid, block) == ((3, 4104), (256, 1)) and args[0] is b and args[1] is wide_b  # 513 chunks a row
    assert [int(v) for v in args[2:]] == [4104, 4097, 4104]
    c, wide_c = np.empty((4096, 1), np.float32), np.empty((4096, 8), np.float32)
    grid, block, args = _launches("unpad_columns<float>", c, wide_c)
    assert (grid, block) == ((1, 32), (2, 128)) and args[0] is wide_c and args[1] is c  # 2 chunks a row, 128 rows
    assert [int(v) for v in args[2:]] == [4096, 1, 8]
    b, wide_b = np.empty((70000, 2047), np.uint16), np.empty((70000, 2048), np.uint16)  # never touched
    assert _launches("pad_columns<unsigned short>", b, wide_b)[0] == (1, 65535)  # rows past grid y: strided


@pytest.mark.parametrize(
    "x, padded",
    [
        (np.empty((8, 5), np.float32), np.empty((8, 8), np.float32)),  # pad moves 16-bit elements
        (np.empty((8, 5), np.uint16), np.empty((7, 8), np.uint16)),  # rows differ
        (np.empty((8, 9), np.uint16), np.empty((8, 8), np.uint16)),  # narrower than x
        (np.empty((8, 5), np.uint16), np.empty((8, 6), np.uint16)),  # rows not whole 16-byte chunks
    ],
)
def test_pad_refuses_buffers_that_do_not_match(x, padded):
    with pytest.raises(ValueError):
        _launches("pad_columns<unsigned short>", x, padded)


def test_walkd_plan_runs_every_n_and_skips_only_k_off_8():
    plan = load_plan("plans/walkd.toml")
    skipped = {
        (c.m, c.n, c.k)
        for c in plan.cells(repeats=1)
        if not stage_named(c.stage).is_baseline and stage_named(c.stage).unsupported_reason(c.m, c.n, c.k, 90)
    }
    assert skipped == {(3, 5, 7)}
    assert {(4096, 1, 4096), (4097, 4097, 4104)} <= set(plan.sizes)
