"""Find and read result datasets for the dashboard: several at once, live, never failing the page.

A *source* is a path (or filesystem URI) from ``--data`` / $GEMM_FARM_DATA, else the
shipped ``datasets/*`` and ``farm.data.dataset.default_output()``. It may be

- a dataset: ``<root>/rows/...`` and ``<root>/telemetry/...`` (farm.data.dataset's layout);
- an older dataset with rows directly under ``<root>/gpu_model=...`` (schema version 1);
- a folder of datasets: each subfolder holding a ``rows/`` table is one dataset.

Reading is incremental: the cheap listing (names, mtimes, sizes) is taken every few seconds;
each Parquet file is read once per (path, mtime, size) and kept, so a growing sweep costs
only its new files. An unreadable file is named and skipped; older schemas' files get nulls
for the columns they lack.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import streamlit as st

from farm.data import dataset as fds
from farm.data.derived import launch_mismatch, with_alone_baseline, with_vendor_best
from farm.data.schema import PARTITION_KEYS, ROW_SCHEMA, RUNS_SCHEMA, TELEMETRY_SCHEMA

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED = REPO_ROOT / "datasets"
ENV = "GEMM_FARM_DATA"
LISTING_TTL_S = 5  # how stale the file listing may be: a sweep's new files show up within this
TABLES = {fds.ROWS: ROW_SCHEMA, fds.TELEMETRY: TELEMETRY_SCHEMA}


# ---------------------------------------------------------------- where the data is


def data_args(argv: list[str]) -> list[str]:
    """Paths given as ``--data PATH`` (repeatable, each may hold several joined by os.pathsep)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--data", action="append", default=[])
    args, _ = parser.parse_known_args(argv)
    return [p for a in args.data for p in a.split(os.pathsep) if p]


def requested_paths(argv: list[str], environ: dict) -> tuple[list[str], str]:
    """(paths, where they came from): --data, else $GEMM_FARM_DATA, else the defaults."""
    if paths := data_args(argv):
        return paths, "--data"
    if paths := [p for p in environ.get(ENV, "").split(os.pathsep) if p]:
        return paths, f"${ENV}"
    return [str(SHIPPED), fds.default_output()], "default (shipped datasets/ and the sweep's default output)"


@dataclass(frozen=True)
class Source:
    name: str  # the `dataset` column's value
    path: str  # as given (local path or URI)
    layout: str  # "tables" (rows/ + telemetry/), "flat" (rows under gpu_model=), "missing", "empty"


def _fs(path: str) -> tuple[pafs.FileSystem, str]:
    return fds.resolve(path)


def _kind(fs: pafs.FileSystem, root: str) -> str:
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        return "missing"
    if info.type != pafs.FileType.Directory:
        return "empty"
    if any(fs.get_file_info(f"{root}/{t}").type == pafs.FileType.Directory for t in TABLES):
        return "tables"
    children = fs.get_file_info(pafs.FileSelector(root))
    if any(c.base_name.startswith(f"{PARTITION_KEYS[0]}=") for c in children):
        return "flat"
    return "folder" if any(c.type == pafs.FileType.Directory for c in children) else "empty"


def discover(paths: list[str]) -> list[Source]:
    """The datasets behind `paths`: a folder of datasets expands into its datasets, sorted."""
    found: list[tuple[str, str]] = []  # (path, layout)
    for path in paths:
        try:
            fs, root = _fs(path)
            kind = _kind(fs, root)
        except (OSError, ValueError, pa.ArrowException) as exc:
            found.append((path, f"missing: {exc}"))
            continue
        if kind == "folder":
            subs = sorted(
                c.path for c in fs.get_file_info(pafs.FileSelector(root)) if c.type == pafs.FileType.Directory
            )
            datasets = [s for s in subs if _kind(fs, s) in ("tables", "flat")]
            found += [
                (s if "://" not in path else f"{path.rstrip('/')}/{Path(s).name}", _kind(fs, s)) for s in datasets
            ]
            if not datasets:
                found.append((path, "empty"))
        else:
            found.append((path, kind))
    names: list[str] = []
    for path, _ in found:
        p = Path(path.rstrip("/"))
        name = p.name if p.name not in ("rows", "telemetry") else p.parent.name
        names.append(name or path)
    dup = {n for n in names if names.count(n) > 1}
    out = []
    for (path, layout), name in zip(found, names):
        if name in dup:
            name = f"{Path(path.rstrip('/')).parent.name}/{name}"
        out.append(Source(name=name, path=path, layout=layout))
    return out


