"""What a paired A/A shows, for .ci/gpu-session.sh's aapaired and aafull steps (run on the device, from the repo root):

  python3 .ci/paired_report.py pairs RES RUN            the pairs' log ratios B/A by group
  python3 .ci/paired_report.py split RES RUN [--cross-fit]   verdicts and planted slowdowns, unthrottled apart from
                                                        power-capped cells, and verdict counts per family

RES is the dataset, RUN the paired sweep's run id (its arms are RUN-a and RUN-b). A cell is power-capped where either
arm's row of any of its pairs has throttle_power.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import Counter, defaultdict

from farm.analysis import plant
from farm.analysis.compare import VERDICTS, compare_rows
from farm.analysis.noise import NoiseModel
from farm.cells import Cell, arm_order
from farm.data.dataset import read_table


def _arms(res: str, run: str) -> tuple[list[dict], list[dict]]:
    rows = read_table(res).to_pylist()
    return [r for r in rows if r["run_id"] == f"{run}-a"], [r for r in rows if r["run_id"] == f"{run}-b"]


def _quantile_abs(xs: list[float], p: float) -> float:
    xs = sorted(abs(x) for x in xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def pairs(res: str, run: str) -> None:
    """Per group of pairs (all, family, which arm led the timing, which was set up first, unthrottled or capped, pairs
    a cell): the median log ratio B/A, its robust spread and |d|'s 90th and 99th percentiles; then the cells whose
    pairs moved most."""
    a, b = _arms(res, run)
    by_pair = {r["pair"]: r for r in b if r["status"] == "ok"}
    per_cell: dict[tuple, list[float]] = defaultdict(list)
    groups: dict[str, list[float]] = defaultdict(list)
    matched = []
    for ra in a:
        rb = by_pair.get(ra["pair"])
        if ra["status"] != "ok" or rb is None:
            continue
        d = math.log(rb["median_ms"] / ra["median_ms"])
        cell = Cell(ra["stage"], ra["m"], ra["n"], ra["k"], ra["repeat"])
        capped = "power-capped" if ra.get("throttle_power") or rb.get("throttle_power") else "unthrottled"
        per_cell[cell.key()[:4]].append(d)
        matched.append((cell, capped, ra, d))
    counts = {key: len(ds) for key, ds in per_cell.items()}
    for cell, capped, ra, d in matched:
        for key in (
            "all",
            ra["family"],
            f"first {arm_order(cell)[0]}",
            f"loaded first {ra.get('loaded_first')}",
            capped,
            f"{counts[cell.key()[:4]]} pairs a cell",
        ):
            groups[key].append(d)
    print(f"{'pairs':<20} {'n':>5} {'median d %':>10} {'robust sd %':>11} {'|d| p90 %':>9} {'|d| p99 %':>9}")
    first = ["all", "unthrottled", "power-capped", "first a", "first b", "loaded first a", "loaded first b"]
    for key, ds in sorted(
        groups.items(), key=lambda kv: (kv[0] not in first, first.index(kv[0]) if kv[0] in first else 0, kv[0])
    ):
        med = statistics.median(ds)
        mad = 1.4826 * statistics.median(abs(x - med) for x in ds)
        print(
            f"{key:<20} {len(ds):>5} {100 * med:>+10.3f} {100 * mad:>11.3f} {100 * _quantile_abs(ds, 0.9):>9.2f} "
            f"{100 * _quantile_abs(ds, 0.99):>9.2f}"
        )
    print(f"cells {len(per_cell)}, pairs a cell {dict(sorted(Counter(counts.values()).items()))}")
    print("cells whose mean log ratio moved most (pairs' d %, loaded first):")
    loaded = defaultdict(list)
    for cell, _, ra, _ in matched:
        loaded[cell.key()[:4]].append(ra.get("loaded_first"))
    worst = sorted(per_cell.items(), key=lambda kv: -abs(statistics.fmean(kv[1])))[:8]
    for key, ds in worst:
        print(f"  {' '.join(map(str, key)):<44} {' '.join(f'{100 * d:+.2f}' for d in ds)}  {loaded[key]}")


def split(res: str, run: str, cross_fit: bool) -> None:
    """Verdicts and planted slowdowns (arm b's samples x (1 + x)), all cells, unthrottled and power-capped; verdict
    counts per family at x = 0 (every FASTER or SLOWER false)."""
    a, b = _arms(res, run)
    capped = {(r["stage"], r["m"], r["n"], r["k"]) for r in a + b if r.get("throttle_power")}
    keep = {
        "all": lambda c: True,
        "unthrottled": lambda c: c.key[1:5] not in capped,
        "power-capped": lambda c: c.key[1:5] in capped,
    }
    for x in (0, 0.01, 0.02, 0.03, 0.05):
        comps = (
            plant.cross_fitted(a, b, x=x)
            if cross_fit
            else compare_rows(a, plant.planted(b, x), model=NoiseModel.learn(a + b))
        )
        for name, wanted in keep.items():
            cs = [c for c in comps if wanted(c)]
            n = len(cs) or 1
            v = Counter(c.verdict for c in cs)
            false = v["FASTER"] + (v["SLOWER"] if x == 0 else 0)
            print(
                f"planted {100 * x:.0f}% {name:<13} cells {len(cs):>4} false {100 * false / n:5.1f}% "
                f"UNCLEAR {100 * v['UNCLEAR'] / n:5.1f}% SLOWER {100 * v['SLOWER'] / n:5.1f}%"
            )
        if x == 0:
            families: dict[str, Counter] = defaultdict(Counter)
            for c in comps:
                families[c.family or ""][c.verdict] += 1
            print(f"  {'family':<14} {'cells':>5} " + " ".join(f"{v:>7}" for v in VERDICTS))
            for family, v in sorted(families.items()):
                print(f"  {family:<14} {sum(v.values()):>5} " + " ".join(f"{v[k]:>7}" for k in VERDICTS))
            for c in comps:
                if c.verdict in ("FASTER", "SLOWER"):
                    why = "; ".join([*c.context, *([c.reason] if c.reason else [])])
                    cell = " ".join(map(str, c.key[1:]))  # the GPU model is in the table above
                    print(f"  false: {cell} {100 * c.diff:+.2f}% +-{100 * c.band:.2f}% {c.verdict} ({why})"[:170])


if __name__ == "__main__":
    what, res, run, *flags = sys.argv[1:]
    pairs(res, run) if what == "pairs" else split(res, run, "--cross-fit" in flags)
