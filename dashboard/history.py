"""History: every run of a stage on a GPU model at a shape, ordered by time, and the steps outside the noise.

Change points come from farm.analysis.changepoints: a penalised step fit over each series (GPU model, stage, shape,
timing mode), every run one point weighted by the noise model's variance for it (its repeats, and the run-to-run
noise learned from the loaded datasets' A/A history). A step is marked at the first run of its new level when it
exceeds half the tolerance; a step across which the card, driver, CUDA or library version, clocks or power limit also
changed is marked as an environment change (named), not counted as a regression or an improvement. Noise alone
marks nothing; a single odd run is a level of its own only when it is far outside the noise.
"""
from __future__ import annotations

from collections import defaultdict

import pandas as pd

from dashboard import analysis
from farm.analysis import changepoints
from farm.analysis import compare as fcompare
from farm.analysis.noise import NoiseModel

SERIES = ["gpu_model", "family", "stage", "dtype", "order", "m", "n", "k", "size_label", "timing_mode"]
RUN = ["dataset", "run_id"]


def _commits(values) -> str:
    return ", ".join(sorted({str(v)[:12] + ("-dirty" if str(v).endswith("-dirty") else "") for v in values if v == v and v}))


def history(rows: pd.DataFrame, tol: float = fcompare.DEFAULT_TOLERANCE) -> pd.DataFrame:
    """One line per series and run, oldest run first: when it ran, its commit(s), the median time (ms) and
    TFLOP/s with the ~95 % band of the estimate, and where a new level begins: its change against the previous level
    (diff and 99 % band, %), verdict, whether it is a change of the code (`change`) or came with a change of the
    environment (`environment` names it)."""
    cols = [*SERIES, "dataset", "run_id", "run", "started", "commit", "rows", "median_ms", "ms_lo", "ms_hi", "tflops",
            "rel_se_pct", "launch", "prev_run", "diff_pct", "band_pct", "verdict", "change", "environment", "launch_change"]
    t = analysis.timed(rows)
    if t.empty:
        return pd.DataFrame(columns=cols)
    extra = [c for c in (*SERIES, "timestamp", "flops") if c not in analysis.COMPARE_COLUMNS]
    recs_in = analysis.compare_records(t, extra)  # one conversion; per-group DataFrames cost seconds here
    model = NoiseModel.learn(recs_in)
    groups: dict[tuple, dict[tuple, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in recs_in:
        if r["samples_ms"]:
            key = tuple(None if v != v else v for v in (r[c] for c in SERIES))  # NaN != NaN: one key for a missing value
            groups[key][(r["dataset"], r["run_id"])].append(r)
    recs = []
    for key, by_run in groups.items():
        ordered = sorted(by_run.items(), key=lambda kv: min(r["timestamp"] for r in kv[1]))
        found = {s.run: s for s in changepoints.steps([rs for _, rs in ordered], model, tol)}
        prev = None
        for i, ((dset, run), side_rows) in enumerate(ordered):
            s = fcompare.side(side_rows, model)
            rec = dict(zip(SERIES, key))
            rec.update(dataset=dset, run_id=run, run=f"{run} · {dset}", started=min(r["timestamp"] for r in side_rows),
                       commit=_commits(r["git_commit"] for r in side_rows), rows=s.rows, median_ms=s.median_ms,
                       ms_lo=s.median_ms * (1 - 2 * s.rel_se), ms_hi=s.median_ms * (1 + 2 * s.rel_se),
                       tflops=side_rows[0]["flops"] / s.median_ms / 1e9, rel_se_pct=100 * s.rel_se,
                       launch=", ".join(sorted({r["launch_method"] for r in side_rows if isinstance(r["launch_method"], str)})),
                       prev_run="", diff_pct=float("nan"), band_pct=float("nan"), verdict="", change=False, environment="",
                       launch_change="")
            if i in found:
                step = found[i]
                rec.update(prev_run=prev[0], diff_pct=100 * step.diff, band_pct=100 * step.band, verdict=step.verdict,
                           change=not step.environment, environment="; ".join(step.environment),
                           launch_change=f"{prev[1]} → {rec['launch']}" if prev[1] != rec["launch"] else "")
            prev = (rec["run"], rec["launch"])
            recs.append(rec)
    return pd.DataFrame(recs, columns=cols)


def changes(hist: pd.DataFrame) -> pd.DataFrame:
    """The marked steps, biggest slowdowns first: the code's own changes (`change`) and environment changes."""
    if hist.empty:
        return hist
    marked = hist["verdict"].isin(["FASTER", "SLOWER"])
    return hist[marked].sort_values("diff_pct", ascending=False, kind="stable").reset_index(drop=True)
