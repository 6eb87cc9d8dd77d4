"""Console tables from a dataset: per GPU and shape, each stage's time, throughput and % of its baseline."""
from __future__ import annotations

import statistics
from collections import defaultdict

from farm.dataset import read_table


def ladder_table(output: str, run_id: str | None = None) -> str:
    """Markdown tables (one per GPU model and shape) aggregating repeats by their median."""
    rows = read_table(output).to_pylist()
    if run_id:
        rows = [r for r in rows if r["run_id"] == run_id]
    if not rows:
        return "no rows" + (f" for run {run_id}" if run_id else "")
    groups: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["gpu_model"], r["m"], r["n"], r["k"])][r["stage"]].append(r)
    out = []
    for (model, m, n, k), stages in sorted(groups.items()):
        out.append(f"\n### {model}, {m}x{n}x{k}\n")
        out.append("| stage | family | ms (median of repeats) | TFLOPS | % baseline | repeat spread | IQR/median | status |")
        out.append("|---|---|---|---|---|---|---|---|")
        order = sorted(stages.values(), key=lambda rs: (rs[0]["family"] != "baseline", rs[0]["family"], rs[0]["position"], rs[0]["stage"]))
        for rs in order:
            ok = [r for r in rs if r["status"] == "ok"]
            first = rs[0]
            if not ok:
                reason = (first["status_reason"] or "")[:60]
                out.append(f"| {first['stage']} | {first['family']} | | | | | | {first['status']}: {reason} |")
                continue
            med = statistics.median(r["median_ms"] for r in ok)
            pct = statistics.median(r["pct_of_baseline"] for r in ok)
            meds = [r["median_ms"] for r in ok]
            spread = (max(meds) - min(meds)) / med if len(meds) > 1 else 0.0
            iqr = statistics.median(r["iqr_ms"] / r["median_ms"] for r in ok)
            out.append(f"| {first['stage']} | {first['family']} | {med:.4f} | {first['flops'] / med / 1e9:.2f} | {pct:.1f} | "
                       f"{100 * spread:.2f}% (n={len(ok)}) | {100 * iqr:.2f}% | ok |")
    return "\n".join(out)
