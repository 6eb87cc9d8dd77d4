"""The Streamlit pieces every page shares: the page preamble (title, filtered rows, messages, live refresh), the
sidebar, flag handling, and how a chart is drawn."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, frames, marks

PATHS_KEY = "gemm_farm_data_paths"
ORIGIN_KEY = "gemm_farm_data_origin"
LIVE_KEY = "live"
FLAGGED_KEY = "show_flagged"
ACTIVE_KEY = "gemm_farm_sweep_active"
DIGEST_KEY = "gemm_farm_data_digest"
REFRESH_S = 5  # while a sweep writes
IDLE_REFRESH_S = 30  # otherwise: still picks up a sweep that starts, then switches to REFRESH_S
ACTIVE_WINDOW_S = 120  # a file written this recently means a sweep is writing
FILTER_LABELS = {
    "dataset": "Datasets",
    "gpu_model": "GPU models",
    "family": "Families",
    "dtype": "Precisions",
    "size_label": "Sizes",
    "run_id": "Runs",
}


def data_paths() -> list[str]:
    """The paths from `-- --data`, $GEMM_FARM_DATA or the defaults (set once per session by app.py)."""
    if PATHS_KEY not in st.session_state:
        paths, origin = data.requested_paths(sys.argv[1:], dict(os.environ))
        st.session_state[PATHS_KEY], st.session_state[ORIGIN_KEY] = paths, origin
    return st.session_state[PATHS_KEY]


def loaded() -> data.Loaded:
    return data.load(tuple(data_paths()))


def selection() -> frames.Selection:
    values = {k: tuple(st.session_state.get(f"filter_{k}") or ()) for k in frames.FILTERS}
    return frames.Selection(**values, timing_mode=st.session_state.get("filter_timing_mode"))


def filtered() -> tuple[data.Loaded, pd.DataFrame, pd.DataFrame]:
    """(everything loaded, rows passing the sidebar filters, their telemetry samples). Rows whose % compares unlike
    launches are left out unless the sidebar's switch brings them back; the page says how many either way."""
    L = loaded()
    rows = frames.apply_filters(L.rows, selection())
    flagged = rows[rows["launch_flag"].fillna("").ne("")] if not rows.empty else rows
    if st.session_state.get(FLAGGED_KEY, False):
        launch_warning(flagged)
    else:
        rows = rows.drop(flagged.index)
        if len(flagged):
            st.caption(
                f"⚑ {len(flagged)} rows hidden (runs {_runs(flagged)}): their % of cuBLAS compares a kernel with "
                "a baseline launched differently (schema-2 data). The sidebar's *Show flagged rows* brings "
                "them back, each mark flagged ⚑."
            )
    return L, rows, frames.filter_telemetry(L.telemetry, rows)


def _runs(rows: pd.DataFrame) -> str:
    return ", ".join(sorted(set(rows["dataset"].astype(str) + "/" + rows["run_id"].astype(str))))


def page(
    title: str,
    caption: str | None,
    body: Callable[[data.Loaded, pd.DataFrame, pd.DataFrame], None],
    *,
    missing_sources: bool = False,
    empty_hint: str | None = None,
    stop_when_empty: bool = True,
) -> None:
    """What every page does around its own `body(loaded, rows, telemetry)`: its title and caption, then, watched by
    `live`, the rows and telemetry that pass the sidebar's filters (flagged rows as its switch says) and the unreadable
    files named; where no row is left, why (and `empty_hint`) instead of the body, unless not `stop_when_empty`."""
    st.title(title)
    if caption:
        st.caption(caption)

    def run() -> None:
        L, rows, tele = filtered()
        messages(L, missing_sources)
        if stop_when_empty and stop_if_empty(L, rows):
            if empty_hint:
                st.caption(empty_hint)
            return
        body(L, rows, tele)

    live(run)


def newest_write() -> float | None:
    """Seconds since the newest result file was written (from the cached listing), None without files."""
    _, listed = data.listing(tuple(data_paths()))
    newest = max((e.mtime_ns for _, rows, tele in listed for e in (*rows, *tele)), default=None)
    return None if newest is None else max(0.0, time.time() - newest / 1e9)


