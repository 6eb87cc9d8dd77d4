"""Catalog of library baselines and family kernel stages; lookups by name.

A family is a folder (kernels/<family>/, or for outside or test families, under a directory in os.pathsep-separated
$GEMM_FARM_KERNELS) with numbered .cu files and a stages.py defining FAMILY (folder name), ORDER (catalog sort key)
and STAGES (ladder order). Nothing else lists families. See docs/adding-a-stage.md.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from kernels import tuning
from kernels.baselines import BASELINES
from kernels.sources import KERNELS_DIR
from kernels.stage import Measured

FAMILIES_ENV = "GEMM_FARM_KERNELS"


def _outside_module(stages_py: Path) -> ModuleType:
    """An outside family's stages.py, imported once under a unique name."""
    name = f"gemm_farm_families.{stages_py.parent.name}_{hashlib.sha256(str(stages_py).encode()).hexdigest()[:12]}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, stages_py)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def family_modules() -> list[ModuleType]:
    """Family stages modules (kernels/'s, then $GEMM_FARM_KERNELS's), by ORDER."""
    modules = [
        importlib.import_module(f"kernels.{p.parent.name}.stages") for p in sorted(KERNELS_DIR.glob("*/stages.py"))
    ]
    for root in filter(None, os.environ.get(FAMILIES_ENV, "").split(os.pathsep)):
        modules += [_outside_module(p.resolve()) for p in sorted(Path(root).glob("*/stages.py"))]
    return sorted(modules, key=lambda m: m.ORDER)


def stages_under(root: str | Path) -> list[Measured]:
    """Kernel stages (no baselines) of another kernels/-like tree (a base commit's, for --base-kernels) in catalog
    order; shared stages keep this catalog's names; .cu files use the tree's common/."""
    modules = sorted(
        (_outside_module(p.resolve()) for p in sorted(Path(root).glob("*/stages.py"))), key=lambda m: m.ORDER
    )
    return [s for module in modules for s in module.STAGES]


def catalog() -> list[Measured]:
    """Baselines, then family stages (families by ORDER, each in ladder order)."""
    stages = [*BASELINES, *(s for module in family_modules() for s in module.STAGES)]
    names = [s.name for s in stages]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise RuntimeError(f"stage names must be unique, repeated: {sorted(duplicated)}")
    return stages


@functools.cache  # catalog() rebuilds per call; workers look a stage up per cell
def stage_named(name: str) -> Measured:
    """A stage by name: the catalog's, or a tunable kernel's tile config (kernels/tuning.py)."""
    stage = next((s for s in catalog() if s.name == name), None) or tuning.find(name)
    if stage is None:
        raise KeyError(f"unknown stage {name}")
    return stage


def select(names: list[str] | None = None, families: list[str] | None = None) -> list[Measured]:
    """Stages in `names` or `families`, in catalog order (neither: all); unknowns raise one error listing valid ones."""
    stages = catalog()
    known_families = sorted({s.family for s in stages})
    unknown = [f for f in families or () if f not in known_families]
    if unknown:
        raise KeyError(
            f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; valid: {', '.join(known_families)}"
        )
    by_name = {s.name: s for s in stages}
    unknown = [n for n in names or () if n not in by_name]
    if unknown:
        raise KeyError(
            f"unknown kernel{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; valid: {', '.join(by_name)}"
        )
    if not names and not families:
        return stages
    return [s for s in stages if s.name in set(names or ()) or s.family in set(families or ())]
