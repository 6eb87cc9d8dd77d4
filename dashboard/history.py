"""History: every run of a stage on a GPU model at a shape, ordered by time, and the changes outside the noise.

The change-point rule (the page's help says the same): each run is compared with the run before it in its
series (GPU model, stage, shape, timing mode) by farm.analysis.compare, the rows of a run pooled into one side (median of
their medians; error from the samples' noise and the repeats' spread). A FASTER or SLOWER verdict is a change:
the ~95 % band of the difference excludes zero and the difference exceeds the tolerance. Noise alone stays SAME
or UNCLEAR; a lasting step is marked once, where it happens; a single odd run is marked twice (going, coming back).
"""
from __future__ import annotations

from collections import defaultdict

import pandas as pd

from dashboard import analysis
from farm.analysis import compare as fcompare

SERIES = ["gpu_model", "family", "stage", "dtype", "order", "m", "n", "k", "size_label", "timing_mode"]
RUN = ["dataset", "run_id"]


def _commits(values) -> str:
    return ", ".join(sorted({str(v)[:12] + ("-dirty" if str(v).endswith("-dirty") else "") for v in values if v == v and v}))


def history(rows: pd.DataFrame, tol: float = fcompare.DEFAULT_TOLERANCE) -> pd.DataFrame:
    """One line per series and run, oldest run first: when it ran, its commit(s), the median time (ms) and
    TFLOP/s with the ~95 % band of the estimate, and against the previous run: diff (%), band (%), verdict, change."""
    cols = [*SERIES, "dataset", "run_id", "run", "started", "commit", "rows", "median_ms", "ms_lo", "ms_hi", "tflops",
            "rel_se_pct", "launch", "prev_run", "diff_pct", "band_pct", "verdict", "change", "launch_change"]
    t = analysis.timed(rows)
    if t.empty:
        return pd.DataFrame(columns=cols)
    extra = [c for c in (*SERIES, "timestamp", "git_commit", "flops", "launch_method") if c not in analysis.COMPARE_COLUMNS]
    recs_in = analysis.compare_records(t, extra)  # one conversion; per-group DataFrames cost seconds here
    groups: dict[tuple, dict[tuple, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in recs_in:
        if r["samples_ms"]:
            key = tuple(None if v != v else v for v in (r[c] for c in SERIES))  # NaN != NaN: one key for a missing value
            groups[key][(r["dataset"], r["run_id"])].append(r)
    recs = []
    for key, by_run in groups.items():
        prev = None
        for (dset, run), side_rows in sorted(by_run.items(), key=lambda kv: min(r["timestamp"] for r in kv[1])):
            s = fcompare.side(side_rows)
            rec = dict(zip(SERIES, key))
            rec.update(dataset=dset, run_id=run, run=f"{run} · {dset}", started=min(r["timestamp"] for r in side_rows),
                       commit=_commits(r["git_commit"] for r in side_rows), rows=s.rows, median_ms=s.median_ms,
                       ms_lo=s.median_ms * (1 - 2 * s.rel_se), ms_hi=s.median_ms * (1 + 2 * s.rel_se),
                       tflops=side_rows[0]["flops"] / s.median_ms / 1e9, rel_se_pct=100 * s.rel_se,
                       launch=", ".join(sorted({r["launch_method"] for r in side_rows if isinstance(r["launch_method"], str)})),
                       prev_run="", diff_pct=float("nan"), band_pct=float("nan"), verdict="", change=False, launch_change="")
            if prev is not None:
                c = fcompare.compare_sides(key, prev[1], side_rows, tol)
                rec.update(prev_run=prev[0], diff_pct=100 * c.diff, band_pct=100 * c.band, verdict=c.verdict,
                           change=c.verdict in ("FASTER", "SLOWER"),
                           launch_change=f"{prev[2]} → {rec['launch']}" if prev[2] != rec["launch"] else "")
            prev = (rec["run"], side_rows, rec["launch"])
            recs.append(rec)
    return pd.DataFrame(recs, columns=cols)


def changes(hist: pd.DataFrame) -> pd.DataFrame:
    """The marked changes, biggest slowdowns first."""
    if hist.empty:
        return hist
    return hist[hist["change"]].sort_values("diff_pct", ascending=False, kind="stable").reset_index(drop=True)