def sweep_active() -> bool:
    age = newest_write()
    return age is not None and age < ACTIVE_WINDOW_S


def refresh_every() -> dt.timedelta | None:
    """run_every of the pages' live fragments: every REFRESH_S while files are being written, IDLE_REFRESH_S
    otherwise, None when live refresh is off."""
    if not st.session_state.get(LIVE_KEY, True):
        return None
    active = sweep_active()
    st.session_state[ACTIVE_KEY] = active
    return dt.timedelta(seconds=REFRESH_S if active else IDLE_REFRESH_S)


def live(body):
    """Run the page's `body` once, then watch the data: a small fragment lists the files every few seconds and
    reruns the page only when a file was added or changed, or a sweep started or stopped writing (which also
    sets the other interval). An open page whose data does not change costs one file listing per interval."""
    st.session_state[DIGEST_KEY] = data.listing(tuple(data_paths()))[0]
    body()

    @st.fragment(run_every=refresh_every())
    def watch() -> None:
        digest = data.listing(tuple(data_paths()))[0]
        if digest != st.session_state.get(DIGEST_KEY) or sweep_active() != st.session_state.get(ACTIVE_KEY):
            st.rerun()

    if st.session_state.get(LIVE_KEY, True):
        watch()


def sidebar() -> None:
    """Filters shared by all pages (empty = all), the live switch, and where the data comes from."""
    L = loaded()
    rows = L.rows
    with st.sidebar:
        st.toggle(
            "Live refresh",
            value=True,
            key=LIVE_KEY,
            help=f"Pages look for new or changed result files every {REFRESH_S} s while a sweep writes, every "
            f"{IDLE_REFRESH_S} s otherwise, and redraw only when there are some (only new files are read).",
        )
        st.toggle(
            "Show flagged rows ⚑",
            value=False,
            key=FLAGGED_KEY,
            help="Rows whose % of cuBLAS compares a kernel with a baseline launched differently (schema-2 data: "
            "cuBLAS launched from Python, the kernel from a CUDA graph) are left out of every median, "
            "spread and axis. On: they come back, each mark that pools one carries ⚑.",
        )
        if st.session_state.get(LIVE_KEY, True):
            st.caption(
                f"● sweep writing: refreshing every {REFRESH_S} s"
                if sweep_active()
                else f"○ no new files in {ACTIVE_WINDOW_S // 60} min: checking every {IDLE_REFRESH_S} s"
            )
        st.caption("Filters (empty = all). A family filter keeps the cuBLAS baselines, every family's reference.")
        for col in ("gpu_model", "family", "dtype", "size_label"):
            st.multiselect(FILTER_LABELS[col], frames.options(rows, col), key=f"filter_{col}", placeholder="all")
        with st.expander("More filters"):
            for col in ("dataset", "run_id"):
                st.multiselect(FILTER_LABELS[col], frames.options(rows, col), key=f"filter_{col}", placeholder="all")
            modes = frames.options(rows, "timing_mode")
            if len(modes) > 1:
                st.radio(
                    "Timing mode",
                    modes,
                    key="filter_timing_mode",
                    horizontal=True,
                    help="hot: L2 warm, back-to-back launches; cold: L2 flushed before every launch",
                )
            elif "filter_timing_mode" in st.session_state:
                del st.session_state["filter_timing_mode"]
        with st.expander("Data sources", expanded=False):
            st.caption(
                f"From {st.session_state.get(ORIGIN_KEY, '?')}. Start with "
                "`streamlit run dashboard/app.py -- --data PATH` or set `GEMM_FARM_DATA`."
            )
            for s in L.sources:
                files = L.files.get(s.name, {})
                st.markdown(
                    f"**{s.name}** · `{s.path}` · {s.layout}, {files.get('rows', 0)} row files, "
                    f"{files.get('telemetry', 0)} telemetry files"
                )


