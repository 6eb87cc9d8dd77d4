"""The catalog: every library baseline and every kernel stage of every family folder, and lookups by name.

A family is a folder with a ``stages.py`` that defines FAMILY (the folder's name), ORDER (where the family
sorts in the catalog) and STAGES (its Stage objects in ladder order), beside its numbered .cu files:
kernels/<family>/, and the folders under each directory $GEMM_FARM_KERNELS names (os.pathsep-separated,
laid out like kernels/: a family you keep outside this repository, or a test's). Nothing else lists the
families: a new folder is in the catalog. The types are kernels/stage.py's; docs/adding-a-stage.md walks
through adding a stage or a family.
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
    """A family's stages.py from a folder outside kernels/, imported once under a name of its own."""
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
    """Every family's stages module, in catalog order (ORDER): kernels/'s folders, then $GEMM_FARM_KERNELS's."""
    modules = [
        importlib.import_module(f"kernels.{p.parent.name}.stages") for p in sorted(KERNELS_DIR.glob("*/stages.py"))
    ]
    for root in filter(None, os.environ.get(FAMILIES_ENV, "").split(os.pathsep)):
        modules += [_outside_module(p.resolve()) for p in sorted(Path(root).glob("*/stages.py"))]
    return sorted(modules, key=lambda m: m.ORDER)


def stages_under(root: str | Path) -> list[Measured]:
    """The kernel stages of another tree laid out like kernels/ (a checkout of a base commit's kernels/, for a paired
    sweep's --base-kernels), in catalog order; baselines are this repository's and never in it. Its stage names
    match this catalog's where the stage exists in both; its .cu files compile with its own common/ headers."""
    modules = sorted(
        (_outside_module(p.resolve()) for p in sorted(Path(root).glob("*/stages.py"))), key=lambda m: m.ORDER
    )
    return [s for module in modules for s in module.STAGES]


def catalog() -> list[Measured]:
    """Every stage: baselines, then each family's stages (families by ORDER, each in ladder order)."""
    stages = [*BASELINES, *(s for module in family_modules() for s in module.STAGES)]
    names = [s.name for s in stages]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise RuntimeError(f"stage names must be unique, repeated: {sorted(duplicated)}")
    return stages


@functools.cache  # the catalog is built per call: workers look a stage up per cell
def stage_named(name: str) -> Measured:
    """Any stage by name: the catalog's, or a tile configuration of a tunable kernel (kernels/tuning.py)."""
    stage = next((s for s in catalog() if s.name == name), None) or tuning.find(name)
    if stage is None:
        raise KeyError(f"unknown stage {name}")
    return stage


def select(names: list[str] | None = None, families: list[str] | None = None) -> list[Measured]:
    """Stages named in `names` and every stage of `families` (both given: the union), in catalog order; neither
    given: every stage. Unknown names raise one error listing the valid ones."""
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
