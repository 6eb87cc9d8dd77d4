"""`python -m farm` / `gemm-farm`: catalog, compile (no GPU needed), bench (local GPU), sweep (Ray)."""
from __future__ import annotations

import argparse
import json
import sys

from farm.compiler import CI_ARCHS, CompileError, check_arch, compile_source
from kernels.registry import catalog, select


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def cmd_catalog(args: argparse.Namespace) -> int:
    stages = select(_split(args.kernels), _split(args.families))
    if args.json:
        print(json.dumps([s.describe() for s in stages], indent=2))
        return 0
    print(f"{'stage':<22} {'family':<10} {'group':<16} {'dtype':<5} {'shapes':<28} what changed")
    for s in stages:
        print(f"{s.name:<22} {s.family:<10} {s.group:<16} {s.dtype:<5} {s.shapes.describe():<28} {s.what_changed}")
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    """Compile every kernel for each arch through NVRTC; report resources; non-zero exit on any failure."""
    stages = [s for s in select(_split(args.kernels), _split(args.families)) if not s.is_baseline]
    archs = _split(args.arch) or list(CI_ARCHS)
    for arch in archs:
        check_arch(arch)
    results, failures = [], 0
    for arch in archs:
        for stage in stages:
            try:
                compiled = compile_source(stage.source_path, arch, stage.kernel_names)
            except CompileError as exc:
                failures += 1
                results.append({"stage": stage.name, "arch": arch, "ok": False, "error": str(exc)})
                continue
            for kernel, r in compiled.resources.items():
                results.append({"stage": stage.name, "arch": arch, "kernel": kernel, "ok": True,
                                "registers": r.registers, "static_smem_bytes": r.static_smem_bytes,
                                "dynamic_smem_bytes": max((l.dynamic_smem for l in stage.launches if l.kernel == kernel), default=0),
                                "stack_frame_bytes": r.stack_frame_bytes,
                                "spill_bytes": r.spill_store_bytes + r.spill_load_bytes,
                                "cached": compiled.cache_hit})
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            if r["ok"]:
                print(f"{r['arch']:<7} {r['stage']:<22} {r['kernel']:<40} regs {r['registers']:>3}  smem {r['static_smem_bytes'] + r['dynamic_smem_bytes']:>6}  spill {r['spill_bytes']}")
            else:
                print(f"{r['arch']:<7} {r['stage']:<22} FAILED: {r['error']}", file=sys.stderr)
    if failures:
        print(f"{failures} compilation(s) failed", file=sys.stderr)
    return 1 if failures else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m farm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("catalog", help="list every kernel stage and baseline")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per stage")
    p.add_argument("--kernels", help="comma-separated stage names (default: all)")
    p.add_argument("--families", help="comma-separated families (default: all)")
    p.set_defaults(func=cmd_catalog)

    p = sub.add_parser("compile", help="compile every kernel through NVRTC (no GPU needed) and report resources")
    p.add_argument("--arch", help=f"comma-separated sm_XX targets (default: {','.join(CI_ARCHS)})")
    p.add_argument("--kernels", help="comma-separated stage names (default: all)")
    p.add_argument("--families", help="comma-separated families (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per kernel and arch")
    p.set_defaults(func=cmd_compile)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (KeyError, ValueError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 2
