"""Vendor baselines: cuBLAS (cublasGemmEx) and cuBLASLt (its heuristic's best algorithm) via nvmath-python's bindings,
row-major by operand swap, capturable in CUDA graphs.

Row-major C = A.B is column-major C^T = B^T.A^T (a row-major matrix read column-major is its transpose): both libraries
get the column-major N x M product of B (N x K, ld N) and A (K x M, ld K), untransposed.

Why nvmath-python: CuPy's cuBLAS wrapper refuses calls during stream capture, leaving direct Python launches (10-15 us
host floor per GEMM) against our kernels' graph replays. nvmath calls the C API as is, which cuBLAS allows in capture
once the handle has its own workspace (it may not allocate one in capture).

Each worker owns a cuBLAS and a cuBLASLt handle and one workspace, bound to each call's stream (one per timed series).

FP8 (fp8_e4m3, fp8_e4m3_e5m2; cuBLASLt only, cublasGemmEx has none): on Hopper cuBLASLt takes FP8 only as "TN"
(A transposed and B not: both K-major). The FP8 class stores B as N x K (farm/measure/checks.py), so the same swap
gives that: C^T (N x M) = op_T(B_stored as K x N, ld K) . (A as K x M, ld K). Dequantisation factors are device
pointers (A_SCALE_POINTER for B's, B_SCALE_POINTER for A's) read at matmul time, so a captured graph uses the scales
of whatever inputs the buffers hold. FAST_ACCUM off: cuBLASLt then promotes partial sums to FP32 at intervals, not
keeping all of K in Hopper's ~13-bit FP8 accumulator (farm/measure/tolerance.py). fp8_e4m3_e5m2 (A E4M3, B E5M2) is
the same call with each layout's own type: cuBLASLt's A is the class's B, so it gets E5M2 x E4M3, listed for Hopper
in its FP8 table (E5M2 x E5M2 is not: kernels/hopper_fp8/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from farm.measure.checks import scale_of

# cuBLAS's guide recommends 32 MiB of workspace on Hopper (4 MiB on earlier chips); every chip gets 32 MiB so no
# algorithm is ruled out for want of scratch; cuBLASLt's heuristic gets the same bound, as in PyTorch.
WORKSPACE_BYTES = 32 * 2**20

# cublasComputeType_t and cudaDataType_t values (cublas_api.h, library_types.h)
COMPUTE_TYPES = {"CUBLAS_COMPUTE_32F": 68, "CUBLAS_COMPUTE_32F_FAST_TF32": 77}
DATA_TYPES = {"fp32": 0, "tf32": 0, "fp16": 2, "bf16": 14}  # TF32 is FP32 storage, a compute mode
# FP8 classes: cudaDataType_t of A and of B (CUDA_R_8F_E4M3 = 28, CUDA_R_8F_E5M2 = 29)
FP8_DATA_TYPES = {"fp8_e4m3": (28, 28), "fp8_e4m3_e5m2": (28, 29)}
_CUDA_R_32F = 0
_OP_N = 0
_OP_T = 1
_GEMM_DEFAULT = -1
_DEFAULT_MATH = 0
# cublasLtMatmulPreferenceAttributes_t: CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
_PREF_MAX_WORKSPACE_BYTES = 1


def _version(number: int) -> str:
    """cuBLAS's version number (major*10000 + minor*100 + patch) as text."""
    return f"{number // 10000}.{number // 100 % 100}.{number % 100}"


class Unavailable(RuntimeError):
    """This host cannot run the baseline; the message is the reason to record."""


def _bindings(name: str):
    """nvmath.bindings.<name>, or Unavailable with the reason."""
    try:
        import importlib

        return importlib.import_module(f"nvmath.bindings.{name}")
    except Exception as exc:  # noqa: BLE001 - any import failure: not on this host
        raise Unavailable(
            f"nvmath-python's {name} bindings are not usable on this host "
            f"({type(exc).__name__}: {str(exc)[:120]}); pip install nvmath-python"
        ) from None


def _ptr(x) -> int:
    """Device address of a CuPy array (or anything with .data.ptr)."""
    return int(x.data.ptr)


def _current_stream() -> int:
    import cupy

    return cupy.cuda.get_current_stream().ptr


