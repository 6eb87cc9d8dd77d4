"""Optional baselines beside cuBLAS: PyTorch's matmul and a Triton matmul, each its own baseline.

Every entry states the precision it computes in, so a % is never taken across
precision classes (issue 6: the write-up compared FP32 kernels with PyTorch running
TF32). FP32 PyTorch runs with its TF32 switch explicitly off, set before every call;
`torch_tf32` is the same call with it on, labelled tf32. Inputs are the farm's CuPy
arrays shared with PyTorch through DLPack (no copies; bf16 bits arrive as uint16 and
are viewed as torch.bfloat16); C is the farm's FP32 output array, written in place.

Hosts without torch / triton (or too old ones) keep the entries: their cells are
skipped with the reason (`unavailable_reason`), like a shape a kernel does not take.

Wiring: kernels/baselines.py lists these (Baseline entries of LIBRARIES, pure catalog data)
after the cuBLAS entries, so plans can name them and a plan with no stage filter runs
them. farm.measure.gpu treats them like the cuBLAS entries (their own baseline, verified
against the FP64 product of the same inputs, then timed) but launches
`launcher(stage, a, b, c, m, n, k)`, a callable on
CuPy's current stream (timing brackets it with CuPy events; graph capture works once
the first call has warmed the library up, which verification does). `Unavailable`
(a probe on the device failed) becomes a skipped row with its message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from farm.measure.checks import FP8, scale_of
from farm.measure.cublas import Unavailable
from kernels.stage import Baseline, Measured

LIBRARIES = ("PyTorch", "Triton")  # the baselines launched here; cuBLAS and cuBLASLt are farm/measure/cublas.py's


def _version(text: str) -> tuple[int, ...]:
    """(major, minor, patch) from a version string: the leading digits of its first three parts."""
    import re

    return tuple(int(m.group()) if (m := re.match(r"\d+", p)) else 0 for p in text.split("+")[0].split(".")[:3])


@functools.cache
def _import_reason(module: str, minimum: tuple[int, ...]) -> str | None:
    try:
        mod = __import__(module)
    except Exception as exc:  # noqa: BLE001 - any import failure means: not on this host
        return f"{module} is not installed on this host ({type(exc).__name__}: {str(exc)[:80]})"
    if _version(getattr(mod, "__version__", "0")) < minimum:
        return f"{module} {mod.__version__} is older than {'.'.join(map(str, minimum))}"
    if module == "torch" and not mod.cuda.is_available():
        return "torch is installed without a usable CUDA device"
    return None


_TORCH_MIN = (2, 0)
_TORCH_OUT_DTYPE_MIN = (2, 8)  # torch.mm(..., out_dtype=torch.float32) for fp16/bf16 inputs (pytorch#150812)
_TRITON_MIN = (3, 0)  # tl.dot(input_precision=...)
_TORCH_SCALED_MM_MIN = (2, 5)  # torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=..., use_fast_accum=...)


def unavailable_reason(stage: Measured) -> str | None:
    """Why this host cannot run a library baseline (missing or old library), or None (also for every other stage)."""
    if not stage.is_baseline or stage.library not in LIBRARIES:
        return None
    if stage.library == "PyTorch" and stage.dtype in FP8:
        reason = _import_reason("torch", _TORCH_SCALED_MM_MIN)
        return reason and f"{reason} (needed: torch._scaled_mm with per-tensor scales)"
    if stage.library == "PyTorch":
        minimum = _TORCH_OUT_DTYPE_MIN if stage.dtype in ("fp16", "bf16") else _TORCH_MIN
        reason = _import_reason("torch", minimum)
        return reason and (
            f"{reason} (needed: torch.mm with out_dtype for FP32 output)" if minimum == _TORCH_OUT_DTYPE_MIN else reason
        )
    return _import_reason("torch", _TORCH_MIN) or _import_reason("triton", _TRITON_MIN)


def launcher(stage: Baseline, a, b, c, m: int, n: int, k: int, scales=None) -> Callable[[], None]:
    """A no-argument callable computing c = a.b with the stage's library on CuPy's current stream (at call time);
    FP8: B stored N x K, `scales` the device array of A's and B's dequantisation factors (checks.new_scales)."""
    reason = unavailable_reason(stage)
    if reason:
        raise Unavailable(reason)
    if stage.dtype in FP8:
        return _scaled_mm_launcher(a, b, c, scales, stage.dtype)
    ta, tb, tc = _torch_views(a, b, c, stage.dtype)
    if stage.library == "PyTorch":
        return _torch_launcher(ta, tb, tc, stage.dtype)
    return _triton_launcher(ta, tb, tc, m, n, k, stage.dtype)


def _torch_views(a, b, c, dtype: str):
    """Zero-copy torch tensors over the farm's CuPy operands (bf16 bits viewed as torch.bfloat16)."""
    import torch

    ta, tb, tc = (torch.from_dlpack(x) for x in (a, b, c))
    if dtype == "bf16":
        ta, tb = ta.view(torch.bfloat16), tb.view(torch.bfloat16)
    expected = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    if ta.dtype != expected or tb.dtype != expected or tc.dtype != torch.float32:
        raise Unavailable(
            f"operands arrived as {ta.dtype}/{tb.dtype}/{tc.dtype}, expected {expected} in and float32 out"
        )
    return ta, tb, tc


def _current_torch_stream(torch, device):
    """Torch's view of the stream CuPy launches on now (the timer's stream, possibly capturing)."""
    import cupy

    ptr = cupy.cuda.get_current_stream().ptr
    return torch.cuda.default_stream(device) if ptr == 0 else torch.cuda.ExternalStream(ptr, device=device)