def messages(L: data.Loaded, missing_sources: bool = False) -> None:
    """Unreadable files (named, skipped) and, with `missing_sources`, the paths that are not there, as messages."""
    if L.problems:
        with st.expander(
            f"⚠️ {len(L.problems)} unreadable file(s) skipped: the rest of the data is shown",
            expanded=len(L.problems) <= 5,
        ):
            st.code("\n".join(L.problems[:200]) + ("\n…" if len(L.problems) > 200 else ""), language=None)
    missing = [s for s in L.sources if s.layout.startswith("missing")]
    if missing_sources and missing and not L.rows.empty:
        st.caption("Not found (skipped): " + ", ".join(f"`{s.path}`" for s in missing))


def launch_warning(flagged: pd.DataFrame) -> None:
    """Say, when the sidebar shows them, which rows compare a kernel with a baseline launched differently."""
    if flagged.empty:
        return
    st.warning(
        f"⚑ {len(flagged)} flagged rows shown (runs {_runs(flagged)}): their % of cuBLAS is not like-for-like. "
        "These are schema-2 data, whose cuBLAS baselines were launched directly from Python (a 10-18 µs floor "
        "per call below 2048³) while the kernels replayed CUDA graphs; compare their times, not their %. Every "
        "mark that pools one carries ⚑. Reasons: " + "; ".join(sorted(set(flagged["launch_flag"])))[:600]
    )


def stop_if_empty(L: data.Loaded, rows: pd.DataFrame) -> bool:
    """Say clearly why there is nothing to show; True when the page should show nothing else."""
    if L.rows.empty:
        lines = [f"- `{s.path}`: {_describe(s.layout)}" for s in L.sources] or ["- (no paths)"]
        st.info(
            "**No result rows found.** Looked in:\n"
            + "\n".join(lines)
            + "\n\nRun a sweep (`python -m farm ...` or `ray job submit -- python farm/sweep.py`), or point the "
            "dashboard at a dataset: `streamlit run dashboard/app.py -- --data PATH` (or `GEMM_FARM_DATA=PATH`)."
        )
        return True
    if rows.empty:
        hidden = (
            ""
            if st.session_state.get(FLAGGED_KEY, False)
            else " (or, where rows are hidden ⚑, switch on *Show flagged rows*)"
        )
        st.info(f"No rows match the sidebar filters: clear some of them to see data{hidden}.")
        return True
    return False


def _describe(layout: str) -> str:
    return {
        "missing": "not found",
        "empty": "no result files yet",
        "tables": "dataset, but no readable rows",
        "flat": "dataset (old layout), but no readable rows",
    }.get(layout, layout)


def chart(c: alt.TopLevelMixin, key: str | None = None, stretch: bool = False) -> None:
    """An Altair chart at its own size (compound charts keep their panel widths; on a narrow screen a wider one
    scrolls sideways, see STYLE), or with `stretch` as wide as the page (single views only)."""
    if stretch:  # the page's width holds the axes and legend too
        st.altair_chart(
            c.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding")), width="stretch", key=key
        )
    else:
        st.altair_chart(marks.pad(c), width="content", key=key)


NARROW_PX = 1000  # below this the sidebar starts collapsed: on a laptop at 800 px it would take a third of the page
STYLE = """<style>
/* metric values wrap and shrink with the window instead of ending in an ellipsis */
[data-testid="stMetricValue"] { font-size: clamp(1.2rem, 2.2vw, 2.1rem); }
[data-testid="stMetricValue"] > div, [data-testid="stMetricLabel"] p { white-space: normal; overflow: visible; text-overflow: clip; }
[data-testid="stMetricLabel"] > div { overflow: visible; }
/* a chart wider than the page scrolls sideways rather than being cut off */
[data-testid="stVegaLiteChart"], .stVegaLiteChart { overflow-x: auto; max-width: 100%; }
</style>"""
COLLAPSE_JS = f"""<script>
(() => {{
  if (window.innerWidth >= {NARROW_PX} || window.gemmFarmSidebarSet) return;
  window.gemmFarmSidebarSet = true;  // once per browser tab: the reader's own choice stands after that
  const tryCollapse = (n) => {{
    const sidebar = document.querySelector('[data-testid="stSidebar"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (sidebar && button && sidebar.getAttribute('data-collapsed') === 'false') button.click();
    else if (n > 0) setTimeout(() => tryCollapse(n - 1), 100);
  }};
  tryCollapse(30);
}})();
</script>"""


