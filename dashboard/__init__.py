"""Live Streamlit dashboard over gemm-farm result datasets: `streamlit run dashboard/app.py -- --data PATH`."""