def _set_tf32(torch, enabled: bool) -> None:
    """PyTorch's cuBLAS TF32 switch, through the newer API where it exists (mixing both is an error there)."""
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "tf32" if enabled else "ieee"
    else:
        matmul.allow_tf32 = enabled


def _torch_launcher(ta, tb, tc, dtype: str) -> Callable[[], None]:
    import torch

    if dtype in ("fp16", "bf16"):
        try:  # probe once on the device: FP32 output from 16-bit inputs needs the out_dtype overload
            with torch.cuda.device(tc.device):
                torch.mm(ta[:1, :1], tb[:1, :1], out_dtype=torch.float32)
        except (TypeError, RuntimeError) as exc:
            raise Unavailable(
                f"torch {torch.__version__}: torch.mm cannot give FP32 output from {dtype} inputs ({str(exc)[:120]})"
            ) from None

        def run() -> None:
            with torch.cuda.stream(_current_torch_stream(torch, tc.device)):
                torch.mm(ta, tb, out_dtype=torch.float32, out=tc)

        return run

    tf32 = dtype == "tf32"

    def run() -> None:
        _set_tf32(torch, tf32)  # every call: nothing else in the process can leave it the other way
        with torch.cuda.stream(_current_torch_stream(torch, tc.device)):
            torch.mm(ta, tb, out=tc)

    return run


def _scaled_mm_launcher(a, b, c, scales, dtype: str) -> Callable[[], None]:
    """torch._scaled_mm on the farm's FP8 bytes viewed as torch's FP8 dtypes: A row-major, B (N x K) passed as its
    transpose, which is the column-major K x N operand _scaled_mm asks for; FP32 out, no fast accumulation."""
    import torch

    formats = {"__NV_E4M3": torch.float8_e4m3fn, "__NV_E5M2": torch.float8_e5m2}
    ta, tb, tc, scale_a, scale_b = (torch.from_dlpack(x) for x in (a, b, c, scale_of(scales, 0), scale_of(scales, 1)))
    ta, tb = ta.view(formats[FP8[dtype][0]]), tb.view(formats[FP8[dtype][1]])

    def run() -> None:
        with torch.cuda.stream(_current_torch_stream(torch, tc.device)):
            torch._scaled_mm(ta, tb.t(), scale_a, scale_b, out_dtype=torch.float32, use_fast_accum=False, out=tc)

    try:  # once on the device: shapes _scaled_mm refuses (dimensions not multiples of 16) are a reason, not a crash
        with torch.cuda.device(tc.device):
            run()
    except (TypeError, RuntimeError) as exc:
        raise Unavailable(
            f"torch {torch.__version__}: torch._scaled_mm refuses {dtype} {tuple(ta.shape)} x "
            f"{tuple(tb.shape)}^T ({str(exc)[:160]})"
        ) from None
    return run


@functools.lru_cache(maxsize=1)
def _triton_kernel():
    """A persistent Triton matmul written for the farm: min(#SM, #tiles) programs walk the C tiles in
    GROUP_M-row groups (L2 reuse), FP32 accumulation, masked edges (any shape), FP32 C."""
    import triton
    import triton.language as tl

    globals()["tl"] = tl  # the jitted function resolves `tl` through this module's globals

    configs = [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
        for bm, bn, bk, w, s in (
            (128, 128, 32, 8, 3),
            (128, 64, 32, 4, 4),
            (64, 128, 32, 4, 4),
            (64, 64, 32, 4, 4),
            (128, 256, 32, 8, 3),
            (64, 64, 16, 4, 2),
        )
    ]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def farm_persistent_matmul(
        a_ptr,
        b_ptr,
        c_ptr,
        M,
        N,
        K,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        GROUP_M: tl.constexpr,
        IEEE_FP32: tl.constexpr,
    ):
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        for tile in range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0)):
            group = tile // (GROUP_M * tiles_n)
            first_m = group * GROUP_M
            rows = tl.minimum(tiles_m - first_m, GROUP_M)
            pid_m = first_m + tile % rows
            pid_n = (tile % (GROUP_M * tiles_n)) // rows
            rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                rk = k0 + tl.arange(0, BLOCK_K)
                a = tl.load(
                    a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0
                )
                b = tl.load(
                    b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0
                )
                if IEEE_FP32:
                    acc = tl.dot(a, b, acc, input_precision="ieee")  # true FP32: no TF32 rounding of the inputs
                else:
                    acc = tl.dot(a, b, acc)  # fp16 / bf16 inputs, FP32 accumulate
            tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    return triton, farm_persistent_matmul


def _triton_launcher(ta, tb, tc, m: int, n: int, k: int, dtype: str) -> Callable[[], None]:
    import torch

    triton, kernel = _triton_kernel()
    sms = torch.cuda.get_device_properties(tc.device).multi_processor_count

    def grid(meta):
        return (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)

    def run() -> None:
        with torch.cuda.device(tc.device), torch.cuda.stream(_current_torch_stream(torch, tc.device)):
            kernel[grid](ta, tb, tc, m, n, k, IEEE_FP32=dtype == "fp32")

    # The autotuner picks once per process and shape, timing each configuration with its own timer: two runs may
    # pick differently (issue 26's A/A: triton_fp16 1024^3 17 % apart), so the row names its pick.
    run.algorithm = lambda: f"Triton {triton.__version__} autotune pick: {kernel.best_config}"  # after the first call
    return run