@dataclass
class VendorContext:
    """One worker's library handles and workspace; `blas`/`lt` are the binding modules (a stand-in in CPU tests)."""

    blas: object
    lt: object
    workspace_ptr: int
    workspace_bytes: int
    _blas_handle: int | None = None
    _lt_handle: int | None = None
    _keep: object = None  # the workspace, kept alive with the handles

    @classmethod
    def on_current_device(cls) -> VendorContext:
        """Bindings load lazily: a host without them still runs every kernel and the other baselines."""
        import cupy

        workspace = cupy.empty(WORKSPACE_BYTES, dtype=cupy.uint8)
        return cls(
            blas=None, lt=None, workspace_ptr=int(workspace.data.ptr), workspace_bytes=WORKSPACE_BYTES, _keep=workspace
        )

    def blas_handle(self) -> int:
        if self._blas_handle is None:
            self.blas = self.blas or _bindings("cublas")
            handle = self.blas.create()
            # No silent tensor-core downgrade: only the named compute type sets precision.
            self.blas.set_math_mode(handle, _DEFAULT_MATH)
            self.blas.set_workspace(handle, self.workspace_ptr, self.workspace_bytes)
            self._blas_handle = handle
        return self._blas_handle

    def lt_handle(self) -> int:
        if self._lt_handle is None:
            self.lt = self.lt or _bindings("cublasLt")
            self._lt_handle = self.lt.create()
        return self._lt_handle


class CublasGemm:
    """C (fp32, row-major M x N) = A (M x K) . B (K x N) through cublasGemmEx."""

    library = "cuBLAS"

    def __init__(self, ctx: VendorContext, compute_type: str, dtype: str, m: int, n: int, k: int):
        self._ctx, self._handle = ctx, ctx.blas_handle()
        self.compute, self.in_type = COMPUTE_TYPES[compute_type], DATA_TYPES[dtype]
        self.m, self.n, self.k = m, n, k
        # Host scalars read at enqueue; kept alive with the object.
        self._alpha = np.array(1.0, dtype=np.float32)
        self._beta = np.array(0.0, dtype=np.float32)

    def __call__(self, a, b, c, stream: int | None = None) -> None:
        blas = self._ctx.blas
        blas.set_stream(self._handle, _current_stream() if stream is None else stream)
        m, n, k = self.m, self.n, self.k
        blas.gemm_ex(
            self._handle,
            _OP_N,
            _OP_N,
            n,
            m,
            k,
            self._alpha.ctypes.data,
            _ptr(b),
            self.in_type,
            n,
            _ptr(a),
            self.in_type,
            k,
            self._beta.ctypes.data,
            _ptr(c),
            _CUDA_R_32F,
            n,
            self.compute,
            _GEMM_DEFAULT,
        )

    @property
    def algorithm(self) -> str:
        """cuBLAS picks the kernel (CUBLAS_GEMM_DEFAULT): the row names version and call; only a profile shows it."""
        return f"cuBLAS {_version(self._ctx.blas.get_version(self._handle))} cublasGemmEx CUBLAS_GEMM_DEFAULT (kernel chosen inside cuBLAS)"


