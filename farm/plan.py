"""What a sweep runs: stages, shapes, repeats and GPUs, from a TOML plan file plus CLI overrides.

A plan file names the same fields as :class:`Plan` (see plans/default.toml). Every
selected stage brings its cuBLAS baseline along, so each row's % has its reference row.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError

from farm.cells import Cell
from farm.data.dataset import default_output
from farm.measure import measurers
from farm.measure.cell_timer import MeasureOptions
from kernels.registry import catalog, select
from kernels.stage import Measured
from kernels.tuning import tuning_stages

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MODES = ("replicate", "shard")
# The shipped plans: plans/ of the repo, which the package carries as farm/plans (a link in the repo, files in a wheel).
PLANS = Path(__file__).resolve().parent / "plans"

Shape = tuple[int, int, int]


class PlanError(ValueError):
    """A plan that cannot run: the message says what to fix, one line per problem."""


@dataclass(frozen=True)
class Plan:
    """A validated sweep plan. Build it with :func:`load_plan`."""

    sizes: tuple[Shape, ...]
    kernels: tuple[str, ...] = ()  # stage names; empty with no families = every stage
    families: tuple[str, ...] = ()
    tune: tuple[str, ...] = ()  # tunable kernels whose valid tile configurations (kernels/tuning.py) are added
    repeats: int = 1
    max_repeats: int = (
        0  # above repeats: a cell whose repeats disagree gets more, up to this many (farm/cluster/repeats.py)
    )
    repeat_noise: float = 0.0025  # ... while the standard error of its repeats' mean (relative) is above this
    gpus: tuple[str, ...] = ()  # GPU models to run on; empty = every GPU of the cluster
    mode: str = "replicate"  # replicate: every GPU runs every cell; shard: a model's GPUs share its cells
    run_id: str = ""  # empty: a new id is made; an existing id resumes that run
    output: str = ""  # dataset location (path or pyarrow filesystem URI); empty: farm.data.dataset.default_output()
    cell_timeout_s: float = 600.0  # a cell running longer is killed and recorded as "timeout"
    start_timeout_s: float = 300.0  # a worker not ready (started or restarted) by then is given up
    flush_s: float = 10.0  # the driver writes buffered rows at least this often: what a killed driver can lose
    measurer: str = (
        measurers.DEFAULT
    )  # a name from farm/measure/measurers.py: what the workers build with the measure options
    measure: MeasureOptions = field(
        default_factory=MeasureOptions
    )  # the [measure] table, validated: what workers' measurers get
    # Paired (docs/verdicts.md, "Paired sweeps"): every cell timed for two arms in one worker process, as series of
    # one interleaved timing with the baseline (the leading arm alternating, ABBA), as runs RUN_ID-a and RUN_ID-b:
    # arm b the same code (an A/A), or base_kernels' tree (a checkout of another commit's kernels/) where given.
    paired: bool = False
    base_kernels: str = ""

    def arm_runs(self) -> tuple[str, ...]:
        """The run ids the rows go to: the plan's, or one per arm of a paired sweep."""
        return (f"{self.run_id}-a", f"{self.run_id}-b") if self.paired else (self.run_id,)

    def stages(self) -> list[Measured]:
        """Selected stages plus their baselines: baselines first, then catalog (family, ladder) order,
        then the tuning stages of `tune` (with only `tune` given, no catalog stage but baselines)."""
        chosen = (
            select(list(self.kernels) or None, list(self.families) or None)
            if self.kernels or self.families or not self.tune
            else []
        )
        tuned = tuning_stages(self.tune) if self.tune else []
        needed = {s.name for s in chosen} | {s.baseline for s in (*chosen, *tuned)}
        ordered = [s for s in catalog() if s.name in needed]
        return [s for s in ordered if s.is_baseline] + [s for s in ordered if not s.is_baseline] + tuned

    def cells(self, repeats: int | None = None) -> list[Cell]:
        """Every (stage, shape, repeat), ordered by repeat, then shape, then stage; `repeats` instead of the plan's
        (1: a profile's cells)."""
        stages = self.stages()
        return [
            Cell(s.name, m, n, k, r) for r in range(repeats or self.repeats) for (m, n, k) in self.sizes for s in stages
        ]


INT32_MAX = 2**31 - 1  # m, n and k are int32 columns (farm/data/schema.py)
# Device memory of the largest GPU of each model the farm knows, in bytes (the data sheets): a plan's largest cell
# must fit on the largest GPU it may run on. A model not listed here, or no --gpus, allows the largest listed.
GPU_MEMORY = {
    "H100": 80e9,
    "H200": 141e9,
    "B200": 180e9,
    "GeForce-RTX-4090": 24e9,
    "GeForce-RTX-5090": 32e9,
    "A100": 80e9,
}
RUN_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"  # a path component anywhere: no separators, no leading dot


