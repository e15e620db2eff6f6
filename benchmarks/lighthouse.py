"""Lighthouse's mobile performance and accessibility of the built site, gzip-served, by page.

    .venv/bin/python benchmarks/lighthouse.py                      (after make build)
    .venv/bin/python benchmarks/lighthouse.py --runs 5 --site before=/tmp/old/site --site after=site

Serves each site folder at its published base path (/rnn-explainer/, from site_url)
from 127.0.0.1, compressing text with gzip as a web server does (GitHub Pages does),
runs Lighthouse's performance and accessibility categories on every chapter (mobile, its
default simulated throttling) and prints, per page and site, the median performance score
(lowest to highest), the accessibility score (and, under the table, the audits that
failed in any run), and what makes the performance: total blocking time, largest contentful paint, first contentful paint,
speed index, layout shift, and the DOM's size. With several sites their rows stand side
by side, measured in turn run by run, so that the machine's load falls on all alike.

Lighthouse simulates a phone from the times it observes, so a busy machine inflates its
blocking time. The last column is steadier: the CPU time of the page's main thread as it
opens (Chromium's trace, thread time, unthrottled, at Lighthouse's phone size; the least
of the runs), which a busy machine hardly changes.

Lighthouse 12.2.3 comes from npm (`npm install lighthouse@12.2.3`; version 13 wants
Node 22) and runs Debian's Chromium (CHROME_PATH, default /usr/bin/chromium). The
machine is shared and noisy: scores move by a few points from run to run, so take the
median of several runs (--runs), and compare sites measured in one run. Not a test.
"""

import argparse
import gzip
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".py", ".ipynb",
              ".map", ".webmanifest"}
FLAGS = "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run " \
        "--disable-background-networking --disable-component-update --disable-sync"
METRICS = [("score", "score", "{:.0f}"),
           ("accessibility", "a11y", "{:.0f}"),
           ("total-blocking-time", "TBT ms", "{:.0f}"),
           ("largest-contentful-paint", "LCP s", "{:.1f}"),
           ("first-contentful-paint", "FCP s", "{:.1f}"),
           ("speed-index", "SI s", "{:.1f}"),
           ("cumulative-layout-shift", "CLS", "{:.3f}"),
           ("dom-size", "DOM", "{:.0f}"),
           ("main-thread", "main thread CPU ms", "{:.0f}")]


class GzipHandler(SimpleHTTPRequestHandler):
    """Static files; text gzip-compressed when the browser accepts it (as it does)."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not urlparse(self.path).path.endswith("/"):
                return super().send_head()  # its redirect to the address with a slash
            path = path / "index.html"
        wants = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (wants and path.suffix in COMPRESSED and path.is_file()):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), 6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve(site, base):
    """A gzip server of `site` at /<base>/ on a free port of 127.0.0.1: (server, url)."""
    root = Path(tempfile.mkdtemp(prefix="lighthouse-"))
    (root / base).parent.mkdir(parents=True, exist_ok=True)
    (root / base).symlink_to(Path(site).resolve())
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(GzipHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, root, f"http://127.0.0.1:{server.server_address[1]}/{base}/"


def lighthouse(binary, url, chrome):
    """Lighthouse's JSON report of one URL, performance and accessibility, mobile."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        result = subprocess.run(
            [*binary, url, "--only-categories=performance,accessibility", "--output=json",
             f"--output-path={out}", f"--chrome-flags={FLAGS}", "--quiet"],
            env={**os.environ, "CHROME_PATH": chrome}, capture_output=True, text=True,
            timeout=300)
        if result.returncode != 0 or not out.is_file():
            raise SystemExit(f"lighthouse failed on {url}: {result.stderr.strip()[-800:]}")
        return json.loads(out.read_text("utf-8"))


def version(binary):
    result = subprocess.run([*binary, "--version"], capture_output=True, text=True)
    return result.stdout.strip() or "(version unknown)"


def figures(report):
    audits = report["audits"]
    accessibility = report["categories"]["accessibility"]
    values = {"score": report["categories"]["performance"]["score"] * 100,
              "accessibility": accessibility["score"] * 100,
              "failing": [ref["id"] for ref in accessibility["auditRefs"]
                          if audits[ref["id"]].get("score") == 0]}
    for key, _, _ in METRICS[2:-1]:
        value = audits[key]["numericValue"]
        values[key] = value / 1000 if key.endswith("paint") or key == "speed-index" else value
    return values


