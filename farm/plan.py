"""What a sweep runs: stages, shapes, repeats and GPUs, from a TOML plan file plus CLI overrides.

A plan file names the same fields as :class:`Plan` (see plans/default.toml). Every
selected stage brings its cuBLAS baseline along, so each row's % has its reference row.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farm.cells import Cell
from farm.data.dataset import default_output
from farm.measure import measurers
from farm.measure.cell_timer import MeasureOptions
from kernels.registry import Stage, catalog, select
from kernels.tuning import tuning_stages

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MODES = ("replicate", "shard")

Shape = tuple[int, int, int]


class PlanError(ValueError):
    """A plan that cannot run: the message says what to fix."""


@dataclass(frozen=True)
class Plan:
    """A validated sweep plan. Build it with :func:`load_plan`."""

    sizes: tuple[Shape, ...]
    kernels: tuple[str, ...] = ()  # stage names; empty with no families = every stage
    families: tuple[str, ...] = ()
    tune: tuple[str, ...] = ()  # tunable kernels whose valid tile configurations (kernels/tuning.py) are added
    repeats: int = 1
    max_repeats: int = 0  # above repeats: a cell whose repeats disagree gets more, up to this many (farm/cluster/repeats.py)
    repeat_noise: float = 0.0025  # ... while the standard error of its repeats' mean (relative) is above this
    gpus: tuple[str, ...] = ()  # GPU models to run on; empty = every GPU of the cluster
    mode: str = "replicate"  # replicate: every GPU runs every cell; shard: a model's GPUs share its cells
    run_id: str = ""  # empty: a new id is made; an existing id resumes that run
    output: str = ""  # dataset location (path or pyarrow filesystem URI); empty: farm.data.dataset.default_output()
    cell_timeout_s: float = 600.0  # a cell running longer is killed and recorded as "timeout"
    start_timeout_s: float = 300.0  # a worker not ready (started or restarted) by then is given up
    flush_s: float = 10.0  # the driver writes buffered rows at least this often: what a killed driver can lose
    measurer: str = measurers.DEFAULT  # a name from farm/measure/measurers.py: what the workers build with the measure options
    measure: dict = field(default_factory=dict)  # [measure] table: timing mode, noise target, telemetry... (farm.measure.cell_timer.MeasureOptions)

    def stages(self) -> list[Stage]:
        """Selected stages plus their baselines: baselines first, then catalog (family, ladder) order,
        then the tuning stages of `tune` (with only `tune` given, no catalog stage but baselines)."""
        chosen = select(list(self.kernels) or None, list(self.families) or None) if self.kernels or self.families or not self.tune else []
        tuned = tuning_stages(self.tune) if self.tune else []
        needed = {s.name for s in chosen} | {s.baseline for s in (*chosen, *tuned)}
        ordered = [s for s in catalog() if s.name in needed]
        return [s for s in ordered if s.is_baseline] + [s for s in ordered if not s.is_baseline] + tuned

    def cells(self) -> list[Cell]:
        """Every (stage, shape, repeat), ordered by repeat, then shape, then stage."""
        stages = self.stages()
        return [Cell(s.name, m, n, k, r) for r in range(self.repeats) for (m, n, k) in self.sizes for s in stages]


def parse_size(value: Any) -> Shape:
    """A cube edge (1024 or "1024") or an explicit "MxNxK" ("127x255x33") as (m, n, k)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise PlanError(f"size {value!r}: give an integer edge like 1024 or a string 'MxNxK' like '127x255x33'")
    parts = [value] if isinstance(value, int) else value.lower().split("x")
    if len(parts) not in (1, 3):
        raise PlanError(f"size {value!r}: give one edge (1024) or three dimensions (127x255x33)")
    dims = []
    for part in parts:
        try:
            dim = part if isinstance(part, int) else int(part.strip())
        except ValueError:
            raise PlanError(f"size {value!r}: {part!r} is not an integer") from None
        if dim <= 0:
            raise PlanError(f"size {value!r}: dimensions must be positive")
        dims.append(dim)
    return (dims[0],) * 3 if len(dims) == 1 else tuple(dims)  # type: ignore[return-value]