def parse_size(value: Any) -> Shape:
    """A cube edge (1024 or "1024") or an explicit "MxNxK" ("127x255x33") as (m, n, k), each within int32."""
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
        if not 0 < dim <= INT32_MAX:
            raise PlanError(f"size {value!r}: dimensions must be positive and at most {INT32_MAX} (int32 columns)")
        dims.append(dim)
    return (dims[0],) * 3 if len(dims) == 1 else tuple(dims)  # type: ignore[return-value]


def new_run_id() -> str:
    """A fresh, sortable run id: UTC time plus a random suffix."""
    return f"{_dt.datetime.now(_dt.timezone.utc):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def _comma_list(value: Any) -> Any:
    # The command line gives lists as comma-separated strings.
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value


def _unique(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in names if n.strip()))


def _safe_run_id(run_id: str) -> str:
    if not re.fullmatch(RUN_ID, run_id):
        raise ValueError(
            f"{run_id!r} is not a safe path component: use 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return run_id


def _known_measurer(name: Any) -> str:
    if not isinstance(name, str) or name not in measurers.names():
        # Plans are data: they pick a measurer by name and never name code to import.
        path = " (a plan names a measurer, it cannot give an import path)" if ":" in str(name) else ""
        raise ValueError(f"{name!r} is not a known measurer{path}; valid: {', '.join(measurers.names())}")
    return name


def _kernels_tree(path: str) -> str:
    if not sorted(Path(path).glob("*/stages.py")):
        raise ValueError(f"{path!r} holds no family folder (<family>/stages.py): give a checkout's kernels/ folder")
    return str(Path(path).resolve())


Names = Annotated[list[Annotated[str, Strict()]], BeforeValidator(_comma_list), AfterValidator(_unique)]
Timeout = Annotated[float, Strict(), Field(gt=0, le=86_400)]


class PlanFields(BaseModel):
    """The fields a plan file (or a flag) may set, each with its type and range; see Plan for their meaning."""

    model_config = ConfigDict(extra="forbid", validate_default=True)

    sizes: Annotated[
        list[Annotated[Any, AfterValidator(parse_size)]],
        BeforeValidator(_comma_list),
        Field(min_length=1, max_length=100_000),
    ]
    kernels: Names = []
    families: Names = []
    tune: Names = []
    repeats: Annotated[int, Strict(), Field(ge=1, le=1000)] = 1
    max_repeats: Annotated[int, Strict(), Field(ge=1, le=1000)] | None = None
    repeat_noise: Annotated[float, Strict(), Field(gt=0, lt=1)] = 0.0025
    gpus: Names = []
    mode: Literal[MODES] = "replicate"
    run_id: Annotated[str, Strict(), AfterValidator(_safe_run_id)] | None = None
    output: Annotated[str, Strict(), Field(min_length=1)] | None = None
    cell_timeout_s: Timeout = 600.0
    start_timeout_s: Timeout = 300.0
    flush_s: Annotated[float, Strict(), Field(gt=0, le=3600)] = 10.0
    measurer: Annotated[Any, AfterValidator(_known_measurer)] = measurers.DEFAULT
    measure: dict[str, Any] = {}
    paired: Annotated[bool, Strict()] = False
    base_kernels: Annotated[str, Strict(), AfterValidator(_kernels_tree)] | None = None


def _problem(error: dict) -> str:
    """One pydantic error as a line: the field (and item) it is about, what is wrong, what was given."""
    where = ".".join(str(part) for part in error["loc"]) or "plan"
    if error["type"] == "extra_forbidden":
        return f"unknown plan field {where}; valid: {', '.join(PlanFields.model_fields)}"
    return f"{where}: {error['msg'].removeprefix('Value error, ')}" + (
        "" if error["type"] == "value_error" else f", got {error['input']!r}"
    )


def _memory_of(model: str) -> float | None:
    """The table's memory for a model name as the cluster spells it ("H100-80GB-HBM3", "NVIDIA-H200", "h200")."""
    name = model.lower().removeprefix("nvidia-")
    known = [key for key in GPU_MEMORY if name == key.lower() or name.startswith(key.lower() + "-")]
    return GPU_MEMORY[max(known, key=len)] if known else None


def _too_large(sizes: list[Shape], stages: list[Measured], gpus: tuple[str, ...]) -> list[str]:
    """Sizes whose largest cell cannot fit on the largest GPU the plan may run on."""
    from farm.measure.sizing import bytes_needed

    named = [_memory_of(model) for model in gpus]
    memory = max(GPU_MEMORY.values()) if not gpus or None in named else max(named)
    # A baseline's FP64 check shrinks to row blocks on a card it does not fit (sizing.reference_plan): priced at the
    # slowest FP64 rate, one SM, it is at its smallest, so the bound is the cell's own buffers.
    device = {"memory_bytes": memory, "sm_count": 1}
    where = f"the largest GPU of {', '.join(gpus)}" if gpus and None not in named else "any GPU the farm knows"
    return [
        f"sizes: {m}x{n}x{k} needs {need / 1e9:.0f} GB of device memory, more than {where} has ({memory / 1e9:.0f} GB)"
        for m, n, k in sizes
        if (need := max(bytes_needed(s, m, n, k, device) for s in stages)) > memory
    ]


def _validate(raw: dict[str, Any]) -> Plan:
    problems: list[str] = []
    try:
        fields = PlanFields.model_validate(raw)
    except ValidationError as exc:
        problems = [_problem(e) for e in exc.errors()]
        fields = None
    measure, options = raw.get("measure", {}), None
    if isinstance(measure, dict):  # else PlanFields said what is wrong with it
        try:
            options = MeasureOptions.from_dict(measure)
        except ValueError as exc:
            problems += [f"measure.{p}" for p in str(exc).splitlines()]
    if fields is None or options is None or problems:
        raise PlanError("\n".join(problems))
    plan = Plan(
        sizes=tuple(dict.fromkeys(fields.sizes)),
        kernels=fields.kernels,
        families=fields.families,
        tune=fields.tune,
        repeats=fields.repeats,
        max_repeats=fields.max_repeats or 0,
        repeat_noise=fields.repeat_noise,
        gpus=fields.gpus,
        mode=fields.mode,
        run_id=fields.run_id or new_run_id(),
        output=fields.output or default_output(),
        cell_timeout_s=fields.cell_timeout_s,
        start_timeout_s=fields.start_timeout_s,
        flush_s=fields.flush_s,
        measurer=fields.measurer,
        measure=options,
        paired=fields.paired or bool(fields.base_kernels),
        base_kernels=fields.base_kernels or "",
    )
    if plan.max_repeats and plan.max_repeats < plan.repeats:
        raise PlanError(f"max_repeats ({plan.max_repeats}) must be at least repeats ({plan.repeats})")
    try:
        stages = plan.stages()
    except KeyError as exc:  # select() or tuning_stages(): unknown names, listing the valid ones
        raise PlanError(exc.args[0]) from None
    if not stages:
        raise PlanError(f"no stage matches kernels={list(plan.kernels)} families={list(plan.families)}")
    too_large = _too_large(list(plan.sizes), stages, plan.gpus)
    if too_large:
        raise PlanError("\n".join(too_large))
    return plan


def plan_file(path: str | Path) -> Path:
    """`path` where it exists, else the shipped plan of its name: `quick`, `quick.toml` and `plans/quick.toml` name
    plans/quick.toml from any folder, and in an installed package, which has no repo around it."""
    given = Path(path)
    if given.exists() or given.is_absolute():
        return given
    shipped = PLANS / given.with_suffix(".toml").name
    return shipped if shipped.is_file() else given


def load_plan(path: str | Path | None = None, **overrides: Any) -> Plan:
    """The plan in TOML file `path` (if any; a shipped plan's name will do, see plan_file) with `overrides`
    (None values ignored) on top, validated."""
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = tomllib.loads(plan_file(path).read_text())
        except FileNotFoundError:
            shipped = ", ".join(sorted(p.stem for p in PLANS.glob("*.toml")))
            raise PlanError(f"plan file {path}: not found (shipped plans: {shipped})") from None
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise PlanError(f"plan file {path}: {exc}") from None
    if "base_kernels" in raw:  # another tree's stages.py is code: the command line names it, never a plan file
        raise PlanError(
            "base_kernels: a plan file cannot name a kernels tree (its stages.py files are imported: code); "
            "give --base-kernels DIR on the command line"
        )
    flags = overrides.pop("measure", None) or {}
    given = {k: v for k, v in overrides.items() if v is not None}
    if given.keys() & {"kernels", "families"}:  # a selection on the command line replaces the file's, never adds to it
        raw.pop("kernels", None)
        raw.pop("families", None)
    raw.update(given)
    if flags:  # flags refine the file's table (a file's table that is no table stays as it is: an error)
        raw["measure"] = (
            {**raw["measure"], **flags} if isinstance(raw.get("measure"), dict) else raw.get("measure", flags)
        )
    return _validate(raw)