def main_thread_ms(browser, url):
    """The CPU time of the renderer's main thread while `url` opens and for a second after,
    in milliseconds (trace events' thread durations), at Lighthouse's phone size."""
    context = browser.new_context(viewport={"width": 412, "height": 823},
                                  device_scale_factor=1.75, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        events, done = [], []
        cdp.on("Tracing.dataCollected", lambda e: events.extend(e["value"]))
        cdp.on("Tracing.tracingComplete", lambda e: done.append(True))
        cdp.send("Tracing.start", {"categories": "devtools.timeline,"
                                   "disabled-by-default-devtools.timeline",
                                   "transferMode": "ReportEvents"})
        page.goto(url, wait_until="load")
        page.wait_for_timeout(1000)
        cdp.send("Tracing.end")
        while not done:
            page.wait_for_timeout(20)
    finally:
        context.close()
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"
            and e["args"].get("name") == "CrRendererMain"}
    return sum(e.get("tdur", 0) for e in events if e.get("name") == "RunTask"
               and e.get("ph") == "X" and (e["pid"], e["tid"]) in main) / 1000


def chapter_pages():
    sys.path.insert(0, str(ROOT))
    from generator.chapter import chapters

    return [ch.page[:-3] + "/" for ch in chapters()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", help="a built site folder, or "
                        "NAME=FOLDER (default: site/); give several to compare them side "
                        "by side")
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median "
                        "is shown (default 3)")
    parser.add_argument("--page", action="append", help="a page's path, as ch12-rnn/ "
                        "(default: every chapter); '' is the home page")
    parser.add_argument("--lighthouse", default=os.environ.get("LIGHTHOUSE", "lighthouse"),
                        help="the lighthouse command (default: $LIGHTHOUSE or lighthouse "
                             "on PATH)")
    parser.add_argument("--chrome", default=os.environ.get("CHROME_PATH", "/usr/bin/chromium"))
    args = parser.parse_args(argv)
    binary = args.lighthouse.split()
    if shutil.which(binary[0]) is None:
        parser.error(f"no {binary[0]}: npm install lighthouse@12.2.3, then pass "
                     "--lighthouse node_modules/.bin/lighthouse")
    if args.runs < 1 or args.runs > 20:
        parser.error("--runs: from 1 to 20")
    named = [s.split("=", 1) if "=" in s else (Path(s).name, s)
             for s in (args.site or [str(ROOT / "site")])]
    names, sites = [n for n, _ in named], [s for _, s in named]
    for site in sites:
        if not (Path(site) / "index.html").is_file():
            parser.error(f"{site}: no built site there (make build)")
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    base = urlparse(config["site_url"]).path.strip("/")
    pages = args.page if args.page is not None else chapter_pages()
    servers = [serve(site, base) for site in sites]
    try:
        results = {}  # (page, site) -> [figures of each run]
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chrome,
                                                 args=FLAGS.split())
            for page in pages:
                for _ in range(args.runs):
                    for site, (_, _, url) in zip(sites, servers):  # in turn: the same load
                        found = figures(lighthouse(binary, url + page, args.chrome))
                        found["main-thread"] = main_thread_ms(browser, url + page)
                        results.setdefault((page, site), []).append(found)
            browser.close()
    finally:
        for server, root, _ in servers:
            server.shutdown()
            shutil.rmtree(root, ignore_errors=True)
    print(f"Lighthouse {version(binary)} mobile performance (score) and accessibility "
          f"(a11y), gzip-served, median of "
          f"{args.runs} run{'s' if args.runs > 1 else ''} (load average "
          f"{os.getloadavg()[0]:.1f} at the end)")
    head = ["page", "site"] + [label for _, label, _ in METRICS]
    print("| " + " | ".join(head) + " |")
    print("|---|---" + "|---:" * (len(head) - 2) + "|")
    for page in pages:
        for name, site in zip(names, sites):
            runs = results[(page, site)]
            row = [page or "(home)", name]
            for key, _, fmt in METRICS:
                pick = min if key == "main-thread" else statistics.median
                cell = fmt.format(pick(r[key] for r in runs))
                if key == "score" and len(runs) > 1:
                    cell += f" ({min(r[key] for r in runs):.0f}-{max(r[key] for r in runs):.0f})"
                row.append(cell)
            print("| " + " | ".join(row) + " |")
    failing = {(page or "(home)", name): sorted({key for r in results[(page, site)]
                                                  for key in r["failing"]})
               for page in pages for name, site in zip(names, sites)}
    for (page, name), keys in failing.items():
        if keys:
            print(f"{page} ({name}): accessibility audits failed: {', '.join(keys)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
