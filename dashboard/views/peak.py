"""Peak & roofline: every stage and baseline against the chip's dense peak for its precision, and a roofline per GPU."""
import streamlit as st

from dashboard import analysis, charts, roofline, ui

st.title("Peak & roofline")
st.caption("How close to the metal? Every % elsewhere is of cuBLAS; here cuBLAS itself is measured against the chip: "
           f"{roofline.PEAK_FORMULA}. FP32 runs on the CUDA cores (FFMA = 2 FLOP); TF32, FP16 and BF16 on the tensor cores, "
           "dense, FP32 accumulate. SMs and max SM clock come from each row; FLOP per clock per SM from a per-architecture "
           "table citing its sources (below, and farm/data/peak.py).")


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L)
    if ui.stop_if_empty(L, rows):
        return
    t = ui.stage_groups(analysis.timed(rows), "peak_groups")
    cells = roofline.peak_cells(t)
    table = roofline.peak_table(rows)
    if cells.empty:
        st.info("No timed rows with a known peak under the current filters: a peak needs the row's architecture in the "
                "table below and its max SM clock (recorded when telemetry is on).")
    else:
        sizes = analysis.options(cells, "size_label")
        size = st.selectbox("Size", sizes, index=sizes.index("4096³") if "4096³" in sizes else len(sizes) - 1, key="peak_size")
        st.subheader(f"cuBLAS and the best stage of each family at {size}")
        best = roofline.best_vs_cublas(cells, size)
        order = ["gpu_model", "family", "dtype", "cublas", "cublas_pct_of_peak", "best_stage", "best_pct_of_peak",
                 "best_vs_cublas_pct", "peak_tflops", "cublas_tflops", "best_tflops", "best_pct_lo", "best_pct_hi"]
        st.dataframe(best, hide_index=True, column_order=order, column_config={
            "gpu_model": "GPU model", "dtype": "precision", "cublas": "cuBLAS",
            "peak_tflops": st.column_config.NumberColumn("peak (TFLOP/s)", format="%.1f"),
            "cublas_tflops": st.column_config.NumberColumn("cuBLAS (TFLOP/s)", format="%.1f"),
            "cublas_pct_of_peak": st.column_config.NumberColumn("cuBLAS % of peak", format="%.1f"),
            "best_stage": "best stage", "best_tflops": st.column_config.NumberColumn("best (TFLOP/s)", format="%.1f"),
            "best_pct_of_peak": st.column_config.NumberColumn("best % of peak", format="%.1f"),
            "best_pct_lo": st.column_config.NumberColumn("best % of peak, low", format="%.1f"),
            "best_pct_hi": st.column_config.NumberColumn("best % of peak, high", format="%.1f"),
            "best_vs_cublas_pct": st.column_config.NumberColumn("best % of cuBLAS", format="%.1f")})
        at = cells[cells["size_label"] == size]
        ui.chart(charts.peak_chart(at, size), key="peak_chart")

        st.subheader("Roofline")
        models = analysis.options(cells, "gpu_model")
        model = st.selectbox("GPU model", models, key="peak_model")
        points = cells[cells["gpu_model"] == model]
        lo, hi = float(points["intensity"].min()) / 2, float(points["intensity"].max()) * 2
        roofs = roofline.roofs(table[table["gpu_model"] == model], lo, hi)
        st.caption("Arithmetic intensity = 2·M·N·K / compulsory DRAM bytes (A and B read once, C written once: FP32 out). "
                   "Memory roof: the data sheet's bandwidth for the device (rows carry no memory bus width, so it is not "
                   "measured); a device without an entry gets flat roofs. Hot timing keeps operands in L2 between launches, "
                   "so small shapes can sit above the memory roof.")
        ui.chart(charts.roofline_chart(points, roofs, model), key="roofline_chart")

    st.subheader("The peaks and where they come from")
    st.caption("NVML's max SM clock can exceed the clock NVIDIA quotes tensor peaks at (H100 SXM: 1980 MHz against "
               "1830 MHz for the data sheet's 989 TFLOPS BF16), so these peaks can sit above the data sheet's.")
    st.dataframe(table, hide_index=True, column_config={
        "gpu_model": "GPU model", "gpu_name": "device", "dtype": "precision", "unit": "units",
        "flop_per_clock_per_sm": st.column_config.NumberColumn("FLOP/clock/SM", format="%d"),
        "sm_count": "SMs", "max_sm_clock_mhz": st.column_config.NumberColumn("max SM clock (MHz)", format="%.0f"),
        "peak_tflops": st.column_config.NumberColumn("peak (TFLOP/s)", format="%.1f"),
        "bandwidth_tbs": st.column_config.NumberColumn("memory (TB/s)", format="%.2f"),
        "ridge_flop_per_byte": st.column_config.NumberColumn("ridge (FLOP/byte)", format="%.0f"),
        "source": st.column_config.TextColumn("peak source", width="large"),
        "bandwidth_source": st.column_config.TextColumn("bandwidth source", width="medium")})


ui.live(body)
