"""The measurers a plan may pick: a fixed table of names, filled by code, never by a plan.

A plan (or `--measurer`) names one; the driver looks its import path up here and hands that
path to the Ray workers, which import it. A plan chooses among what this code base
registered and can never make a worker import a module of its choosing. Paths, not
classes, so that the driver never imports the GPU stack.
"""

from __future__ import annotations

import importlib

DEFAULT = "gpu"
# Other rooms register their own: farm/cluster/__init__.py adds "standin" (no GPU, for the tests and `farm simulate`).
_MEASURERS: dict[str, str] = {DEFAULT: "farm.measure.gpu:GpuMeasurer"}


def register(name: str, path: str) -> None:
    """Add the measurer class at import path "module:Class" under `name` (code only: the cluster registers its
    stand-in, tests theirs)."""
    _MEASURERS[name] = path


def names() -> list[str]:
    return sorted(_MEASURERS)


def path_of(name: str) -> str:
    """The import path registered under `name`; KeyError naming the valid names."""
    if name not in _MEASURERS:
        raise KeyError(f"unknown measurer {name!r}; valid: {', '.join(names())}")
    return _MEASURERS[name]


def load(path: str) -> type:
    """The class at import path "module:Class" (on a worker: a path from this table, never from a plan)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