class CublasLtGemm:
    """The same product via cublasLtMatmul with its heuristic's top algorithm for this shape, precision and workspace
    (what PyTorch calls for torch.mm); Unavailable when it has none."""

    library = "cuBLASLt"

    def __init__(self, ctx: VendorContext, compute_type: str, dtype: str, m: int, n: int, k: int, scales=None):
        """`scales`: FP8 only, device array of A's and B's dequantisation factors (farm.measure.checks.new_scales)."""
        lt_handle = ctx.lt_handle()
        lt = ctx.lt
        self._ctx, self._handle = ctx, lt_handle
        self._desc = lt.matmul_desc_create(COMPUTE_TYPES[compute_type], _CUDA_R_32F)
        self._layouts = ()
        if dtype in FP8_DATA_TYPES:
            b_type, a_type = FP8_DATA_TYPES[dtype][1], FP8_DATA_TYPES[dtype][0]
            self._set(lt.MatmulDescAttribute.TRANSA, np.int32(_OP_T))
            self._set(lt.MatmulDescAttribute.FAST_ACCUM, np.int8(0))
            self._set(lt.MatmulDescAttribute.A_SCALE_POINTER, np.int64(_ptr(scale_of(scales, 1))))  # B's factor
            self._set(lt.MatmulDescAttribute.B_SCALE_POINTER, np.int64(_ptr(scale_of(scales, 0))))  # A's factor
            # TN: B (N x K) read as column-major K x N (ld K), transposed; A^T (k x m), C^T (n x m).
            self._layouts = (
                lt.matrix_layout_create(b_type, k, n, k),
                lt.matrix_layout_create(a_type, k, m, k),
                lt.matrix_layout_create(_CUDA_R_32F, n, m, n),
            )
        else:
            in_type = DATA_TYPES[dtype]
            # Swapped product's column-major operands: B^T (n x k), A^T (k x m), C^T (n x m).
            self._layouts = (
                lt.matrix_layout_create(in_type, n, k, n),
                lt.matrix_layout_create(in_type, k, m, k),
                lt.matrix_layout_create(_CUDA_R_32F, n, m, n),
            )
        pref = lt.matmul_preference_create()
        limit = np.array(ctx.workspace_bytes, dtype=np.uint64)
        lt.matmul_preference_set_attribute(pref, _PREF_MAX_WORKSPACE_BYTES, limit.ctypes.data, limit.nbytes)
        self._heuristic = lt.MatmulHeuristicResult(1)
        found = np.zeros(1, dtype=np.int32)
        refused = ""
        try:
            lt.matmul_algo_get_heuristic(
                lt_handle, self._desc, *self._layouts, self._layouts[2], pref, 1, self._heuristic.ptr, found.ctypes.data
            )
        except lt.cuBLASLtError as exc:  # FP8 shapes it can't do: status NOT_SUPPORTED
            refused = f": {exc}"
        finally:
            lt.matmul_preference_destroy(pref)
        if found[0] < 1:
            self.close()
            raise Unavailable(
                f"cuBLASLt's heuristic offers no algorithm for {dtype} {m}x{n}x{k} "
                f"({compute_type}, workspace {ctx.workspace_bytes >> 20} MiB){refused}"
            )
        self._alpha = np.array(1.0, dtype=np.float32)
        self._beta = np.array(0.0, dtype=np.float32)

    def _set(self, attribute, value: np.generic) -> None:
        """One matmul descriptor attribute from a NumPy scalar of the attribute's type."""
        holder = np.array(value)
        self._ctx.lt.matmul_desc_set_attribute(self._desc, attribute, holder.ctypes.data, holder.nbytes)

    def __call__(self, a, b, c, stream: int | None = None) -> None:
        b_layout, a_layout, c_layout = self._layouts
        self._ctx.lt.matmul(
            self._handle,
            self._desc,
            self._alpha.ctypes.data,
            _ptr(b),
            b_layout,
            _ptr(a),
            a_layout,
            self._beta.ctypes.data,
            _ptr(c),
            c_layout,
            _ptr(c),
            c_layout,
            self._heuristic.ptr,
            self._ctx.workspace_ptr,
            self._ctx.workspace_bytes,
            _current_stream() if stream is None else stream,
        )

    @property
    def algorithm(self) -> str:
        """The heuristic's pick in cuBLASLt's terms (algorithm config attributes) and the library version: equal strings
        on two hosts mean the same algorithm ran."""
        lt, algo = self._ctx.lt, self._heuristic.ptr  # cublasLtMatmulHeuristicResult_t begins with its algo
        parts = []
        for attr in lt.MatmulAlgoConfigAttribute:  # ID, TILE_ID, SPLITK_NUM, ..., STAGES_ID, CLUSTER_SHAPE_ID
            value = np.zeros(1, dtype=lt.get_matmul_algo_config_attribute_dtype(attr))
            written = np.zeros(1, dtype=np.uint64)
            try:
                lt.matmul_algo_config_get_attribute(algo, attr, value.ctypes.data, value.nbytes, written.ctypes.data)
            except Exception:  # noqa: BLE001 - attribute unknown to this cuBLASLt version: named, not fatal
                parts.append(f"{attr.name.lower()}=?")
                continue
            parts.append(f"{attr.name.lower()}={int(value[0])}")
        return (
            f"cuBLASLt {_version(lt.get_version())} heuristic #1: {' '.join(parts)} "
            f"workspace={int(self._heuristic.workspace_size)} waves={float(self._heuristic.waves_count):.3g}"
        )

    def close(self) -> None:
        lt = self._ctx.lt
        for layout in self._layouts:
            lt.matrix_layout_destroy(layout)
        lt.matmul_desc_destroy(self._desc)
        self._layouts = ()

    def __del__(self):
        if getattr(self, "_layouts", ()):
            try:
                self.close()
            except Exception:  # noqa: BLE001 - interpreter shutdown may have unloaded the library
                pass


GEMMS = {"cuBLAS": CublasGemm, "cuBLASLt": CublasLtGemm}