def new_run_id() -> str:
    """A fresh, sortable run id: UTC time plus a random suffix."""
    return f"{_dt.datetime.now(_dt.timezone.utc):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def _names(field: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise PlanError(f"{field}: give a list of names")
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))


def _positive(field: str, value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int) or value <= 0:
        raise PlanError(f"{field} must be a positive {'number' if kind is float else 'integer'}, got {value!r}")
    return kind(value)


def _validate(raw: dict[str, Any]) -> Plan:
    fields = {f.name for f in dataclasses.fields(Plan)}
    unknown = sorted(set(raw) - fields)
    if unknown:
        raise PlanError(f"unknown plan field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; valid: {', '.join(sorted(fields))}")
    sizes = raw.get("sizes", [])
    if isinstance(sizes, str):
        sizes = sizes.split(",")
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise PlanError("sizes: give at least one size, e.g. [1024, 2048, '127x255x33']")
    mode = raw.get("mode", "replicate")
    if mode not in MODES:
        raise PlanError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    measurer = raw.get("measurer", measurers.DEFAULT)
    if not isinstance(measurer, str) or measurer not in measurers.names():
        # Plans are data: they pick a measurer by name and never name code to import.
        path = " (a plan names a measurer, it cannot give an import path)" if ":" in str(measurer) else ""
        raise PlanError(f"measurer {measurer!r} is not a known measurer{path}; valid: {', '.join(measurers.names())}")
    measure = raw.get("measure", {})
    if not isinstance(measure, dict):
        raise PlanError("measure: give a table of measurement options, e.g. [measure] mode = 'cold'")
    try:
        MeasureOptions.from_dict(measure)
    except (TypeError, ValueError) as exc:
        raise PlanError(f"measure: {exc}") from None
    plan = Plan(
        sizes=tuple(dict.fromkeys(parse_size(s) for s in sizes)),
        kernels=_names("kernels", raw.get("kernels", ())),
        families=_names("families", raw.get("families", ())),
        tune=_names("tune", raw.get("tune", ())),
        repeats=_positive("repeats", raw.get("repeats", 1), int),
        max_repeats=_positive("max_repeats", raw["max_repeats"], int) if raw.get("max_repeats") is not None else 0,
        repeat_noise=_positive("repeat_noise", raw.get("repeat_noise", 0.0025), float),
        gpus=_names("gpus", raw.get("gpus", ())),
        mode=mode,
        run_id=str(raw.get("run_id") or new_run_id()),
        output=str(raw.get("output") or default_output()),
        cell_timeout_s=_positive("cell_timeout_s", raw.get("cell_timeout_s", 600.0), float),
        start_timeout_s=_positive("start_timeout_s", raw.get("start_timeout_s", 300.0), float),
        flush_s=_positive("flush_s", raw.get("flush_s", 10.0), float),
        measurer=measurer,
        measure=dict(measure),
    )
    if plan.max_repeats and plan.max_repeats < plan.repeats:
        raise PlanError(f"max_repeats ({plan.max_repeats}) must be at least repeats ({plan.repeats})")
    try:
        if not plan.stages():
            raise PlanError(f"no stage matches kernels={list(plan.kernels)} families={list(plan.families)}")
    except KeyError as exc:  # select() or tuning_stages(): unknown names, listing the valid ones
        raise PlanError(exc.args[0]) from None
    return plan


def load_plan(path: str | Path | None = None, **overrides: Any) -> Plan:
    """The plan in TOML file `path` (if any) with `overrides` (None values ignored) on top, validated."""
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise PlanError(f"plan file {path}: {exc}") from None
    measure = {**raw.get("measure", {}), **(overrides.pop("measure", None) or {})}  # flags refine the file's table
    raw.update({k: v for k, v in overrides.items() if v is not None})
    if measure:
        raw["measure"] = measure
    return _validate(raw)
