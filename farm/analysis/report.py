"""Console tables from a dataset: per GPU and shape, each stage's time, throughput, % of its baseline, of the
faster vendor library and of the GPU's dense peak (farm.data.peak); the headline: per GPU model, family and
shape, the stage closest to its cuBLAS, and per LLM model (farm.data.llm_shapes) the geometric mean of those over
the model's layer shapes; and the runs: per sweep and GPU, start-up, cells and the farm's overhead
over the timed GPU windows.
A % whose kernel and baseline were launched differently is marked (farm.data.derived.launch_mismatch), with the
reasons listed under the table."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

from farm.data.dataset import RUNS, exists, read_table
from farm.data.derived import launch_mismatch, with_alone_baseline, with_vendor_best
from farm.data.llm_shapes import MODELS
from farm.data.peak import pct_of_peak
from farm.data.schema import STATUSES

FLAG = "(!)"


def _rows(output: str, run_id: str | None) -> list[dict]:
    df = read_table(output).to_pandas()
    if run_id:
        df = df[df["run_id"] == run_id]
    df = with_alone_baseline(with_vendor_best(df)).assign(launch_flag=launch_mismatch(df))
    return df.astype(object).where(df.notna(), None).to_dict("records")


def _flag(rows: list[dict]) -> str:
    return f" {FLAG}" if any(r["launch_flag"] for r in rows) else ""


def _flag_notes(rows: list[dict]) -> str:
    reasons = sorted({r["launch_flag"] for r in rows if r["launch_flag"]})
    ok = [r for r in rows if r["status"] == "ok"]
    unchecked = sum(1 for r in ok if not r.get("post_checked"))
    post = (
        (
            f"\n{unchecked} of {len(ok)} ok rows come from a harness before schema 4: the launches they timed were not "
            "checked again after timing (post_checked)"
        )
        if unchecked
        else ""
    )
    return "".join(f"\n{FLAG} {reason}" for reason in reasons) + post


def _pct(rows: list[dict], column: str) -> str:
    values = [r[column] for r in rows if r[column] is not None]
    return f"{statistics.median(values):.1f}" if values else ""


def _peak_pct(row: dict, median_ms: float) -> str:
    """% of the GPU's dense peak for the row's precision at `median_ms` (farm.data.peak), blank where unknown."""
    pct = pct_of_peak({**row, "median_ms": median_ms})
    return "" if pct is None else f"{pct:.1f}"


def _no_rows(run_id: str | None) -> str:
    return "no rows" + (f" for run {run_id}" if run_id else "")


def _median_pct(rows: list[dict]) -> float:
    return statistics.median(r["pct_of_baseline"] for r in rows)


def ladder_table(output: str, run_id: str | None = None) -> str:
    """Markdown tables (one per GPU model and shape) aggregating repeats by their median."""
    rows = _rows(output, run_id)
    if not rows:
        return _no_rows(run_id)
    groups: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["gpu_model"], r["m"], r["n"], r["k"])][r["stage"]].append(r)
    out = []
    for (model, m, n, k), stages in sorted(groups.items()):
        out.append(f"\n### {model}, {m}x{n}x{k}\n")
        out.append(
            "| stage | family | ms (median of repeats) | TFLOPS | % baseline | % baseline alone | % vendor best | % of peak | repeat spread | IQR/median | status |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        order = sorted(
            stages.values(),
            key=lambda rs: (rs[0]["family"] != "baseline", rs[0]["family"], rs[0]["position"], rs[0]["stage"]),
        )
        for rs in order:
            ok = [r for r in rs if r["status"] == "ok"]
            first = rs[0]
            if not ok:
                reason = (first["status_reason"] or "")[:60]
                out.append(f"| {first['stage']} | {first['family']} | | | | | | | | | {first['status']}: {reason} |")
                continue
            med = statistics.median(r["median_ms"] for r in ok)
            pct = _median_pct(ok)
            meds = [r["median_ms"] for r in ok]
            spread = (max(meds) - min(meds)) / med if len(meds) > 1 else 0.0
            iqr = statistics.median(r["iqr_ms"] / r["median_ms"] for r in ok)
            out.append(
                f"| {first['stage']} | {first['family']} | {med:.4f} | {first['flops'] / med / 1e9:.2f} | {pct:.1f}{_flag(ok)} | "
                f"{_pct(ok, 'pct_of_alone_baseline')} | {_pct(ok, 'pct_of_vendor_best')} | {_peak_pct(ok[0], med)} | {100 * spread:.2f}% (n={len(ok)}) | {100 * iqr:.2f}% | ok |"
            )
    return "\n".join(out) + _flag_notes(rows)


def kernel_rows(rows: list[dict]) -> list[dict]:
    """The rows the headline ranks: ok, verified rows of kernels (baselines and tuning configurations left out)."""
    return [
        r
        for r in rows
        if r["status"] == "ok" and r["verified"] and r["family"] != "baseline" and r["stage_group"] != "tuning"
    ]


def headline_table(output: str, run_id: str | None = None) -> str:
    """One markdown table: per GPU model, kernel family and shape, the stage with the highest median % of its
    same-precision cuBLAS (kernel_rows), with the spread of its medians across measurements (repeats, cards, runs):
    (max - min) / median."""
    rows = kernel_rows(_rows(output, run_id))
    if not rows:
        return _no_rows(run_id)
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[(r["gpu_model"], r["family"], r["m"] * r["n"] * r["k"], r["m"], r["n"], r["k"])][r["stage"]].append(r)
    out = [
        "| GPU model | family | shape | best stage | ms | TFLOPS | % of cuBLAS | % of cuBLAS alone | % of vendor best | % of peak | spread | measurements |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (model, family, _, m, n, k), stages in sorted(cells.items()):
        best = _best(stages)
        meds = [r["median_ms"] for r in best]
        med = statistics.median(meds)
        out.append(
            f"| {model} | {family} | {m}x{n}x{k} | {best[0]['stage']} | {med:.4f} | {best[0]['flops'] / med / 1e9:.1f} | "
            f"{_median_pct(best):.1f} of {best[0]['baseline']}{_flag(best)} | {_pct(best, 'pct_of_alone_baseline')} | {_pct(best, 'pct_of_vendor_best')} | {_peak_pct(best[0], med)} | "
            f"{100 * (max(meds) - min(meds)) / med:.2f}% | {len(best)} |"
        )
    return "\n".join(out) + llm_models_table(rows) + _flag_notes(rows)


def _best(stages: dict[str, list[dict]]) -> list[dict]:
    """The rows of the stage with the highest median % of its cuBLAS."""
    return max(stages.values(), key=_median_pct)


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def llm_cells(rows: list[dict]) -> list[dict]:
    """Per GPU model, LLM model (farm.data.llm_shapes, in its order), family, precision and layer shape measured: the
    best stage (highest median % of cuBLAS), that median (pct_of_cublas), its median % of the faster vendor library
    (pct_of_vendor_best, None where it has none) and the shapes the model has (shapes_total). `rows`: kernel_rows."""
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[(r["gpu_model"], r["family"], r["dtype"], (r["m"], r["n"], r["k"]))][r["stage"]].append(r)
    out = []
    for order, llm in enumerate(MODELS):
        shapes = set(llm.shapes())
        for (gpu, family, dtype, (m, n, k)), stages in cells.items():
            if (m, n, k) in shapes:
                best = _best(stages)
                vendor = [r["pct_of_vendor_best"] for r in best if r["pct_of_vendor_best"] is not None]
                out.append(
                    {
                        "gpu_model": gpu,
                        "llm_order": order,
                        "llm_model": llm.name,
                        "family": family,
                        "dtype": dtype,
                        "m": m,
                        "n": n,
                        "k": k,
                        "stage": best[0]["stage"],
                        "pct_of_cublas": _median_pct(best),
                        "pct_of_vendor_best": statistics.median(vendor) if vendor else None,
                        "shapes_total": len(shapes),
                    }
                )
    return out


def llm_headlines(cells: list[dict]) -> list[dict]:
    """Per GPU model, LLM model, family and precision of `cells` (llm_cells), sorted: the shapes measured, the
    geometric mean of the best stage's % of cuBLAS and of the faster vendor library (None unless every shape has
    one), and the lowest cell (its % and shape)."""
    per_model: dict[tuple, list[dict]] = defaultdict(list)
    for c in cells:
        per_model[(c["gpu_model"], c["llm_order"], c["llm_model"], c["family"], c["dtype"])].append(c)
    out = []
    for (gpu, _, name, family, dtype), group in sorted(per_model.items()):
        vendor = [c["pct_of_vendor_best"] for c in group if c["pct_of_vendor_best"] is not None]
        low = min(group, key=lambda c: (c["pct_of_cublas"], c["m"], c["n"], c["k"]))
        out.append(
            {
                "gpu_model": gpu,
                "llm_model": name,
                "family": family,
                "dtype": dtype,
                "shapes_measured": len(group),
                "shapes_total": group[0]["shapes_total"],
                "geomean_pct_of_cublas": geomean([c["pct_of_cublas"] for c in group]),
                "geomean_pct_of_vendor_best": geomean(vendor) if len(vendor) == len(group) else None,
                "lowest_pct": low["pct_of_cublas"],
                "lowest_shape": f"{low['m']}x{low['n']}x{low['k']}",
            }
        )
    return out


def llm_models_table(rows: list[dict]) -> str:
    """The LLM models' headline rows (llm_headlines of `rows`, kernel_rows) as a markdown table; empty when no row
    has a model's shape."""
    heads = llm_headlines(llm_cells(rows))
    if not heads:
        return ""
    out = [
        "\n\n| GPU model | LLM model | family | precision | shapes measured | geo-mean % of its baseline (cuBLAS; FP8: cuBLASLt) | geo-mean % of vendor best | lowest |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for h in heads:
        vendor = h["geomean_pct_of_vendor_best"]
        out.append(
            f"| {h['gpu_model']} | {h['llm_model']} | {h['family']} | {h['dtype']} | {h['shapes_measured']} of "
            f"{h['shapes_total']} | {h['geomean_pct_of_cublas']:.1f} | {'' if vendor is None else f'{vendor:.1f}'} | "
            f"{h['lowest_pct']:.1f} at {h['lowest_shape']} |"
        )
    return "\n".join(out)


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def runs_table(output: str, run_id: str | None = None) -> str:
    """One markdown row per sweep and GPU (a resumed run has one per part, by start time); empty without a runs table."""
    if not exists(output, RUNS):
        return ""
    runs = [r for r in read_table(output, RUNS).to_pylist() if not run_id or r["run_id"] == run_id]
    out = [
        "| run | started (UTC) | GPU | mode | start-up s | first row s | wall s | "
        + " | ".join(STATUSES)
        + " | not run | timed GPU s | overhead | stopped |",
        "|---|---|---|---|---|---|---|" + "---|" * len(STATUSES) + "---|---|---|---|",
    ]
    for r in sorted(runs, key=lambda r: (r["run_id"], r["started_at"], r["gpu_model"], r["gpu_uuid"])):
        counts = " | ".join(
            "-" if r.get(f"cells_{s}") is None else str(r[f"cells_{s}"]) for s in STATUSES
        )  # "-": not counted then
        overhead = "" if r["overhead_ratio"] is None else f"{r['overhead_ratio']:.2f}x"
        out.append(
            f"| {r['run_id']} | {r['started_at']:%Y-%m-%d %H:%M:%S} | {r['gpu_model']} [{r['gpu_uuid'][-8:]}] | "
            f"{r['mode']} | {_seconds(r['startup_seconds'])} | {_seconds(r['first_row_seconds'])} | "
            f"{_seconds(r['wall_seconds'])} | {counts} | {r['cells_not_run']} | {_seconds(r['timed_seconds'])} | "
            f"{overhead} | {'yes' if r['interrupted'] else ''} |"
        )
    return "\n".join(out)
