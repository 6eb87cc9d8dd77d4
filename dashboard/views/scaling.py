"""Scaling across devices: TFLOP/s vs size per GPU, a device x stage heat map of % cuBLAS."""
import streamlit as st

from dashboard import analysis, charts, ui

st.title("Scaling across devices")
st.caption("How each stage scales with the matrix size on each GPU model, against cuBLAS of the same precision "
           "(dashed). Family, precision, size and GPU-model filters are in the sidebar.")


def body() -> None:
    L, rows, _ = ui.filtered()
    ui.messages(L)
    if ui.stop_if_empty(L, rows):
        return
    t = ui.stage_groups(analysis.timed(rows), "scaling_groups")
    if t.empty:
        st.info("No timed rows under the current filters.")
        return
    sc = analysis.scaling(t)

    st.subheader("Throughput vs size")
    st.caption("One chart per family, one panel per GPU model. Median TFLOP/s over repeats, runs and same-model GPUs; "
               "whiskers: min–max over those rows (q1–q3 of the samples where a cell has one row). Dashed, in black "
               "and greys: cuBLAS of the family's precisions.")
    families = [f for f in analysis.options(t.sort_values("order"), "family") if f != "baseline"]
    families.sort(key=lambda f: t.loc[t["family"] == f, "order"].min())
    for family in families or ["baseline"]:
        dtypes = set(t.loc[t["family"] == family, "dtype"])
        part = sc[(sc["family"] == family) | ((sc["family"] == "baseline") & sc["dtype"].isin(dtypes))]
        st.markdown(f"**{family}** · {', '.join(sorted(dtypes))}")
        ui.chart(charts.scaling_chart(part), key=f"scaling_chart_{family}")

    sizes = analysis.options(t, "size_label")
    size = st.selectbox("Size for the heat map", sizes, index=len(sizes) - 1, key="scaling_size")
    at = sc[sc["size_label"] == size]
    st.subheader(f"% of cuBLAS at {size}")
    st.caption("Device × stage, median over repeats, runs and same-model GPUs; each stage against the cuBLAS of its "
               "own precision. Against the chip's own peak instead: the Peak & roofline page.")
    if at[at["family"] != "baseline"].empty:
        st.info(f"No kernel rows at {size}.")
    else:
        ui.chart(charts.heatmap_chart(at, size), key="heatmap")


ui.live(body)
