"""gemm-farm dashboard: `gemm-farm dashboard [--data PATH] [--host ADDR]`, or
`streamlit run dashboard/app.py -- --data PATH [--data PATH ...]`.

Without --data: $GEMM_FARM_DATA (paths joined by os.pathsep), else the shipped datasets/
plus the sweep's default output (farm.data.dataset.default_output()).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run dashboard/app.py` puts dashboard/ on the path, not the repo
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard import ui  # noqa: E402

VIEWS = Path(__file__).resolve().parent / "views"
PAGES = [  # (file, title, url path, icon)
    ("overview.py", "Overview", "overview", ":material/dashboard:"),
    ("ladder.py", "Ladder", "ladder", ":material/stairs:"),
    ("tuning.py", "Tuning", "tuning", ":material/tune:"),
    ("scaling.py", "Scaling across devices", "scaling", ":material/trending_up:"),
    ("compare.py", "Compare", "compare", ":material/compare_arrows:"),
    ("history.py", "History", "history", ":material/timeline:"),
    ("peak.py", "Peak & roofline", "peak", ":material/speed:"),
    ("llm.py", "LLM shapes", "llm", ":material/neurology:"),
    ("reproducibility.py", "Reproducibility", "reproducibility", ":material/repeat:"),
    ("telemetry.py", "Telemetry", "telemetry", ":material/thermostat:"),
    ("data.py", "Data", "data", ":material/download:"),
]

# An emoji icon is drawn in the page itself; a :material/...: one is fetched from fonts.gstatic.com, a third party.
st.set_page_config(page_title="gemm-farm", page_icon="📊", layout="wide")
ui.data_paths()
pages = [st.Page(VIEWS / f, title=t, url_path=u, icon=i) for f, t, u, i in PAGES]
# The default page is served at "/" only; this hidden one forwards there to Overview (query kept), so that /overview
# is a URL too.
home = st.Page(
    lambda: st.switch_page(pages[0], query_params=st.query_params.to_dict()),
    title="Overview",
    url_path="home",
    default=True,
    visibility="hidden",
)
page = st.navigation([home, *pages])
ui.layout()
ui.sidebar()
page.run()
