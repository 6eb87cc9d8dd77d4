"""Compile kernel sources to CUBIN through NVRTC, with or without a GPU, cached on disk.

CuPy's RawModule asks the CUDA runtime for the current device, so it cannot compile
on a machine without a GPU. CuPy's thin NVRTC bindings can: we compile with those
for an explicit sm_XX, cache the CUBIN keyed by (source + headers, arch, options,
NVRTC version), and on a GPU load the CUBIN with ``cupy.RawModule(path=...)``.
One path for CI and for the workers means CI compiles exactly what the GPUs run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import struct
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from kernels.sources import COMMON_INCLUDE_DIR

# The architectures CI compiles for: Ampere (A100, RTX 30xx), Ada (RTX 40xx),
# Hopper (H100/H200) and consumer Blackwell (RTX 50xx).
CI_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_120")
BASE_OPTIONS = ("--std=c++17", "--ptxas-options=-v")


class CompileError(RuntimeError):
    """NVRTC rejected a source; the message holds its log."""


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reported for one kernel on one arch."""

    registers: int
    static_smem_bytes: int
    stack_frame_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int


@dataclass(frozen=True)
class CompiledModule:
    source: str
    arch: str
    options: tuple[str, ...]
    nvrtc_version: str
    cubin_path: Path
    lowered_names: dict[str, str]  # name expression -> mangled symbol
    resources: dict[str, KernelResources]  # name expression -> ptxas report (empty where NVRTC gave none)
    cache_hit: bool


def nvrtc_version() -> str:
    from cupy.cuda import nvrtc

    major, minor = nvrtc.getVersion()
    return f"{major}.{minor}"


def cache_dir() -> Path:
    """Where CUBINs are cached: $GEMM_FARM_CACHE, else ~/.cache/gemm-farm/cubin."""
    root = os.environ.get("GEMM_FARM_CACHE") or Path.home() / ".cache" / "gemm-farm"
    path = Path(root) / "cubin"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.lru_cache(maxsize=1)
def cuda_include_dir() -> str | None:
    """The CUDA toolkit headers (cuda_fp16.h, mma.h with its crt/ part) for NVRTC, or None.

    Looked for in the pip wheels (cuda.pathfinder; the cuda13 extra installs them),
    then $CUDA_PATH, $CUDA_HOME and /usr/local/cuda.
    """
    candidates = []
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        candidates.append(find_nvidia_header_directory("cudart"))
    except Exception:  # noqa: BLE001 - no pathfinder or no wheel: try the toolkit locations
        pass
    candidates += [os.path.join(os.environ[v], "include") for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v)]
    candidates.append("/usr/local/cuda/include")
    for path in candidates:
        if (
            path
            and os.path.isfile(os.path.join(path, "cuda_fp16.h"))
            and os.path.isfile(os.path.join(path, "crt", "mma.h"))
        ):
            return path
    return None


def include_dir(source: Path) -> Path:
    """The common headers a .cu includes: its own tree's kernels/common (another checkout's kernels, a paired sweep's
    --base-kernels, include theirs), else this repository's (a family kept outside it has none of its own)."""
    own = source.resolve().parent.parent / "common"
    return own if own.is_dir() else COMMON_INCLUDE_DIR


def _headers(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.glob("*.cuh"))}


def _cache_key(
    text: str, headers: dict[str, str], arch: str, options: tuple[str, ...], names: tuple[str, ...], version: str
) -> str:
    h = hashlib.sha256()
    for part in (text, json.dumps(headers, sort_keys=True), arch, "\0".join(options), "\0".join(names), version):
        h.update(part.encode())
        h.update(b"\x1f")
    return h.hexdigest()[:32]


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


_SHT_SYMTAB, _SHT_STRTAB, _SHT_NOBITS = 2, 3, 8  # ELF section types
WHOLE_CUBIN = "+whole"  # in the cache key: CUBINs cached before whole_cubin were one byte short


