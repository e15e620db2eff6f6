"""Helpers for the browser tests: the pages of the built site, a static server, Chromium.

Nothing here is a test; tests/test_browser.py imports it. The server is the
standard library's `http.server` on 127.0.0.1 and a free port, so every request
the pages make can be told apart from a request to another host.
"""

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# Flags measured on this machine: headless, no sandbox (container), and no
# background traffic of Chromium's own (component updates, sync, QUIC probes)
# that would show up as requests to other hosts.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def site_pages(site_dir):
    """URL paths of every page of the built site, from its files: '', 'ch12-rnn/', ...

    Every `index.html` under site/ is a page (use_directory_urls); 404.html is not.
    """
    site_dir = Path(site_dir)
    pages = []
    for path in sorted(site_dir.rglob("index.html")):
        rel = path.parent.relative_to(site_dir).as_posix()
        pages.append("" if rel == "." else rel + "/")
    return pages


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StaticServer:
    """`python3 -m http.server --bind 127.0.0.1 <port> -d <root>` as a subprocess."""

    def __init__(self, root, port=None):
        self.root = Path(root)
        self.port = port or free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}/"
        self.proc = None

    def start(self, timeout=15.0):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
             str(self.port), "-d", str(self.root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"http.server exited with {self.proc.returncode} "
                                   f"before answering on port {self.port}")
            try:
                with urllib.request.urlopen(self.url, timeout=1) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"http.server did not answer on {self.url} in {timeout} s")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def is_local(self, url):
        """True for this server's URLs and for data:/blob: URLs (no network)."""
        if url.startswith(("data:", "blob:")):
            return True
        return url.startswith(self.url) or url == self.url.rstrip("/")


def launch_chromium(playwright, executable_path):
    return playwright.chromium.launch(executable_path=executable_path, args=CHROMIUM_ARGS)
