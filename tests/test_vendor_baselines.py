"""cuBLAS and cuBLASLt through nvmath-python's bindings, on the CPU: stand-ins for the two binding modules
compute exactly what the C API would (column-major, leading dimensions, data types) in NumPy, so the
operand swap that makes our row-major product is checked against A @ B at odd shapes."""

import ctypes
import enum
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from fp8_host import e4m3_values, e5m2_values

from farm.measure.checks import SCALE_SLOT
from farm.measure.cublas import COMPUTE_TYPES, DATA_TYPES, CublasGemm, CublasLtGemm, Unavailable, VendorContext

_NUMPY = {0: np.float32, 2: np.float16}  # cudaDataType_t -> storage; 14 (bf16) is uint16 bits


class _Memory:
    """Device memory stand-in: fake addresses naming NumPy buffers."""

    def __init__(self):
        self._arrays, self._next = {}, itertools.count(0x1000, 0x1000)

    def array(self, values: np.ndarray):
        address = next(self._next)
        self._arrays[address] = values
        return SimpleNamespace(data=SimpleNamespace(ptr=address), itemsize=values.itemsize)

    def __getitem__(self, address: int) -> np.ndarray:
        return self._arrays[address]

    def element(self, address: int) -> float:
        """The element at `address`, which may point inside an array."""
        base = max(b for b in self._arrays if b <= address)
        values = self._arrays[base]
        return float(values[(address - base) // values.itemsize])


def _values(flat: np.ndarray, dtype: int) -> np.ndarray:
    if dtype == 28:  # CUDA_R_8F_E4M3 codes
        return e4m3_values()[flat]
    if dtype == 29:  # CUDA_R_8F_E5M2 codes
        return e5m2_values()[flat]
    if dtype == 14:
        return (flat.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return flat.astype(np.float64)


def _column_major(flat: np.ndarray, rows: int, cols: int, ld: int) -> np.ndarray:
    """The rows x cols column-major matrix with leading dimension ld stored in `flat` (a view)."""
    assert ld >= rows and flat.size >= ld * (cols - 1) + rows, "leading dimension or buffer too small"
    return np.lib.stride_tricks.as_strided(flat, shape=(rows, cols), strides=(flat.itemsize, ld * flat.itemsize))


def _scalar(address: int) -> float:
    return ctypes.c_float.from_address(address).value


class FakeCublas:
    """nvmath.bindings.cublas as far as CublasGemm uses it."""

    def __init__(self, memory: _Memory):
        self.memory, self.calls = memory, []

    def create(self):
        return 7

    def set_math_mode(self, handle, mode):
        self.calls.append(("math", mode))

    def set_workspace(self, handle, ptr, size):
        self.calls.append(("workspace", size))

    def get_version(self, handle):
        return 120800

    def set_stream(self, handle, stream):
        self.calls.append(("stream", stream))

    def gemm_ex(
        self, handle, transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c, ctype, ldc, compute, algo
    ):
        assert (transa, transb) == (0, 0)
        self.calls.append(("gemm", m, n, k, atype, btype, ctype, compute))
        op_a = _values(_column_major(self.memory[a], m, k, lda), atype)
        op_b = _values(_column_major(self.memory[b], k, n, ldb), btype)
        out = _column_major(self.memory[c], m, n, ldc)
        out[...] = _scalar(alpha) * op_a @ op_b + _scalar(beta) * np.nan_to_num(out)


class FakeCublasLt:
    """nvmath.bindings.cublasLt as far as CublasLtGemm uses it; `algorithms` is what its heuristic finds."""

    def __init__(self, memory: _Memory, algorithms: int = 1):
        self.memory, self.algorithms, self.calls = memory, algorithms, []
        self._objects, self._next = {}, itertools.count(1)
        self.MatmulHeuristicResult = lambda size: SimpleNamespace(ptr=0xBEEF, workspace_size=4096, waves_count=0.97)
        self.MatmulAlgoConfigAttribute = enum.IntEnum(
            "MatmulAlgoConfigAttribute", ["ID", "TILE_ID", "STAGES_ID"], start=0
        )
        self.config = {0: 21, 1: 503, 2: 37}  # what the heuristic's pick reports, per attribute
        self.MatmulDescAttribute = enum.IntEnum(
            "MatmulDescAttribute", {"TRANSA": 3, "A_SCALE_POINTER": 17, "B_SCALE_POINTER": 18, "FAST_ACCUM": 25}
        )
        self.attributes: dict[int, dict[str, int]] = {}  # per matmul descriptor, by attribute name

    def get_version(self):
        return 130201

    def get_matmul_algo_config_attribute_dtype(self, attr):
        return np.int32 if attr == 0 else np.uint32

    def matmul_algo_config_get_attribute(self, algo, attr, buf, size, written):
        assert algo == 0xBEEF and size == 4
        ctypes.c_int32.from_address(buf).value = self.config[int(attr)]

    def _new(self, value) -> int:
        handle = next(self._next)
        self._objects[handle] = value
        return handle

    def create(self):
        return self._new("lt")

    def matmul_desc_create(self, compute, scale):
        return self._new(("desc", compute, scale))

    def matmul_desc_set_attribute(self, desc, attr, buf, size):
        value = int.from_bytes(ctypes.string_at(buf, size), "little", signed=True)
        self.attributes.setdefault(desc, {})[self.MatmulDescAttribute(attr).name] = value

    def matrix_layout_create(self, dtype, rows, cols, ld):
        return self._new(("layout", dtype, rows, cols, ld))

    def matmul_preference_create(self):
        return self._new({})

    def matmul_preference_set_attribute(self, pref, attr, buf, size):
        self._objects[pref][attr] = ctypes.c_uint64.from_address(buf).value

    def matmul_algo_get_heuristic(self, handle, desc, a, b, c, d, pref, requested, results, count):
        self.calls.append(("heuristic", self._objects[pref]))
        ctypes.c_int32.from_address(count).value = min(requested, self.algorithms)

    def matmul(self, handle, desc, alpha, a, adesc, b, bdesc, beta, c, cdesc, d, ddesc, algo, ws, ws_bytes, stream):
        _, compute, scale = self._objects[desc]
        layouts = [self._objects[x] for x in (adesc, bdesc, cdesc, ddesc)]
        self.calls.append(("matmul", compute, scale, *[layout[1:] for layout in layouts], algo, ws_bytes))
        (_, at, rows_a, cols_a, lda), (_, bt, k2, n, ldb), (_, ct, mc, nc, ldc), _ = layouts
        attributes = self.attributes.get(desc, {})
        op_a = _values(_column_major(self.memory[a], rows_a, cols_a, lda), at)
        op_a = op_a.T if attributes.get("TRANSA") == 1 else op_a
        m, k = op_a.shape
        assert k == k2 and (mc, nc) == (m, n) and ct == 0
        op_b = _values(_column_major(self.memory[b], k, n, ldb), bt)
        scale = np.prod(
            [self.memory.element(attributes[p]) for p in ("A_SCALE_POINTER", "B_SCALE_POINTER") if p in attributes]
        )
        out = _column_major(self.memory[d], m, n, ldc)
        out[...] = _scalar(alpha) * scale * (op_a @ op_b) + _scalar(beta) * np.nan_to_num(
            _column_major(self.memory[c], m, n, ldc)
        )

    def matmul_preference_destroy(self, pref):
        del self._objects[pref]

    def matrix_layout_destroy(self, layout):
        del self._objects[layout]

    def matmul_desc_destroy(self, desc):
        del self._objects[desc]


def _operands(memory: _Memory, dtype: str, m: int, n: int, k: int, rng):
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if dtype == "bf16":  # bf16 bits, truncated: the exact values are what the library reads
        store = lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
        exact = lambda bits: (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
    else:
        store = lambda x: x.astype(_NUMPY[DATA_TYPES[dtype]])  # noqa: E731
        exact = lambda x: x.astype(np.float64)  # noqa: E731
    sa, sb = store(a), store(b)
    c = np.full((m, n), np.nan, dtype=np.float32)
    return memory.array(sa.ravel()), memory.array(sb.ravel()), memory.array(c.ravel()), exact(sa) @ exact(sb), c


CASES = [
    ("fp32", "CUBLAS_COMPUTE_32F"),
    ("tf32", "CUBLAS_COMPUTE_32F_FAST_TF32"),
    ("fp16", "CUBLAS_COMPUTE_32F"),
    ("bf16", "CUBLAS_COMPUTE_32F"),
]
SHAPES = [(3, 5, 7), (8, 1, 2), (17, 33, 9)]


@pytest.mark.parametrize("library", [CublasGemm, CublasLtGemm])
@pytest.mark.parametrize("dtype,compute", CASES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_row_major_product_by_operand_swap(library, dtype, compute, shape):
    memory = _Memory()
    ctx = VendorContext(
        blas=FakeCublas(memory), lt=FakeCublasLt(memory), workspace_ptr=0xAAAA, workspace_bytes=32 << 20
    )
    m, n, k = shape
    a, b, c, expected, out = _operands(memory, dtype, m, n, k, np.random.default_rng(sum(shape)))
    library(ctx, compute, dtype, m, n, k)(a, b, c, stream=5)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)  # every element written, in row-major order
    calls = (ctx.blas if library is CublasGemm else ctx.lt).calls
    if library is CublasGemm:
        assert ("gemm", n, m, k, DATA_TYPES[dtype], DATA_TYPES[dtype], 0, COMPUTE_TYPES[compute]) in calls
        assert ("stream", 5) in calls and ("workspace", 32 << 20) in calls and ("math", 0) in calls
    else:
        heuristic = next(c for c in calls if c[0] == "heuristic")
        assert heuristic[1] == {1: 32 << 20}  # MAX_WORKSPACE_BYTES: the worker's workspace
        assert next(c for c in calls if c[0] == "matmul")[1:3] == (COMPUTE_TYPES[compute], 0)


class _Slots:
    """A new_scales() array as fake memory holds it: scales[i, :1] is the address of factor i's slot."""

    def __init__(self, base: int):
        self.base = base

    def __getitem__(self, index):
        operand, _ = index
        return SimpleNamespace(data=SimpleNamespace(ptr=self.base + 4 * SCALE_SLOT * operand))


@pytest.mark.parametrize("dtype", ["fp8_e4m3", "fp8_e4m3_e5m2"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_cublaslt_fp8_is_tn_with_each_operands_scale(shape, dtype):
    """The FP8 classes: A (M x K) and B stored N x K, E4M3 codes (B's E5M2 in fp8_e4m3_e5m2), C = scale_a scale_b
    A.B^T; cuBLASLt is asked for its TN form (its A, our B, transposed, in B's format), each scale pointer aimed at the
    right operand's factor, fast accumulation off."""
    memory = _Memory()
    ctx = VendorContext(blas=None, lt=FakeCublasLt(memory), workspace_ptr=0xAAAA, workspace_bytes=32 << 20)
    m, n, k = shape
    rng = np.random.default_rng(sum(shape))

    def codes(rows):
        return (rng.integers(0, 0x7F, size=(rows, k)) | rng.choice([0, 0x80], size=(rows, k))).astype(np.uint8)

    a, b = codes(m), codes(n)  # 0x7F and 0xFF are NaN in E4M3, 0x7C-0x7F infinity and NaN in E5M2: never drawn
    if dtype == "fp8_e4m3_e5m2":
        b = np.where((b & 0x7F) >= 0x7C, b & 0x80, b).astype(np.uint8)
    c = np.full((m, n), np.nan, dtype=np.float32)
    slots = np.zeros((2, SCALE_SLOT), dtype=np.float32)
    slots[:, 0] = 0.011, 0.0173
    base = memory.array(slots.ravel()).data.ptr
    scales = _Slots(base)
    gemm = CublasLtGemm(ctx, "CUBLAS_COMPUTE_32F", dtype, m, n, k, scales=scales)
    gemm(memory.array(a.ravel()), memory.array(b.ravel()), memory.array(c.ravel()), stream=5)
    b_values = e5m2_values() if dtype == "fp8_e4m3_e5m2" else e4m3_values()
    expected = np.float32(0.011) * np.float32(0.0173) * (e4m3_values()[a] @ b_values[b].T)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    (attributes,) = ctx.lt.attributes.values()
    assert attributes["TRANSA"] == 1 and attributes["FAST_ACCUM"] == 0
    assert attributes["A_SCALE_POINTER"] == base + 4 * SCALE_SLOT and attributes["B_SCALE_POINTER"] == base


def test_cublaslt_without_an_algorithm_is_unavailable():
    memory = _Memory()
    ctx = VendorContext(blas=None, lt=FakeCublasLt(memory, algorithms=0), workspace_ptr=0, workspace_bytes=1 << 20)
    with pytest.raises(Unavailable, match="heuristic offers no algorithm for bf16 3x5x7"):
        CublasLtGemm(ctx, "CUBLAS_COMPUTE_32F", "bf16", 3, 5, 7)
    assert ctx.lt._objects == {1: "lt"}  # descriptors and layouts destroyed again


def test_missing_nvmath_is_a_reason_not_a_crash(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "nvmath.bindings.cublas", None)  # import -> ImportError
    ctx = VendorContext(blas=None, lt=None, workspace_ptr=0, workspace_bytes=1)
    with pytest.raises(Unavailable, match="nvmath-python's cublas bindings are not usable"):
        CublasGemm(ctx, "CUBLAS_COMPUTE_32F", "fp32", 2, 2, 2)


def test_each_library_names_the_algorithm_it_ran():
    memory = _Memory()
    ctx = VendorContext(blas=FakeCublas(memory), lt=FakeCublasLt(memory), workspace_ptr=0, workspace_bytes=32 << 20)
    lt = CublasLtGemm(ctx, "CUBLAS_COMPUTE_32F", "bf16", 3, 5, 7).algorithm
    assert lt == "cuBLASLt 13.2.1 heuristic #1: id=21 tile_id=503 stages_id=37 workspace=4096 waves=0.97"
    del ctx.lt.config[2]  # an attribute this library version does not answer: named, not fatal
    assert "tile_id=503 stages_id=? workspace" in CublasLtGemm(ctx, "CUBLAS_COMPUTE_32F", "bf16", 3, 5, 7).algorithm
    blas = CublasGemm(ctx, "CUBLAS_COMPUTE_32F", "fp32", 3, 5, 7).algorithm
    assert blas.startswith("cuBLAS 12.8.0 cublasGemmEx CUBLAS_GEMM_DEFAULT")


def test_fp8_baselines_skip_before_hopper_with_the_reason():
    from kernels.registry import stage_named

    for name in ("cublaslt_fp8_e4m3", "torch_fp8_e4m3", "cublaslt_fp8_e4m3_e5m2", "torch_fp8_e4m3_e5m2"):
        stage = stage_named(name)
        assert stage.dtype == name.split("_", 1)[1] and stage.unsupported_reason(4096, 4096, 4096, 90) is None
        assert stage.unsupported_reason(4096, 4096, 4096, 89) == "needs compute capability 9.0, device has 8.9"