def layout() -> None:
    """The app-wide style, and the sidebar collapsed once when the window is narrow (Streamlit collapses it by itself
    only below 768 px)."""
    st.html(STYLE)
    with st.sidebar:
        st.html(COLLAPSE_JS, unsafe_allow_javascript=True)


def freshness(ts: pd.Timestamp | None, now: dt.datetime | None = None, suffix: str = " ago") -> str:
    """'42 s ago', '17 min ago', '3.5 h ago', '12 days ago'."""
    if ts is None or pd.isna(ts):
        return "—"
    now = now or dt.datetime.now(dt.timezone.utc)
    age = (pd.Timestamp(now) - ts).total_seconds()
    if age < 0:
        return "just now"
    if age < 120:
        return f"{age:.0f} s{suffix}"
    if age < 7200:
        return f"{age / 60:.0f} min{suffix}"
    if age < 172800:
        return f"{age / 3600:.1f} h{suffix}"
    return f"{age / 86400:.0f} days{suffix}"


def stage_groups(t: pd.DataFrame, key: str) -> pd.DataFrame:
    """A multiselect of the stage groups in `t` (the sweeps over many configurations off by default) and the
    rows of the chosen ones."""
    groups = frames.options(t, "stage_group")
    chosen = st.multiselect(
        "Stage groups", groups, default=[g for g in groups if g not in frames.SWEEP_GROUPS] or groups, key=key
    )
    return t[t["stage_group"].isin(chosen)]


POWER_CAP_NOTE = (
    "At the power cap a kernel and the cuBLAS timed beside it share one clock, set by the pair's mean draw: the % "
    "in the cell overstates kernels that draw more power than cuBLAS and understates frugal ones; the % of cuBLAS "
    "timed alone (its own cell of the run, a few seconds apart, with noise of its own) is what running either one "
    "alone gives. Partner shift: how much slower cuBLAS ran beside the kernel than alone."
)


def pct_basis(key: str, alone: pd.Series) -> frames.PctBasis:
    """A picker of the % of baseline the page plots (in the cell by default), then one caption: what the difference
    means, and how many of the page's cells (`alone`: their % of the baseline timed alone) lack an alone baseline."""
    basis = st.radio(
        "Plot",
        frames.PCT_BASES,
        format_func=lambda b: b.label,
        key=key,
        horizontal=True,
        help="in the cell: against cuBLAS timed batch by batch beside the kernel; timed alone: against cuBLAS's own "
        'cell of the same run, GPU, shape and timing (docs/verdicts.md, "At the power cap")',
    )
    lacking = int(alone.isna().sum())
    missing = (
        f" {lacking} of {len(alone)} cells have no alone baseline (their run timed no cuBLAS cell of its own there): "
        "drawn as missing, never as 0."
        if lacking
        else f" Every one of the {len(alone)} cells has an alone baseline."
    )
    st.caption(POWER_CAP_NOTE + missing)
    return basis


def pick_run(label: str, pairs: list[tuple[str, str]], key: str, rows: pd.DataFrame) -> tuple[str, str] | None:
    """A (dataset, run) select box, newest run first."""
    if not pairs:
        return None
    last = rows.groupby(["dataset", "run_id"])["timestamp"].max().to_dict()
    pairs = sorted(pairs, key=lambda p: last.get(p, pd.Timestamp.min.tz_localize("UTC")), reverse=True)
    return st.selectbox(label, pairs, key=key, format_func=lambda p: f"{p[1]}  ·  {p[0]}")
