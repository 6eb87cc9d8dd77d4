"""Data: the schema, and downloads of the filtered rows and of whole datasets as Parquet and CSV."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import streamlit as st

from dashboard import data, ui
from farm.data.schema import COLUMN_DOCS, ROW_SCHEMA, SCHEMA_VERSION, TELEMETRY_SCHEMA

# ---------------------------------------------------------------- exports

FLAG_FIELD = pa.field(
    "launch_flag", pa.string()
)  # derived, but a download keeps it: why a row's % is not like-for-like


def export_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """Rows of `df` as an Arrow table of `schema` plus dataset and schema_version (and launch_flag, where `df` has
    it: '' for a like-for-like row); the other derived columns dropped."""
    full = data.with_extras(schema)
    if FLAG_FIELD.name in df:
        full = full.append(FLAG_FIELD)
    cols = [f.name for f in full]
    if df.empty:
        return full.empty_table()
    part = df[cols].copy()
    for name in ("samples_ms", "clock_event_names"):
        if name in part:
            part[name] = [None if v is None or (isinstance(v, float) and pd.isna(v)) else list(v) for v in part[name]]
    return pa.Table.from_pandas(part, schema=full, preserve_index=False)


def to_parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def to_csv_bytes(table: pa.Table) -> bytes:
    """CSV; list columns (samples_ms, clock_event_names) become JSON-style text."""
    df = table.to_pandas()
    for name in ("samples_ms", "clock_event_names"):
        if name in df:
            df[name] = [
                "" if v is None else "[" + ", ".join(repr(x) if not isinstance(x, str) else f'"{x}"' for x in v) + "]"
                for v in df[name]
            ]
    return df.to_csv(index=False).encode()


# ---------------------------------------------------------------- the page

TELEMETRY_DOCS = {
    "series": "what ran when the sample was taken: warmup | kernel | baseline | gap (between batches) | a | b (a paired "
    "cell's arms)",
    "t_ms": "time since the cell's warm-up began, ms",
    "sm_clock_mhz": "SM clock, MHz",
    "mem_clock_mhz": "memory clock, MHz",
    "temp_c": "GPU temperature, Celsius",
    "power_w": "board power, W",
    "reasons": "NVML clock-event (throttle) reason bitmask",
}


def download(label: str, make, file_name: str, mime: str, key: str) -> None:
    """A download button whose file is built only when clicked."""
    st.download_button(label, data=make, file_name=file_name, mime=mime, key=key, on_click="ignore")


# A download's format: its label, file extension, MIME type, key suffix and encoder
FORMATS = (
    ("Parquet", "parquet", "application/vnd.apache.parquet", "pq", to_parquet_bytes),
    ("CSV", "csv", "text/csv", "csv", to_csv_bytes),
)


def buttons(prefix: str, rows: pd.DataFrame, tele: pd.DataFrame, key: str) -> None:
    columns = iter(st.columns(4))
    for name, short, frame, schema in (
        ("rows", "rows", rows, ROW_SCHEMA),
        ("telemetry", "tele", tele, TELEMETRY_SCHEMA),
    ):
        for label, ext, mime, suffix, encode in FORMATS:
            with next(columns):
                download(
                    f"{name} · {label} ({len(frame)})",
                    lambda frame=frame, schema=schema, encode=encode: encode(export_table(frame, schema)),
                    f"{prefix}-{name}.{ext}",
                    mime,
                    f"{key}_{short}_{suffix}",
                )


def body(L, rows, tele) -> None:
    if not ui.stop_if_empty(L, rows):
        st.subheader("Filtered rows")
        st.caption(
            f"{len(rows)} rows and {len(tele)} telemetry samples pass the sidebar filters. Downloads carry every "
            "schema column plus `dataset`, `schema_version` and `launch_flag` (why a row's % is not like-for-like; empty "
            "when it is); in CSV, list columns are written as text."
        )
        buttons("gemm-farm-filtered", rows, tele, "filtered")
        first = [
            "dataset",
            "run_id",
            "gpu",
            "stage",
            "size_label",
            "repeat",
            "status",
            "median_ms",
            "tflops",
            "pct_of_baseline",
            "pct_of_vendor_best",
            "pct_of_alone_baseline",
            "partner_shift_pct",
            "launch_flag",
            "cv",
            "throttled_fraction",
        ]
        rest = [c for c in rows.columns if c not in first and c not in ("samples_ms", "order", "size", "shape")]
        preview = rows.sort_values("timestamp", ascending=False)[first + rest].head(500)
        st.dataframe(preview, hide_index=True, height=300)

    if not L.rows.empty:
        st.subheader("Whole datasets")
        for s in L.sources:
            r = L.rows[L.rows["dataset"] == s.name]
            if r.empty:
                continue
            t = L.telemetry[L.telemetry["dataset"] == s.name] if not L.telemetry.empty else L.telemetry
            st.markdown(f"**{s.name}** · `{s.path}`")
            buttons(s.name.replace("/", "_"), r, t, f"ds_{s.name}")

    st.subheader("Reading a dataset")
    st.code(
        "import pandas as pd\n"
        "df = pd.read_parquet('DATASET/rows')   # hive partitions: gpu_model=, run_id=\n\n"
        "import duckdb\n"
        "duckdb.sql(\"SELECT * FROM read_parquet('DATASET/rows/**/*.parquet',\"\n"
        '           " hive_partitioning=true, union_by_name=true)")\n\n'
        "from farm.data.dataset import read_table\n"
        "rows, tele = read_table('DATASET'), read_table('DATASET', 'telemetry')",
        language="python",
    )


def schema() -> None:
    """The columns of the rows and telemetry tables, their types and meanings."""
    st.subheader(f"Schema (version {SCHEMA_VERSION})")
    st.caption(
        "One row per (GPU, stage, shape, repeat, run); `gpu_model` and `run_id` are the hive partition keys. "
        "Units: times in ms, throughput in TFLOP/s (multiply-add = 2 FLOP), sizes in bytes."
    )
    tab_rows, tab_tele = st.tabs(["rows", "telemetry"])
    with tab_rows:
        st.dataframe(
            pd.DataFrame([{"column": f.name, "type": str(f.type), "meaning": COLUMN_DOCS[f.name]} for f in ROW_SCHEMA]),
            hide_index=True,
            height=420,
            column_config={"meaning": st.column_config.TextColumn(width="large")},
        )
    with tab_tele:
        st.caption("One row per NVML sample; joins to rows on gpu_model, run_id, gpu_uuid, stage, m, n, k, repeat.")
        st.dataframe(
            pd.DataFrame(
                [
                    {"column": f.name, "type": str(f.type), "meaning": TELEMETRY_DOCS.get(f.name, "join key")}
                    for f in TELEMETRY_SCHEMA
                ]
            ),
            hide_index=True,
            column_config={"meaning": st.column_config.TextColumn(width="large")},
        )


if __name__ == "__main__":  # Streamlit runs this file as the page; tests import its exports
    ui.page("Data", None, body, stop_when_empty=False)
    schema()
