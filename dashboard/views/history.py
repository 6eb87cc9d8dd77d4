"""History: every run of a stage on a GPU model at a shape, ordered by time, and the steps outside the noise.

Change points come from farm.analysis.changepoints: a penalised step fit over each series (GPU model, stage, shape,
timing mode), every run one point weighted by the noise model's variance for it (its repeats, and the run-to-run
noise learned from the loaded datasets' A/A history). A step is marked at the first run of its new level when it
exceeds half the tolerance; a step across which the card, driver, CUDA or library version, clocks or power limit also
changed is marked as an environment change (named), not counted as a regression or an improvement. Noise alone
marks nothing; a single odd run is a level of its own only when it is far outside the noise; each step links to Compare.
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlencode

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import frames, ui, verdicts
from dashboard.marks import clean, fields_of, never_null, nominal, stage_order, tip
from farm.analysis import changepoints, compare as fcompare
from farm.analysis.noise import NoiseModel, identical_arms

# ---------------------------------------------------------------- queries

SERIES = ["gpu_model", "family", "stage", "dtype", "order", "m", "n", "k", "size_label", "timing_mode"]


def _commits(values) -> str:
    return ", ".join(
        sorted({str(v)[:12] + ("-dirty" if str(v).endswith("-dirty") else "") for v in values if v == v and v})
    )


def history(rows: pd.DataFrame, tol: float = fcompare.DEFAULT_TOLERANCE) -> pd.DataFrame:
    """One line per series and run, oldest run first: when it ran, its commit(s), the median time (ms) and
    TFLOP/s with the ~95 % band of the estimate, and where a new level begins: its change against the previous level
    (diff and 99 % band, %), verdict, whether it is a change of the code (`change`) or came with a change of the
    environment (`environment` names it); a paired sweep is one run whose `arm` says which arms it pools (both
    where they ran the same code: _series_runs), and kernel rows name their machine code."""
    cols = [
        *SERIES,
        "dataset",
        "run_id",
        "run",
        "started",
        "commit",
        "arm",
        "code",
        "rows",
        "median_ms",
        "ms_lo",
        "ms_hi",
        "tflops",
        "rel_se_pct",
        "launch",
        "prev_run",
        "diff_pct",
        "band_pct",
        "verdict",
        "change",
        "environment",
        "launch_change",
    ]
    t = frames.timed(rows)
    if t.empty:
        return pd.DataFrame(columns=cols)
    extra = [c for c in (*SERIES, "timestamp", "flops") if c not in verdicts.COMPARE_COLUMNS]
    recs_in = verdicts.compare_records(t, extra)  # one conversion; per-group DataFrames cost seconds here
    model = NoiseModel.learn(recs_in)
    groups: dict[tuple, dict[tuple, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r, run in zip(recs_in, _series_runs(recs_in)):
        if r["samples_ms"] and run is not None:
            key = tuple(
                None if v != v else v for v in (r[c] for c in SERIES)
            )  # NaN != NaN: one key for a missing value
            groups[key][run].append(r)
    recs = []
    for key, by_run in groups.items():
        ordered = sorted(by_run.items(), key=lambda kv: min(r["timestamp"] for r in kv[1]))
        found = {s.run: s for s in changepoints.steps([rs for _, rs in ordered], model, tol)}
        prev = None
        for i, ((dset, run), side_rows) in enumerate(ordered):
            s = fcompare.side(side_rows, model)
            rec = dict(zip(SERIES, key))
            rec.update(
                dataset=dset,
                run_id=run,
                run=f"{run} · {dset}",
                started=min(r["timestamp"] for r in side_rows),
                commit=_commits(r["git_commit"] for r in side_rows),
                arm=", ".join(sorted({r["arm"] for r in side_rows if r.get("arm")})),
                code=", ".join(sorted({"…" + r["code_sha256"][-8:] for r in side_rows if r.get("code_sha256")})),
                rows=s.rows,
                median_ms=s.median_ms,
                ms_lo=s.median_ms * (1 - 2 * s.rel_se),
                ms_hi=s.median_ms * (1 + 2 * s.rel_se),
                tflops=side_rows[0]["flops"] / s.median_ms / 1e9,
                rel_se_pct=100 * s.rel_se,
                launch=", ".join(
                    sorted({r["launch_method"] for r in side_rows if isinstance(r["launch_method"], str)})
                ),
                prev_run="",
                diff_pct=float("nan"),
                band_pct=float("nan"),
                verdict="",
                change=False,
                environment="",
                launch_change="",
            )
            if i in found:
                step = found[i]
                rec.update(
                    prev_run=prev[0],
                    diff_pct=100 * step.diff,
                    band_pct=100 * step.band,
                    verdict=step.verdict,
                    change=not step.environment,
                    environment="; ".join(step.environment),
                    launch_change=f"{prev[1]} → {rec['launch']}" if prev[1] != rec["launch"] else "",
                )
            prev = (rec["run"], rec["launch"])
            recs.append(rec)
    return pd.DataFrame(recs, columns=cols)


def _series_runs(recs: list[dict]) -> list[tuple | None]:
    """Each record's point in its series, (dataset, run): a paired sweep is one run with two arms, its arm a's run
    (what a link to Compare opens). Arm b joins it where it ran arm a's code (an A/A pair, or a stage a
    --base-kernels sweep left unchanged); arm b of a changed stage ran the base tree, older code measured now, and is
    no point of the series (None): Compare judges it against arm a, pair by pair."""
    arm_a = {(r["dataset"], r["pair"]): r for r in recs if r.get("pair") and r.get("arm") == "a"}
    out = []
    for r in recs:
        a = arm_a.get((r["dataset"], r.get("pair")))
        if r.get("arm") != "b" or a is None:
            out.append((r["dataset"], r["run_id"]))
        else:
            out.append((a["dataset"], a["run_id"]) if identical_arms(a, r) else None)
    return out


def changes(hist: pd.DataFrame) -> pd.DataFrame:
    """The marked steps, biggest slowdowns first: the code's own changes (`change`) and environment changes."""
    if hist.empty:
        return hist
    marked = hist["verdict"].isin(["FASTER", "SLOWER"])
    return hist[marked].sort_values("diff_pct", ascending=False, kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- charts

HISTORY_COLORS = {"first run": "#000000", **verdicts.VERDICT_COLORS}


def history_chart(hist: pd.DataFrame) -> alt.FacetChart:
    """Median time per run against the run's start (UTC), one panel per stage (own y scale); whiskers: ~95 % band of the
    estimate; colour: verdict against the previous run, large rings: the changes outside the noise."""
    tips = [
        nominal("stage", "stage"),
        nominal("gpu_model", "GPU model"),
        nominal("size_label", "size"),
        nominal("run", "run"),
        nominal("commit", "commit"),
        nominal("arm", "paired sweep's arms"),
        nominal("code", "machine code"),
        tip("started", "started", type_="temporal"),
        tip("median_ms", "median (ms)", ".5f"),
        tip("ms_lo", "band low (ms)", ".5f"),
        tip("ms_hi", "band high (ms)", ".5f"),
        tip("tflops", "TFLOP/s", ".2f"),
        tip("rows", "rows", "d"),
        nominal("prev_run", "previous run"),
        tip("diff_pct", "vs previous (%)", "+.2f"),
        tip("band_pct", "± band (%)", ".2f"),
        nominal("verdict", "verdict"),
    ]
    df = clean(hist, [*fields_of(tips), "change", "order"])
    tips = never_null(df, tips)
    df["verdict"] = df["verdict"].replace("", "first run")
    stages = stage_order(df)
    x = alt.X(
        "started:T",
        title="run started (UTC)",
        scale=alt.Scale(type="utc"),
        axis=alt.Axis(format="%m-%d %H:%M", labelAngle=-30),
    )
    y_title = "median time (ms)"
    color = alt.Color(
        "verdict:N",
        title="against the previous run",
        scale=alt.Scale(domain=list(HISTORY_COLORS), range=list(HISTORY_COLORS.values())),
        legend=alt.Legend(orient="top"),
    )
    base = alt.Chart().encode(x=x)
    layers = [
        base.mark_line(color="#999").encode(y=alt.Y("median_ms:Q", title=y_title, scale=alt.Scale(zero=False))),
        base.mark_rule(strokeWidth=1.5).encode(
            y=alt.Y("ms_lo:Q", title=y_title), y2="ms_hi:Q", color=color, tooltip=tips
        ),
        base.mark_point(filled=True, size=50, opacity=1).encode(
            y=alt.Y("median_ms:Q", title=y_title), color=color, tooltip=tips
        ),
        base.transform_filter("datum.change")
        .mark_point(size=260, strokeWidth=2.5, filled=False)
        .encode(y=alt.Y("median_ms:Q", title=y_title), color=color, tooltip=tips),
    ]
    return (
        alt.layer(*layers, data=df)
        .properties(width=290, height=180)
        .facet(  # two panels fit 800 px
            facet=alt.Facet(
                "stage:N", sort=stages, title=None, header=alt.Header(labelFontSize=13, labelFontWeight="bold")
            ),
            columns=2,
        )
        .resolve_scale(y="independent")
    )


# ---------------------------------------------------------------- the page

CAPTION = (
    "Per stage, GPU model and shape, every run's median time ordered by when it ran, with its commit, like asv "
    "or conbench follow a benchmark. Whiskers: the ~95 % band of each run's median."
)
RULE = (
    "**Change points.** Each series (GPU model, stage, shape, timing mode) is fitted with levels that change "
    "as few times as the noise allows: a penalised step fit (as asv does) over its runs, each run weighted by the "
    "noise model's variance for it (its repeats, and the run-to-run noise learned from the A/A history of the loaded "
    "datasets; `farm/analysis/changepoints.py`). A step is marked where a new level begins and exceeds half the "
    "tolerance (the smallest difference `farm compare` reports). Where the card, driver, CUDA or library version, SM clock or power limit changed across the step too, "
    "it is marked as an **environment** change, with what changed, and not counted as a regression. Noise alone "
    "marks nothing."
)


def compare_link(prev_run: str, run: str) -> str:
    """The Compare page with these two runs picked (relative URL: the app's own)."""
    return "compare?" + urlencode({"by": "run", "a": prev_run, "b": run})


def body(L, rows, _) -> None:
    with st.expander("How a change is found", expanded=False):
        st.markdown(RULE)
    tol = (
        st.columns([1, 4])[0].number_input(
            "Tolerance (%)",
            min_value=0.1,
            max_value=20.0,
            value=100 * fcompare.DEFAULT_TOLERANCE,
            step=0.5,
            key="hist_tol",
            help="the smallest change that matters: a step beyond the noise and half of it is a change",
        )
        / 100
    )
    hist = history(rows, tol)
    if hist.empty:
        st.info("No timed rows with per-batch samples under the current filters.")
        return
    runs_per = hist.groupby(["gpu_model", "stage", "size_label"])["run"].transform("size")
    if (runs_per < 2).all():
        st.info(
            "Every stage was measured in one run only under the current filters: a history needs two runs or more "
            "of the same stage on the same GPU model at the same shape. Clear the Runs or Datasets filter."
        )
    marked = changes(hist)
    code = marked[marked["change"]] if not marked.empty else marked
    st.subheader(f"Changes outside the noise ({len(marked)})")
    if marked.empty:
        st.success("No series steps beyond the noise and the tolerance.")
    else:
        st.caption(
            f"{int((code['verdict'] == 'SLOWER').sum())} regressions and {int((code['verdict'] == 'FASTER').sum())} "
            f"improvements of the code; {len(marked) - len(code)} steps came with a change of the environment "
            "(named in its column), not counted as either."
        )
        table = marked.assign(compare=[compare_link(p, r) for p, r in zip(marked["prev_run"], marked["run"])])
        st.dataframe(
            table[
                [
                    "compare",
                    "verdict",
                    "diff_pct",
                    "band_pct",
                    "environment",
                    "gpu_model",
                    "stage",
                    "size_label",
                    "launch_change",
                    "prev_run",
                    "run",
                    "commit",
                    "arm",
                    "code",
                    "started",
                    "median_ms",
                ]
            ],
            hide_index=True,
            height=min(400, 40 + 35 * len(table)),
            column_config={
                "gpu_model": "GPU model",
                "size_label": "size",
                "prev_run": "from run",
                "run": "to run",
                "arm": st.column_config.TextColumn(
                    "arms",
                    help="a paired sweep is one run: its arms pooled where they ran the same code (a, b); a stage "
                    "whose code arm b (the base tree) changed is arm a's alone, the two judged per pair on Compare",
                ),
                "code": st.column_config.TextColumn("machine code", help="code_sha256 of the kernel that ran"),
                "launch_change": st.column_config.TextColumn(
                    "launch changed",
                    help="the two runs launched this cell differently "
                    "(direct from Python against a CUDA graph): at small sizes the "
                    "difference is then the host launch overhead",
                ),
                "diff_pct": st.column_config.NumberColumn("vs previous level (%)", format="%+.2f", help="+ is slower"),
                "band_pct": st.column_config.NumberColumn(
                    "± band (%)", format="%.2f", help="99 % half-width of the step"
                ),
                "environment": st.column_config.TextColumn(
                    "environment changed",
                    help="what else changed across the step "
                    "(card, driver, CUDA, library, clocks, power cap): not a regression of the code",
                ),
                "median_ms": st.column_config.NumberColumn("median (ms)", format="%.5f"),
                "started": st.column_config.DatetimeColumn("started (UTC)", format="YYYY-MM-DD HH:mm"),
                "compare": st.column_config.LinkColumn(
                    "Compare view", display_text="open ↗", help="the two runs side by side on the Compare page"
                ),
            },
        )

    st.subheader("Runs over time")
    multi = hist[runs_per >= 2]
    pool = multi if not multi.empty else hist
    c = st.columns([2, 2, 4])
    models = frames.options(pool, "gpu_model")
    model = c[0].selectbox("GPU model", models, key="hist_model")
    at_model = pool[pool["gpu_model"] == model]
    sizes = list(dict.fromkeys(at_model.sort_values(["m", "n", "k"])["size_label"]))
    size = c[1].selectbox("Size", sizes, index=len(sizes) - 1, key="hist_size")
    at = at_model[at_model["size_label"] == size]
    stages = list(dict.fromkeys(at.sort_values("order")["stage"]))
    with_changes = list(dict.fromkeys(at.loc[at["change"], "stage"]))
    default = (with_changes or stages)[:6]
    chosen = c[2].multiselect(
        "Stages",
        stages,
        default=default,
        key=f"hist_stages_{model}_{size}",
        help="by default the stages with a marked change (at most six)",
    )
    if not chosen:
        st.info("Pick a stage.")
        return
    ui.chart(history_chart(at[at["stage"].isin(chosen)]), key="hist_chart")


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its queries and charts
    ui.page("History", CAPTION, body)