def elf_end(cubin: bytes) -> int:
    """Where a 64-bit ELF image ends by its own header: past its program and section header tables."""
    phoff, shoff = struct.unpack_from("<QQ", cubin, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", cubin, 0x36)
    return max(phoff + phentsize * phnum, shoff + shentsize * shnum)


def whole_cubin(cubin: bytes) -> bytes:
    """CuPy's nvrtc.getCUBIN drops the image's last byte, as if the CUBIN were a C string ending in NUL (CuPy's
    getPTX fix, cupy/cupy#942, applied to the binary too): the last program header then ends one byte past the
    file, which cuobjdump and nvdisasm reject and which the driver reads past. Seen with CuPy 14.2 and NVRTC 13.x.
    That byte is the high byte of the last header's alignment, a zero; it is put back."""
    return cubin + b"\0" if len(cubin) == elf_end(cubin) - 1 else cubin


def code_sha256(cubin: bytes) -> str:
    """SHA-256 of a CUBIN's sections other than its symbol and string tables: the machine code, its
    resource records and constants. Equal before and after a source refactor means the code did not
    change. The whole file would not do: NVRTC names internal-linkage objects (a namespace-scope
    constexpr bound to a reference, say) with a per-process number, so it differs between compiles."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not a 64-bit ELF CUBIN")
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]

    def name(h) -> bytes:
        start = names_at + h[0]
        return cubin[start : cubin.index(b"\0", start)]

    digest = hashlib.sha256()
    for h in headers:
        kind, offset, size = h[1], h[4], h[5]
        if kind in (_SHT_SYMTAB, _SHT_STRTAB):
            continue
        digest.update(name(h) + b"\0" + struct.pack("<IQ", kind, size))
        if kind != _SHT_NOBITS:  # (.nv.shared.*) a size but no bytes in the file
            digest.update(cubin[offset : offset + size])
    return digest.hexdigest()


def parse_ptxas_log(log: str) -> dict[str, KernelResources]:
    """Per mangled kernel symbol, the registers, smem and spills of a `ptxas -v` log."""
    out: dict[str, KernelResources] = {}
    current = None
    frame = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, frame = m.group(1), (0, 0, 0)
        elif current and (m := _FRAME.search(line)):
            frame = tuple(int(x) for x in m.groups())
        elif current and (m := _USED.search(line)):
            out[current] = KernelResources(
                registers=int(m.group(1)),
                static_smem_bytes=int(m.group(2) or 0),
                stack_frame_bytes=frame[0],
                spill_store_bytes=frame[1],
                spill_load_bytes=frame[2],
            )
            current = None
    return out


def check_arch(arch: str) -> None:
    """Raise ValueError unless `arch` is an sm_XX target this NVRTC can compile for."""
    from cupy.cuda import nvrtc

    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ValueError(f"arch must look like sm_90, got {arch!r}")
    supported = nvrtc.getSupportedArchs()
    if int(arch[3:].rstrip("a")) not in supported:
        raise ValueError(
            f"NVRTC {nvrtc_version()} cannot compile for {arch}; supported: {', '.join(f'sm_{a}' for a in supported)}"
        )


def compile_source(
    source: Path, arch: str, name_expressions: tuple[str, ...], extra_options: tuple[str, ...] = ()
) -> CompiledModule:
    """Compile one .cu file for `arch` (e.g. "sm_90"), no GPU needed; cached on disk."""
    from cupy.cuda import nvrtc

    check_arch(arch)
    text = source.read_text()
    common = include_dir(source)
    headers = _headers(common)
    toolkit = cuda_include_dir()
    options = (
        *BASE_OPTIONS,
        f"--gpu-architecture={arch}",
        f"-I{common}",
        *((f"-I{toolkit}",) if toolkit else ()),
        *extra_options,
    )
    version = nvrtc_version()
    key = _cache_key(text, headers, arch, options, name_expressions, version + WHOLE_CUBIN)
    cubin_path = cache_dir() / f"{source.stem}-{arch}-{key}.cubin"
    meta_path = cubin_path.with_suffix(".json")
    if cubin_path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        return CompiledModule(
            source=str(source),
            arch=arch,
            options=options,
            nvrtc_version=version,
            cubin_path=cubin_path,
            lowered_names=meta["lowered_names"],
            resources={k: KernelResources(**v) for k, v in meta["resources"].items()},
            cache_hit=True,
        )

    prog = nvrtc.createProgram(text, source.name, [h.encode() for h in headers.values()], [n.encode() for n in headers])
    try:
        for name in name_expressions:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, list(options))
        except nvrtc.NVRTCError as exc:
            raise CompileError(f"{source.name} for {arch}: {exc}\n{nvrtc.getProgramLog(prog)}") from None
        log = nvrtc.getProgramLog(prog)
        lowered = {name: nvrtc.getLoweredName(prog, name) for name in name_expressions}
        cubin = whole_cubin(nvrtc.getCUBIN(prog))
    finally:
        nvrtc.destroyProgram(prog)

    by_symbol = parse_ptxas_log(log)
    # Some NVRTC builds (13.0 seen on an H200 host) return an empty log for a source
    # compiled before in the same machine: resources then come from the loaded
    # function's attributes (farm.measure.gpu), and `farm compile` reports the gap.
    resources = {name: by_symbol[sym] for name, sym in lowered.items() if sym in by_symbol}
    # Write to a temporary name then rename: concurrent workers never read half a file.
    for path, payload in (
        (cubin_path, cubin),
        (
            meta_path,
            json.dumps(
                {"lowered_names": lowered, "resources": {k: asdict(v) for k, v in resources.items()}, "log": log}
            ).encode(),
        ),
    ):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    return CompiledModule(
        source=str(source),
        arch=arch,
        options=options,
        nvrtc_version=version,
        cubin_path=cubin_path,
        lowered_names=lowered,
        resources=resources,
        cache_hit=False,
    )


@dataclass(frozen=True)
class Compiled:
    """A compiled module and the seconds NVRTC spent on it (0 when the cache hit)."""

    module: CompiledModule
    seconds: float


def compile_timed(
    source: Path, arch: str, name_expressions: tuple[str, ...], extra_options: tuple[str, ...] = ()
) -> Compiled:
    began = time.perf_counter()
    module = compile_source(source, arch, name_expressions, extra_options)
    return Compiled(module, 0.0 if module.cache_hit else time.perf_counter() - began)


def stage_key(stage) -> tuple:
    """What a stage's compilation depends on: its source file, kernels and own options (a paired sweep's arm b may
    hold another tree's stage of the same name; one source may be two stages under different defines)."""
    return (stage.source_path, stage.kernel_names, stage.compile_options)


def compile_stage(stage, arch: str) -> Compiled:
    """A kernel stage compiled for the target it takes on a chip of `arch` (Stage.compile_arch), with its options."""
    return compile_timed(stage.source_path, stage.compile_arch(arch), stage.kernel_names, stage.compile_options)


class BackgroundCompiler:
    """Compiles stages for one arch on the host's cores while cells run (NVRTC releases the GIL, so
    threads compile in parallel); `result(stage)` waits for a submitted stage or compiles one now.
    `sources` (name -> .cu file and its kernels' name expressions) are compiled first, for `source(name)`."""

    def __init__(
        self,
        arch: str,
        stages: list,
        workers: int | None = None,
        sources: dict[str, tuple[Path, tuple[str, ...]]] | None = None,
    ):
        self._arch = arch
        self._pool = ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1, thread_name_prefix="nvrtc")
        self._sources = {
            name: self._pool.submit(compile_timed, path, arch, names) for name, (path, names) in (sources or {}).items()
        }
        self._futures: dict[tuple, Future] = {}
        for stage in stages:  # (a stage with no target on this arch is skipped by its cells, never compiled)
            if not stage.is_baseline and stage_key(stage) not in self._futures and stage.compile_arch(arch):
                self._futures[stage_key(stage)] = self._pool.submit(compile_stage, stage, arch)

    def result(self, stage) -> Compiled:
        future = self._futures.pop(stage_key(stage), None)
        return future.result() if future is not None else compile_stage(stage, self._arch)

    def source(self, name: str) -> Compiled:
        """The compiled source submitted as `name` (waits for it)."""
        return self._sources[name].result()
