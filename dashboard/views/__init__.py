"""The pages, one file each: its queries (pandas), its charts (Altair) and its layout (Streamlit, run when Streamlit
runs the file as the page; importing it runs nothing)."""