# ---------------------------------------------------------------- listing and reading


@dataclass(frozen=True)
class FileEntry:
    path: str
    mtime_ns: int
    size: int


def _table_root(source: Source, table: str) -> str | None:
    fs, root = _fs(source.path)
    if source.layout == "tables":
        return f"{root}/{table}"
    if source.layout == "flat" and table == fds.ROWS:
        return root
    return None


def list_files(source: Source, table: str) -> tuple[FileEntry, ...]:
    """Parquet files of one table of a dataset (hidden and temporary files skipped)."""
    root = _table_root(source, table)
    if root is None:
        return ()
    fs, _ = _fs(source.path)
    try:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except OSError:
        return ()
    out = []
    for info in infos:
        if info.type != pafs.FileType.File or not info.base_name.endswith(".parquet"):
            continue
        rel = info.path[len(root) :].strip("/").split("/")
        if any(part.startswith((".", "_")) for part in rel):
            continue
        out.append(FileEntry(info.path, int(info.mtime_ns or 0), int(info.size or 0)))
    return tuple(sorted(out, key=lambda e: e.path))


@st.cache_data(ttl=LISTING_TTL_S, show_spinner=False)
def listing(paths: tuple[str, ...]) -> tuple[str, tuple]:
    """(digest, datasets): every dataset behind `paths` with its rows and telemetry files, and a digest of
    their names, mtimes and sizes: the cache key of the data."""
    listed = tuple((s, list_files(s, fds.ROWS), list_files(s, fds.TELEMETRY)) for s in discover(list(paths)))
    h = hashlib.sha1()
    for source, *tables in listed:
        h.update(repr(source).encode())
        for entries in tables:
            for e in entries:
                h.update(f"{e.path}\0{e.mtime_ns}\0{e.size}\n".encode())
            h.update(b"--\n")
    return h.hexdigest(), listed


def _partitions(path: str) -> dict[str, str]:
    out = {}
    for part in path.split("/")[:-1]:
        key, sep, value = part.partition("=")
        if sep and key in PARTITION_KEYS:
            out[key] = unquote(value)
    return out


def _const(value, type_: pa.DataType, n: int) -> pa.Array:
    # pa.repeat of a scalar: pa.array(list, type) is ~1000x slower for short lists.
    return pa.repeat(pa.scalar(value, type_), n)


def conform(table: pa.Table, schema: pa.Schema, partitions: dict[str, str]) -> pa.Table:
    """`table` as `schema`: partition values from the path, missing columns null, types cast where they differ."""
    n = table.num_rows
    present = dict(zip(table.column_names, table.columns))
    arrays = []
    for f in schema:
        if f.name in partitions:
            arrays.append(_const(partitions[f.name], f.type, n))
        elif f.name in present:
            col = present[f.name]
            if col.type != f.type:
                try:
                    col = col.cast(f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    col = pa.nulls(n, f.type)
            arrays.append(col)
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=schema.remove_metadata())


def read_file(fs: pafs.FileSystem, entry: FileEntry, table: str) -> tuple[pa.Table | None, str | None]:
    """(the file as its table's schema plus schema_version, None) or (None, why it could not be read)."""
    try:
        with fs.open_input_file(entry.path) as f:
            pf = pq.ParquetFile(f)
            data = pf.read()
            meta = pf.schema_arrow.metadata or {}
        version = meta.get(b"gemm_farm_schema_version", b"1").decode(errors="replace")
        out = conform(data, TABLES[table], _partitions(entry.path))
        return out.append_column("schema_version", _const(version, pa.string(), out.num_rows)), None
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported and skipped, never fatal
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"


