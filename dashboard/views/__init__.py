"""The pages, one file each: its queries (pandas), its charts (Altair) and its layout (Streamlit). Streamlit runs the
file as the page; importing it (tests do) draws nothing."""
