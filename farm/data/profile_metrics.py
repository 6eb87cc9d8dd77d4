"""The counters the profiling pass collects, by the farm's stable names: what the profile
table's `quantity` column means.

Written by farm/measure/profiler.py, ranked by farm/analysis/moves.py, documented in
datasets/README.md (metrics_markdown writes its table; a test keeps the two identical).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    """One Nsight Compute metric the pass collects.

    `quantity` is the farm's stable name (the profile table's `quantity` column), `kind`
    says how farm.analysis.moves aggregates and ranks it, `group` gathers quantities that tell the
    same story (moves keeps the largest mover per group), `ranked` False keeps a raw
    component out of the moves, `optional` marks metrics that not every chip offers.
    """

    quantity: str
    metric: str
    kind: str  # pct | ratio | count | bytes | time | per_thread (farm.data.schema.PROFILE_KINDS)
    group: str
    label: str
    cited: str = ""  # where the write-ups use it
    optional: bool = False
    ranked: bool = True


@dataclass(frozen=True)
class DerivedSpec:
    """A quantity computed from two collected ones: scale * numerator / denominator, per kernel."""

    quantity: str
    numerator: str  # quantities of METRICS
    denominator: str
    scale: float
    unit: str
    kind: str
    group: str
    label: str
    cited: str = ""
    ranked: bool = True

    @property
    def metric(self) -> str:
        by_q = {s.quantity: s.metric for s in METRICS}
        scale = f"{self.scale:g} * " if self.scale != 1 else ""
        return f"{scale}{by_q[self.numerator]} / {by_q[self.denominator]}"


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "duration",
        "gpu__time_duration.sum",
        "time",
        "duration",
        "duration of the profiled launch (not a timing: see rows)",
        ranked=False,
    ),
    # memory hierarchy
    MetricSpec(
        "dram_throughput_pct",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "pct",
        "dram",
        "DRAM throughput",
        "walk A tiled: DRAM throughput 21 -> 43 %",
    ),
    MetricSpec("dram_read_bytes", "dram__bytes_read.sum", "bytes", "dram", "DRAM bytes read"),
    MetricSpec("dram_write_bytes", "dram__bytes_write.sum", "bytes", "dram", "DRAM bytes written"),
    MetricSpec(
        "memory_throughput_pct",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "pct",
        "memory_sol",
        "memory throughput (speed of light)",
    ),
    MetricSpec(
        "l2_hit_pct",
        "lts__t_sector_hit_rate.pct",
        "pct",
        "l2",
        "L2 hit rate",
        "walk A: cuBLAS 82 % vs bank_pad_vec 52 %; walk B grid swizzle: 30 -> 90 %",
    ),
    MetricSpec("l1_hit_pct", "l1tex__t_sector_hit_rate.pct", "pct", "l1", "L1 hit rate"),
    # pipes and issue
    MetricSpec(
        "sm_throughput_pct",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "pct",
        "compute_sol",
        "compute throughput (speed of light)",
    ),
    MetricSpec(
        "lsu_pipe_pct",
        "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
        "pct",
        "lsu",
        "LSU pipe",
        "walk A regblock: 95 -> 55 %; bank_pad_vec: 89 -> 64 %",
    ),
    MetricSpec(
        "fma_pipe_pct",
        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "pct",
        "fma",
        "FMA pipe",
        "walk A rows 3-5: 39.7 -> 48.6 -> 56.3 %",
    ),
    MetricSpec(
        "fma_inst_pct",
        "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
        "pct",
        "fma",
        "FMA pipe (instructions executed)",
    ),
    # Tensor pipes. mma.sync and WMMA (TF32, FP16, BF16) issue HMMA on sm_80..sm_90 and sm_120;
    # Hopper's wgmma (cuBLAS on H100/H200) runs on GMMA, a metric sm_90 alone has; the
    # aggregate tensor pipe is offered on some chips only. Seen on an H100 with ncu 2025.3:
    # the GMMA metric read n/a and the HMMA one counted wgmma (walk D: 95 %).
    MetricSpec(
        "tensor_pipe_pct",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "pct",
        "tensor",
        "tensor pipe (HMMA: mma.sync, WMMA)",
        "walk A: cuBLAS FP32 0 % tensor pipe",
        optional=True,
    ),
    MetricSpec(
        "tensor_gmma_pipe_pct",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
        "pct",
        "tensor",
        "tensor pipe (GMMA: wgmma, sm_90)",
        optional=True,
    ),
    MetricSpec(
        "tensor_any_pipe_pct",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        "pct",
        "tensor",
        "tensor pipe (all tensor ops)",
        optional=True,
    ),
    MetricSpec(
        "issue_slots_pct",
        "sm__inst_issued.avg.pct_of_peak_sustained_active",
        "pct",
        "issue",
        "issue slots busy",
        "walk A warp_rebalance: issue 53 -> 68 %",
    ),
    MetricSpec(
        "issue_active_pct",
        "smsp__issue_active.avg.pct_of_peak_sustained_active",
        "pct",
        "issue",
        "cycles with an instruction issued",
    ),
    # occupancy and resources
    MetricSpec(
        "achieved_occupancy_pct",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "pct",
        "occupancy",
        "achieved occupancy",
        "walk B: cuBLAS 1 block per SM",
    ),
    MetricSpec(
        "theoretical_occupancy_pct",
        "sm__maximum_warps_per_active_cycle_pct",
        "pct",
        "occupancy",
        "theoretical occupancy",
    ),
    MetricSpec(
        "registers",
        "launch__registers_per_thread",
        "per_thread",
        "registers",
        "registers per thread",
        "walk A warp_rebalance: 255 -> 168; walk B: cuBLAS 228",
    ),
    # shared memory
    MetricSpec(
        "shared_ld_bank_conflicts",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "count",
        "smem_conflicts",
        "shared-load bank conflicts",
        "walk B: 150M+ -> 48,618",
    ),
    MetricSpec(
        "shared_st_bank_conflicts",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "count",
        "smem_conflicts",
        "shared-store bank conflicts",
    ),
    MetricSpec(
        "shared_bank_conflicts",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
        "count",
        "smem_conflicts",
        "shared bank conflicts (all shared ops, ldmatrix included)",
        optional=True,
        ranked=False,
    ),
    MetricSpec(
        "shared_wavefronts",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
        "count",
        "smem_conflicts",
        "shared-memory wavefronts",
        optional=True,
        ranked=False,
    ),
    # global access pattern
    MetricSpec(
        "gld_bytes",
        "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
        "bytes",
        "gld",
        "global-load bytes (L1)",
        ranked=False,
    ),
    MetricSpec(
        "gld_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "count",
        "gld",
        "global-load sectors",
        ranked=False,
    ),
    MetricSpec(
        "gld_data_bytes",
        "sm__sass_data_bytes_mem_global_op_ld.sum",
        "bytes",
        "gld",
        "global-load bytes the threads asked for",
        optional=True,
        ranked=False,
    ),
    MetricSpec(
        "gst_bytes",
        "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
        "bytes",
        "gst",
        "global-store bytes (L1)",
        ranked=False,
    ),
    MetricSpec(
        "gst_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "count",
        "gst",
        "global-store sectors",
        ranked=False,
    ),
    MetricSpec(
        "gst_data_bytes",
        "sm__sass_data_bytes_mem_global_op_st.sum",
        "bytes",
        "gst",
        "global-store bytes the threads wrote",
        optional=True,
        ranked=False,
    ),
)

DERIVED: tuple[DerivedSpec, ...] = (
    DerivedSpec(
        "shared_bank_conflict_pct",
        "shared_bank_conflicts",
        "shared_wavefronts",
        100.0,
        "%",
        "pct",
        "smem_conflicts",
        "shared bank conflicts (% of wavefronts)",
        "walk B: 48,618 / 100,715,659 = 0.04 %",
    ),
    # The brief's bytes per sector. l1tex__t_bytes counts whole 32-byte sectors, so expect 32:
    # the used-bytes ratio below is the one NCU's access-pattern rule quotes.
    DerivedSpec(
        "gld_bytes_per_sector",
        "gld_bytes",
        "gld_sectors",
        1.0,
        "byte/sector",
        "ratio",
        "gld",
        "global-load bytes per sector",
    ),
    DerivedSpec(
        "gst_bytes_per_sector",
        "gst_bytes",
        "gst_sectors",
        1.0,
        "byte/sector",
        "ratio",
        "gst",
        "global-store bytes per sector",
    ),
    DerivedSpec(
        "gld_used_bytes_per_sector",
        "gld_data_bytes",
        "gld_sectors",
        1.0,
        "byte/sector",
        "ratio",
        "gld",
        "global-load bytes used per 32-byte sector",
    ),
    DerivedSpec(
        "gst_used_bytes_per_sector",
        "gst_data_bytes",
        "gst_sectors",
        1.0,
        "byte/sector",
        "ratio",
        "gst",
        "global-store bytes used per 32-byte sector",
        "walk A tiled_coalesced: st bytes/sector 16 -> 32",
    ),
)

# What every quantity is, by name: for farm.analysis.moves and the docs.
QUANTITIES: dict[str, MetricSpec | DerivedSpec] = {s.quantity: s for s in (*METRICS, *DERIVED)}


def metrics_markdown() -> str:
    """The metric table of the profile section of datasets/README.md (kept identical by a test)."""
    lines = ["| quantity | Nsight Compute metric | kind | what | the write-ups |", "|---|---|---|---|---|"]
    for s in METRICS:
        flags = [f for f, on in (("not on every chip", s.optional), ("not ranked", not s.ranked)) if on]
        what = s.label + (f" ({'; '.join(flags)})" if flags else "")
        lines.append(f"| `{s.quantity}` | `{s.metric}` | {s.kind} | {what} | {s.cited} |")
    for d in DERIVED:
        lines.append(
            f"| `{d.quantity}` | {d.scale:g} x `{d.numerator}` / `{d.denominator}` | {d.kind} | {d.label} (derived) | {d.cited} |"
        )
    return "\n".join(lines)