@st.cache_resource(show_spinner=False)
def _file_cache() -> dict:
    """Per-process store of files already read, keyed on (path, mtime, size, table): tables are immutable."""
    return {}


def _read_all(source: Source, entries: tuple[FileEntry, ...], table: str) -> tuple[list[pa.Table], list[str]]:
    cache = _file_cache()
    fs, _ = _fs(source.path)
    keys = [(e.path, e.mtime_ns, e.size, table) for e in entries]
    todo = [e for e, k in zip(entries, keys) if k not in cache]
    if todo:
        with ThreadPoolExecutor(max_workers=min(4, len(todo))) as pool:
            for e, result in zip(todo, pool.map(lambda e: read_file(fs, e, table), todo)):
                cache[(e.path, e.mtime_ns, e.size, table)] = result
    tables, problems = [], []
    for e, k in zip(entries, keys):
        t, err = cache[k]
        if err:
            problems.append(f"{e.path}: {err}")
        elif t.num_rows:
            tables.append(t)
    return tables, problems


# ---------------------------------------------------------------- the loaded data


@dataclass
class Loaded:
    sources: list[Source]
    rows: pd.DataFrame  # ROW_SCHEMA columns + dataset + schema_version + derived columns (see enrich)
    telemetry: pd.DataFrame  # TELEMETRY_SCHEMA columns + dataset + schema_version
    files: dict[str, dict[str, int]] = field(default_factory=dict)  # dataset -> {"rows": files, "telemetry": n}
    problems: list[str] = field(default_factory=list)  # unreadable files, with the reason

    @property
    def empty(self) -> bool:
        return self.rows.empty


def with_extras(schema: pa.Schema) -> pa.Schema:
    """`schema` plus the columns the dashboard adds to every table it reads."""
    return pa.schema(
        [*schema.remove_metadata(), pa.field("schema_version", pa.string()), pa.field("dataset", pa.string())]
    )


def _table_of(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    full = with_extras(schema)
    if not tables:
        return full.empty_table()
    return pa.concat_tables(tables)


def assemble(listed) -> Loaded:
    """Read every listed file (new ones only; the rest come from the per-process store) into one Loaded."""
    cache = _file_cache()
    current = {
        (e.path, e.mtime_ns, e.size, t)
        for _, r, te in listed
        for t, es in ((fds.ROWS, r), (fds.TELEMETRY, te))
        for e in es
    }
    if len(cache) > 2 * len(current) + 10_000:  # files rewritten or gone: drop what no listing names
        for key in [k for k in cache if k not in current]:
            cache.pop(key, None)
    sources, files, problems = [], {}, []
    parts: dict[str, list[pa.Table]] = {fds.ROWS: [], fds.TELEMETRY: []}
    for source, row_files, tele_files in listed:
        sources.append(source)
        files[source.name] = {fds.ROWS: len(row_files), fds.TELEMETRY: len(tele_files)}
        for table, entries in ((fds.ROWS, row_files), (fds.TELEMETRY, tele_files)):
            tables, bad = _read_all(source, entries, table)
            problems += bad
            parts[table] += [t.append_column("dataset", _const(source.name, pa.string(), t.num_rows)) for t in tables]
    rows = _table_of(parts[fds.ROWS], ROW_SCHEMA)
    tele = _table_of(parts[fds.TELEMETRY], TELEMETRY_SCHEMA)
    return Loaded(
        sources=sources, rows=enrich(to_pandas(rows)), telemetry=to_pandas(tele), files=files, problems=problems
    )


def runs(sources: list[Source]) -> pd.DataFrame:
    """The runs tables of `sources` (RUNS_SCHEMA's columns + dataset); older datasets without one add nothing."""
    frames = [
        fds.read_table(s.path, fds.RUNS).to_pandas().assign(dataset=s.name)
        for s in sources
        if s.layout == "tables" and fds.exists(s.path, fds.RUNS)
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*RUNS_SCHEMA.names, "dataset"])


