"""The counters that moved: for each ladder step, which profiler metrics changed most.

A ladder step is a stage and the stage before it in its family's ladder, on one GPU
(gpu_uuid) at one shape: the stages of a family that the profile table has for that GPU
and shape, in `position` order, each paired with the one before. Stages that share a
position (a sweep such as the block-geometry variants) are not ladder steps and are left
out; baselines (family "baseline") have no ladder.

Each quantity of the profile table (farm.data.profile_metrics.METRICS, DERIVED) is first reduced to one
value per stage: a multi-kernel stage (split-K, or a cuBLAS call of several kernels) sums
its counts, bytes and durations, keeps the largest registers-per-thread, and averages its
percentages and ratios weighted by each kernel's duration. Where a GPU has profiles of a
stage from several runs, the latest run's is used (or pass run_id).

Ranking, so that percentages and counts share one scale:

- pct quantities (utilisations, hit rates, occupancy): by the absolute change in
  percentage points, score = |after - before| / 10. Ten points weigh as much as a doubling.
- counts, bytes and ratios (bank conflicts, DRAM bytes, bytes per sector, registers):
  by the log ratio, score = |log2((after + floor) / (before + floor))|, floor being
  FLOORS[quantity] (default 0; a count that drops to 0 from many still ranks high, one
  that goes 0 -> 3 does not).

Quantities marked ranked=False (raw components of a derived ratio, the launch's duration)
are never ranked, and only the largest mover of each group (dram, lsu, tensor,
smem_conflicts, ...) is kept, so a step's top list names distinct stories.

The dashboard's Ladder page calls `ladder_moves(dataset_path_or_table, ...)`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass

from farm.data.profile_metrics import QUANTITIES

PCT_POINTS_PER_DOUBLING = 10.0
# Below these, a count is noise: added to both sides before the log ratio.
FLOORS: dict[str, float] = {
    "shared_ld_bank_conflicts": 1e4,
    "shared_st_bank_conflicts": 1e4,
    "shared_bank_conflicts": 1e4,
    "dram_read_bytes": 2**20,
    "dram_write_bytes": 2**20,
}
_SUMMED = ("count", "bytes", "time")


@dataclass(frozen=True)
class Move:
    """How one quantity changed between two stages."""

    quantity: str
    label: str
    unit: str
    kind: str
    before: float
    after: float
    delta: float  # after - before (percentage points for pct)
    ratio: float | None  # after / before; None when before is 0
    score: float  # the ranking score (module docstring)
    text: str  # "LSU pipe 94.7 -> 55.2% (-39.5 pp)"


def _records(profile) -> list[dict]:
    """Profile records from a dataset path/URI, a pyarrow Table, a pandas DataFrame or a list of dicts."""
    if isinstance(profile, str):
        from farm.data.dataset import PROFILE, read_table

        return read_table(profile, PROFILE).to_pylist()
    if hasattr(profile, "to_pylist"):
        return profile.to_pylist()
    if hasattr(profile, "to_dict"):
        return profile.to_dict("records")
    return list(profile)


def _is_null(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def stage_values(profile, run_id: str | None = None) -> dict[tuple, dict]:
    """Per (gpu_uuid, stage, m, n, k): {"info": the cell's columns, "values": {quantity: (value, unit, kind)}}.

    Only ok records with a value count; several runs of one cell: the latest one (by timestamp).
    """
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in _records(profile):
        if r.get("status") != "ok" or _is_null(r.get("value")) or not r.get("quantity"):
            continue
        if run_id is not None and r.get("run_id") != run_id:
            continue
        cells[(r["gpu_uuid"], r["stage"], int(r["m"]), int(r["n"]), int(r["k"]))][r["run_id"]].append(r)
    out = {}
    for key, runs in cells.items():
        latest = max(runs.values(), key=lambda recs: max(_ts(x.get("timestamp")) for x in recs))
        newest: dict[tuple, dict] = {}  # a cell profiled twice in one run: its latest records
        for r in sorted(latest, key=lambda x: _ts(x.get("timestamp"))):
            newest[(r.get("launch_index"), r["quantity"])] = r
        latest = list(newest.values())
        first = latest[0]
        info = {
            c: first.get(c)
            for c in (
                "run_id",
                "gpu_model",
                "gpu_uuid",
                "gpu_name",
                "arch",
                "family",
                "stage",
                "stage_group",
                "position",
                "m",
                "n",
                "k",
            )
        }
        out[key] = {"info": info, "values": _aggregate(latest)}
    return out


def _ts(value) -> float:
    if value is None:
        return 0.0
    if hasattr(value, "timestamp"):
        return value.timestamp()
    return float(value)


def _aggregate(records: list[dict]) -> dict[str, tuple[float, str, str]]:
    """One value per quantity over the kernels of a stage (module docstring)."""
    durations = {r.get("launch_index"): r["value"] for r in records if r["quantity"] == "duration"}
    by_quantity: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_quantity[r["quantity"]].append(r)
    out = {}
    for quantity, recs in by_quantity.items():
        kind, unit = recs[0].get("kind") or "count", recs[0].get("unit") or ""
        values = [float(r["value"]) for r in recs]
        if len(values) == 1:
            value = values[0]
        elif kind in _SUMMED:
            value = sum(values)
        elif kind == "per_thread":
            value = max(values)
        else:
            weights = [durations.get(r.get("launch_index")) or 0.0 for r in recs]
            total = sum(weights)
            value = sum(w * v for w, v in zip(weights, values)) / total if total > 0 else sum(values) / len(values)
        out[quantity] = (value, unit, kind)
    return out


def _score(quantity: str, kind: str, before: float, after: float) -> float:
    if kind == "pct":
        return abs(after - before) / PCT_POINTS_PER_DOUBLING
    floor = FLOORS.get(quantity, 0.0)
    lo, hi = before + floor, after + floor
    if lo <= 0 or hi <= 0:
        if lo == hi:
            return 0.0
        lo, hi = lo + 1.0, hi + 1.0  # one side exactly 0 and no floor: count from 1
        if lo <= 0 or hi <= 0:
            return 0.0
    return abs(math.log2(hi / lo))


def _fmt(value: float, unit: str, kind: str) -> str:
    if kind == "pct":
        return f"{value:.1f}"
    if kind in ("count", "bytes", "time") and abs(value) >= 1e4:
        for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= factor:
                return f"{value / factor:.3g}{suffix}"
    if float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.3g}"


def describe_move(label: str, unit: str, kind: str, before: float, after: float) -> str:
    """'LSU pipe 94.7 -> 55.2% (-39.5 pp)', 'shared-load bank conflicts 151M -> 48.6k (x0.00032)'."""
    unit_text = "%" if kind == "pct" else (f" {unit}" if unit and kind in ("ratio", "time") else "")
    head = f"{label} {_fmt(before, unit, kind)} -> {_fmt(after, unit, kind)}{unit_text}"
    if kind == "pct":
        return f"{head} ({after - before:+.1f} pp)"
    if before:
        return f"{head} (x{after / before:.3g})"
    return head


def compare(
    before: dict[str, tuple[float, str, str]], after: dict[str, tuple[float, str, str]], top: int | None = 3
) -> list[Move]:
    """The quantities that moved most from `before` to `after` (stage_values()[...]["values"]), best first.

    Ranked quantities present on both sides only; the largest mover of each group kept.
    """
    moves: list[tuple[str, Move]] = []
    for quantity in before.keys() & after.keys():
        spec = QUANTITIES.get(quantity)
        if spec is not None and not spec.ranked:
            continue
        (b, unit, kind), (a, _, _) = before[quantity], after[quantity]
        label = spec.label if spec is not None else quantity
        group = spec.group if spec is not None else quantity
        move = Move(
            quantity=quantity,
            label=label,
            unit=unit,
            kind=kind,
            before=b,
            after=a,
            delta=a - b,
            ratio=(a / b) if b else None,
            score=_score(quantity, kind, b, a),
            text=describe_move(label, unit, kind, b, a),
        )
        moves.append((group, move))
    best: dict[str, Move] = {}
    for group, move in moves:
        if group not in best or (move.score, move.quantity) > (best[group].score, best[group].quantity):
            best[group] = move
    ranked = sorted((m for m in best.values() if m.score > 0), key=lambda m: (-m.score, m.quantity))
    return ranked if top is None else ranked[:top]


def ladder_moves(
    profile,
    *,
    run_id: str | None = None,
    gpu_model: str | None = None,
    gpu_uuid: str | None = None,
    family: str | None = None,
    shape: tuple[int, int, int] | None = None,
    top: int | None = 3,
) -> list[dict]:
    """For each ladder step in the profile table, the counters that moved most since the stage before.

    `profile`: a dataset path or URI (its profile table is read), a pyarrow Table, a pandas
    DataFrame or a list of profile records. Filters narrow to one run, GPU model, GPU,
    family or (m, n, k). Returns one dict per step, in (gpu_model, gpu_uuid, family, shape,
    position) order:

        {"gpu_model", "gpu_uuid", "family", "m", "n", "k",
         "stage", "position", "run_id",                        # this stage
         "previous", "previous_position", "previous_run_id",   # the stage before it
         "moves": [ {"rank", "quantity", "label", "unit", "kind", "before", "after",
                     "delta", "ratio", "score", "text"}, ... ]}  # best first, at most `top`

    `text` is ready to show ("LSU pipe 94.7 -> 55.2% (-39.5 pp)"); `delta` is in percentage
    points for kind "pct", `ratio` is after / before. Join to a step gain computed from the
    rows on (gpu_uuid, stage, m, n, k).
    """
    values = stage_values(profile, run_id)
    ladders: dict[tuple, list[dict]] = defaultdict(list)
    for (uuid, _stage, m, n, k), cell in values.items():
        info = cell["info"]
        if info["family"] in (None, "baseline") or info["position"] is None:
            continue
        if (
            (gpu_model and info["gpu_model"] != gpu_model)
            or (gpu_uuid and uuid != gpu_uuid)
            or (family and info["family"] != family)
            or (shape and (m, n, k) != tuple(shape))
        ):
            continue
        ladders[(info["gpu_model"] or "", uuid, info["family"], m, n, k)].append(cell)
    steps = []
    for (model, uuid, fam, m, n, k), cells in sorted(ladders.items()):
        positions = [c["info"]["position"] for c in cells]
        ladder = sorted(
            (c for c in cells if positions.count(c["info"]["position"]) == 1), key=lambda c: c["info"]["position"]
        )
        for prev, this in zip(ladder, ladder[1:]):
            moves = compare(prev["values"], this["values"], top)
            steps.append(
                {
                    "gpu_model": model,
                    "gpu_uuid": uuid,
                    "family": fam,
                    "m": m,
                    "n": n,
                    "k": k,
                    "stage": this["info"]["stage"],
                    "position": this["info"]["position"],
                    "run_id": this["info"]["run_id"],
                    "previous": prev["info"]["stage"],
                    "previous_position": prev["info"]["position"],
                    "previous_run_id": prev["info"]["run_id"],
                    "moves": [{"rank": i, **asdict(mv)} for i, mv in enumerate(moves, 1)],
                }
            )
    return steps


def stage_moves(
    profile,
    before_stage: str,
    after_stage: str,
    *,
    gpu_uuid: str | None = None,
    shape: tuple[int, int, int] | None = None,
    run_id: str | None = None,
    top: int | None = 3,
) -> list[dict]:
    """The same comparison between any two stages (e.g. bank_pad_vec -> cublas_fp32), per GPU and shape both have."""
    values = stage_values(profile, run_id)
    out = []
    for (uuid, stage, m, n, k), cell in sorted(values.items()):
        if stage != after_stage or (gpu_uuid and uuid != gpu_uuid) or (shape and (m, n, k) != tuple(shape)):
            continue
        prev = values.get((uuid, before_stage, m, n, k))
        if prev is None:
            continue
        out.append(
            {
                "gpu_model": cell["info"]["gpu_model"],
                "gpu_uuid": uuid,
                "m": m,
                "n": n,
                "k": k,
                "stage": after_stage,
                "previous": before_stage,
                "moves": [
                    {"rank": i, **asdict(mv)} for i, mv in enumerate(compare(prev["values"], cell["values"], top), 1)
                ],
            }
        )
    return out


def moves_table(profile, **filters):
    """ladder_moves() flattened for pandas / Altair: one row per (step, moved counter)."""
    import pandas as pd

    rows = [
        {**{k: v for k, v in step.items() if k != "moves"}, **move}
        for step in ladder_moves(profile, **filters)
        for move in step["moves"]
    ]
    columns = [
        "gpu_model",
        "gpu_uuid",
        "family",
        "m",
        "n",
        "k",
        "stage",
        "position",
        "run_id",
        "previous",
        "previous_position",
        "previous_run_id",
        "rank",
        "quantity",
        "label",
        "unit",
        "kind",
        "before",
        "after",
        "delta",
        "ratio",
        "score",
        "text",
    ]
    return pd.DataFrame(rows, columns=columns)
