"""Screenshot every dashboard page with a headless Chromium (Debian's `chromium` package).

    python -m dashboard.screenshot --data PATH [--data PATH ...] [--out /tmp/dashboard-shots] [--idle 120]

Starts `streamlit run dashboard/app.py` headless on a free localhost port, opens each page in
one headless Chromium and writes <out>/<page>.png. It prints every request the page made to a
host other than the app's own (there should be none), and with `--idle SECONDS` it leaves each
page open that long, nothing changing, and prints the CPU seconds the server spent meanwhile.

Chromium's one-shot `--screenshot --virtual-time-budget` does not wait for Streamlit: the page
arrives over a websocket, which virtual time does not count as pending, so the shot is blank.
Instead the browser is driven over the DevTools protocol: navigate, wait until the page has
rendered (title present, no script running, element count steady, charts drawn), capture.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

APP = Path(__file__).resolve().parent / "app.py"
ROOT = APP.parent.parent
PAGES = [
    "overview",
    "ladder",
    "tuning",
    "scaling",
    "compare",
    "history",
    "peak",
    "llm",
    "reproducibility",
    "telemetry",
    "data",
]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"streamlit did not come up at {url}")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    raise FileNotFoundError("no chromium: apt-get install -y chromium")


READY_JS = """(() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const running = !!document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
    || document.querySelectorAll('[data-testid="stSkeleton"]').length > 0;
  const h1 = !!main.querySelector('h1');
  const elements = main.querySelectorAll('[data-testid="stElementContainer"]').length;
  const vega = main.querySelectorAll('.vega-embed').length;
  const drawn = main.querySelectorAll('.vega-embed canvas, .vega-embed svg.marks').length;
  const stale = main.querySelectorAll('[data-stale="true"]').length;
  const sizes = Array.from(main.querySelectorAll('.vega-embed')).map(e => [e.clientWidth, e.clientHeight].join('x')).join(' ');
  const dialog = document.querySelector('[role="dialog"]');
  const not_found = !!dialog && dialog.innerText.includes('Page not found');
  return JSON.stringify({running, h1, elements, vega, drawn, stale, sizes, not_found});
})()"""


class Browser:
    """A headless Chromium tab driven over the DevTools protocol (websockets' sync client)."""

    def __init__(self, width: int, height: int) -> None:
        from websockets.sync.client import connect  # installed with streamlit

        self._profile = tempfile.mkdtemp(prefix="gemm-farm-shots-")
        self._proc = subprocess.Popen(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or len(port_file.read_text().split()) < 2:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not open its DevTools port")
            time.sleep(0.2)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        self._ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=30).__enter__()
        self._id = 0
        self._width, self._height = width, height
        self.call("Page.enable")
        self.call("Network.enable")
        self.requested: set[str] = set()  # every URL the page asked for
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params) -> dict:
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv(timeout=120))
            if msg.get("method") == "Network.requestWillBeSent":
                self.requested.add(msg["params"]["request"]["url"])
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def state(self) -> dict:
        res = self.call("Runtime.evaluate", expression=READY_JS, returnByValue=True)
        return json.loads(res["result"]["value"])

    def shoot(
        self, url: str, out: Path, timeout_s: float = 120.0, settle_s: float = 2.0, full_page: bool = False
    ) -> dict:
        """Open `url`, wait until it has rendered and stopped changing, write a PNG of the window
        (or, with `full_page`, of the whole page: the window is made as tall as the main area's content)."""
        import base64

        self.call("Page.navigate", url=url)
        time.sleep(1.0)
        deadline, last, steady = time.monotonic() + timeout_s, None, 0
        while time.monotonic() < deadline:
            st = self.state()
            ready = st["h1"] and not st["running"] and not st["stale"] and st["drawn"] >= st["vega"]
            steady = steady + 1 if ready and st == last else 0
            if steady >= 6:
                break
            last = st
            time.sleep(0.5)
        time.sleep(settle_s)  # Vega's transitions, fonts
        if full_page:
            h = self.call(
                "Runtime.evaluate",
                returnByValue=True,
                expression="(document.querySelector('[data-testid=\"stMain\"]') || document.body).scrollHeight",
            )["result"]["value"]
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=self._width,
                height=max(self._height, int(h) + 40),
                deviceScaleFactor=1,
                mobile=False,
            )
            time.sleep(settle_s)
        png = self.call("Page.captureScreenshot", format="png")["data"]
        if full_page:
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=self._width,
                height=self._height,
                deviceScaleFactor=1,
                mobile=False,
            )
        out.write_bytes(base64.b64decode(png))
        return last or {}

    def idle(self, seconds: float) -> None:
        """Keep the page open, reading the browser's events (so its requests are seen) for `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.state()
            time.sleep(1.0)

    def close(self) -> None:
        try:
            self._ws.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            shutil.rmtree(self._profile, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its waited-for children, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def foreign(urls: set[str], own: str) -> list[str]:
    """The URLs not served by the app itself (nor the browser's own data: and about: pages)."""
    return sorted(u for u in urls if not u.startswith((own, "data:", "blob:", "about:", "chrome", "ws://127.0.0.1")))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", action="append", default=[], help="dataset path (repeatable); default: the app's defaults")
    p.add_argument("--out", default="/tmp/dashboard-shots")
    p.add_argument("--pages", nargs="*", default=PAGES, choices=PAGES)
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--height", type=int, default=1800)
    p.add_argument("--full-page", action="store_true", help="capture each whole page, not only the window")
    p.add_argument(
        "--idle",
        type=float,
        default=0.0,
        help="keep each page open this many seconds and print the server's CPU seconds meanwhile",
    )
    args = p.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.headless=true",
        f"--server.port={port}",
        "--server.address=127.0.0.1",
        "--browser.gatherUsageStats=false",
        "--client.toolbarMode=minimal",
        "--server.fileWatcherType=none",
        "--",
    ]
    for d in args.data:
        cmd += ["--data", d]
    server = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    browser = None
    try:
        wait_healthy(url)
        browser = Browser(args.width, args.height)
        for page in args.pages:
            target = out / f"{page}.png"
            state = browser.shoot(f"{url}/{page}", target, full_page=args.full_page)
            print(target, state)
            if args.idle:
                before = cpu_seconds(server.pid)
                browser.idle(args.idle)
                spent = cpu_seconds(server.pid) - before
                print(
                    f"idle {page}: server CPU {spent:.2f} s in {args.idle:.0f} s ({60 * spent / args.idle:.2f} s per minute)"
                )
        print("requests to other hosts:", foreign(browser.requested, url) or "none")
    finally:
        if browser is not None:
            browser.close()
        server.terminate()
        try:
            log, _ = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            log, _ = server.communicate()
        if "Traceback" in (log or ""):
            print(log, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