def to_pandas(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas()


@st.cache_data(max_entries=4, show_spinner="Reading new result files…")
def _load_listed(digest: str, _listed: tuple) -> Loaded:
    return assemble(_listed)


def load(paths: list[str] | tuple[str, ...]) -> Loaded:
    """Every dataset behind `paths`, unioned with a `dataset` column; cached on the files' names and mtimes."""
    digest, listed = listing(tuple(paths))
    return _load_listed(digest, listed)


def load_uncached(paths: list[str]) -> Loaded:
    """The same without Streamlit's caches (scripts, tests)."""
    return assemble(tuple((s, list_files(s, fds.ROWS), list_files(s, fds.TELEMETRY)) for s in discover(paths)))


# ---------------------------------------------------------------- derived columns


def size_label(m: int, n: int, k: int) -> str:
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def gpu_label(model: str, uuid: str | None) -> str:
    """'H200 · GPU-3e285e7e': the model and the UUID's first group, as nvidia-smi -L shows it."""
    short = (uuid if isinstance(uuid, str) and uuid else "?").split("-")[:2]
    return f"{model} · {'-'.join(short)}"


def enrich(rows: pd.DataFrame) -> pd.DataFrame:
    """Columns the pages share: shape labels, the cube-root size, a GPU label, a ladder sort key, and the derived
    columns of farm.data.derived: % of the faster vendor library, % of the baseline timed alone and how far the
    in-cell baseline moved from it (partner_shift_pct), and why a row's % is flagged (launch_flag)."""
    df = rows.copy()
    derived = (
        "vendor_best_ms",
        "pct_of_vendor_best",
        "alone_baseline_ms",
        "pct_of_alone_baseline",
        "partner_shift_pct",
    )
    if df.empty:
        for c in ("shape", "size", "size_label", "gpu", "order", *derived, "launch_flag"):
            df[c] = pd.Series(dtype="object" if c in ("shape", "size_label", "gpu", "launch_flag") else "float64")
        return df
    df = with_alone_baseline(with_vendor_best(df))
    df["launch_flag"] = launch_mismatch(df)
    m, n, k = (df[c].astype("float64") for c in ("m", "n", "k"))
    df["size"] = (m * n * k) ** (1 / 3)
    df["shape"] = [f"{a}x{b}x{c}" for a, b, c in zip(df.m, df.n, df.k)]
    df["size_label"] = [size_label(a, b, c) for a, b, c in zip(df.m, df.n, df.k)]
    df["gpu"] = [gpu_label(a, b) for a, b in zip(df.gpu_model, df.gpu_uuid)]
    df["order"] = ladder_order(df)
    return df


def family_order() -> dict[str, int]:
    """Families in catalog order (baselines first)."""
    order: dict[str, int] = {}
    for s in catalog():
        order.setdefault(s.family, len(order))
    return order


def ladder_order(df: pd.DataFrame) -> pd.Series:
    """Sort key: family in catalog order, then ladder position, then catalog order within a position."""
    fam = family_order()
    cat = {s.name: i for i, s in enumerate(catalog())}
    return pd.Series(
        [
            fam.get(f, 99) * 10_000 + (p if pd.notna(p) else 999) * 10 + cat.get(s, 9) * 1e-4
            for f, p, s in zip(df.family, df.position, df.stage)
        ],
        index=df.index,
        dtype="float64",
    )


def catalog() -> list:
    """The kernel catalog's stages (none where the kernels cannot be imported)."""
    try:
        from kernels.registry import catalog as kernel_catalog

        return kernel_catalog()
    except Exception:  # noqa: BLE001 - the dashboard reads data without the kernels if it must
        return []
