"""Look at the cell diagrams in real pages: screenshots in both themes, desktop and phone.

Not a test (pytest does not collect it): a tool for the eye. It copies a built
site (by default /work/main/site, or --site), injects generator/diagrams.py's
figures into the chapter pages, passed through Python-Markdown with md_in_html
as a page would be, links docs/assets/diagrams.css, serves the copy on
127.0.0.1 and drives headless Chromium (Playwright) over it:

    .venv/bin/python tests/diagram_preview.py --out /tmp/shots

writes, per page, <page>-<width>-<theme>.png (1280 and 390 pixels wide, light
and dark), <page>-print.png (print media), and one crop per figure
(fig-<id>-<width>-<theme>.png); and prints what it measured: the smallest text
in CSS pixels, whether the page scrolls sideways, and the text contrast of the
resolved colours. --measure prints STIX Two Math's advance widths instead
(the table in diagrams.py).
"""

import argparse
import functools
import http.server
import importlib.util
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator import diagrams  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def load(name):
    path = ROOT / "docs" / "code" / name
    spec = importlib.util.spec_from_file_location(f"preview_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures():
    """{page: [(anchor regex, html to insert before it)]}."""
    import markdown

    rnn, gated = load("rnn.py"), load("gated.py")
    lstm = {**gated.compute_lstm_step(), "h_prev": gated.h_prev, "C_prev": gated.C_prev,
            "x_t": gated.x_t}
    gru = {**gated.compute_gru_step(), "h_prev": gated.h_prev, "x_t": gated.x_t}

    def md(block):  # as a page would carry it: a raw HTML block between paragraphs
        text = f"Before.\n\n{block}\n\nAfter.\n"
        html = markdown.markdown(text, extensions=["md_in_html", "attr_list", "tables"])
        return html.split("<p>Before.</p>", 1)[1].rsplit("<p>After.</p>", 1)[0]

    return {
        "ch12-rnn": [(r"<p>After each step the output layer",
                      md(diagrams.rnn_unrolled(rnn.compute_unroll())))],
        "ch13-gated": [
            (r'<h2 id="132-the-gradient-highway"', md(diagrams.lstm_cell(id_prefix="lstm-sym"))),
            (r'<p>The forget gate sits at', md(diagrams.lstm_cell(lstm, id_prefix="lstm-step"))),
            (r"<p>Along the direct path", md(diagrams.gru_cell(gru, id_prefix="gru-step"))),
        ],
        "ch14-gru-lm": [(r"<p>The output layer reads every state",
                         md(diagrams.gru_cell(notation="d2l", id_prefix="gru-d2l")))],
    }


def prepare(site, dest):
    shutil.copytree(site, dest, dirs_exist_ok=True)
    shutil.copy(ROOT / "docs" / "assets" / "diagrams.css", dest / "assets" / "diagrams.css")
    for page, inserts in figures().items():
        path = dest / page / "index.html"
        html = path.read_text("utf-8")
        html = html.replace('<link rel="stylesheet" href="../assets/site.css">',
                            '<link rel="stylesheet" href="../assets/site.css">\n'
                            '<link rel="stylesheet" href="../assets/diagrams.css">', 1)
        for anchor, block in inserts:
            m = re.search(anchor, html)
            if not m:
                raise SystemExit(f"{page}: no {anchor!r}")
            html = html[:m.start()] + block + "\n" + html[m.start():]
        path.write_text(html, "utf-8")


def serve(root):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


MEASURE_JS = """() => {
  const out = {scroll: document.documentElement.scrollWidth, figs: []};
  for (const svg of document.querySelectorAll('svg.dg')) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    let min = 1e9;
    for (const t of svg.querySelectorAll('text, tspan')) {
      const fs = parseFloat(getComputedStyle(t).fontSize);
      if (t.textContent.trim()) min = Math.min(min, fs * scale);
    }
    out.figs.push({id: svg.closest('figure').id, width: svg.getBoundingClientRect().width,
                   minText: min});
  }
  return out;
}"""

COLOURS_JS = """() => {
  const svg = document.querySelector('svg.dg'); const cs = getComputedStyle(svg);
  const names = ['--dg-fg','--dg-muted','--dg-bg','--dg-cell-bg','--dg-line','--dg-f','--dg-i',
                 '--dg-c','--dg-o','--dg-hw','--dg-cell-chip','--dg-state','--dg-input'];
  const probe = document.createElement('div'); document.body.appendChild(probe);
  const res = {};
  for (const n of names) { probe.style.color = cs.getPropertyValue(n);
                           res[n] = getComputedStyle(probe).color; }
  probe.remove(); return res;
}"""


def rgba(text):
    nums = [float(x) for x in re.findall(r"[\d.]+", text)]
    return (nums + [1.0])[:4]


def over(fg, bg):
    a = fg[3]
    return [fg[k] * a + bg[k] * (1 - a) for k in range(3)] + [1.0]


def luminance(c):
    def lin(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(v) for v in c[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def report_contrast(colours, theme):
    bg = rgba(colours["--dg-bg"])
    cell = over(rgba(colours["--dg-cell-bg"]), bg)
    for text in ("--dg-fg", "--dg-muted"):
        fg = rgba(colours[text])
        print(f"  {theme}: {text} on bg {contrast(over(fg, bg), bg):.2f}, "
              f"on cell {contrast(over(fg, cell), cell):.2f}")
    for line in ("--dg-line", "--dg-f", "--dg-i", "--dg-c", "--dg-o", "--dg-cell-chip",
                 "--dg-state", "--dg-input"):
        c = rgba(colours[line])
        print(f"  {theme}: {line} (non-text) on cell {contrast(over(c, cell), cell):.2f}")


def shoot(base, out, pages):
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for width, height in ((1280, 900), (390, 844)):
            for theme in ("light", "dark"):
                ctx = browser.new_context(viewport={"width": width, "height": height},
                                          color_scheme=theme, device_scale_factor=2
                                          if width < 500 else 1)
                page = ctx.new_page()
                for name in pages:
                    page.goto(f"{base}/{name}/", wait_until="networkidle")
                    page.evaluate("document.fonts.ready")
                    m = page.evaluate(MEASURE_JS)
                    print(f"{name} {width} {theme}: scrollWidth {m['scroll']}",
                          " ".join(f"{f['id']}: {f['width']:.0f}px wide, smallest text "
                                   f"{f['minText']:.1f}px" for f in m["figs"]))
                    if name == pages[0] and width == 1280:
                        report_contrast(page.evaluate(COLOURS_JS), theme)
                    for f in m["figs"]:
                        page.locator(f"figure#{f['id']}").screenshot(
                            path=str(out / f"fig-{f['id']}-{width}-{theme}.png"))
                ctx.close()
        ctx = browser.new_context(viewport={"width": 900, "height": 1200}, color_scheme="dark")
        page = ctx.new_page()
        for name in pages:
            page.goto(f"{base}/{name}/", wait_until="networkidle")
            page.emulate_media(media="print")
            for fig in page.locator("figure.diagram").all():
                fid = fig.get_attribute("id")
                fig.screenshot(path=str(out / f"fig-{fid}-print.png"))
            if name == "ch13-gated":
                page.pdf(path=str(out / f"{name}-print.pdf"))
        browser.close()


def measure(base):
    from playwright.sync_api import sync_playwright

    chars = sorted({*diagrams._ADVANCE} - {" "})
    html = ('<!doctype html><link rel=stylesheet href="/assets/site.css"><svg width=9 height=9>'
            '<text id=t style="font-family:\'STIX Two Math\';font-size:1000px"></text></svg>')
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page()
        page.route(f"{base}/measure.html", lambda r: r.fulfill(body=html,
                                                                 content_type="text/html"))
        page.goto(f"{base}/measure.html")
        page.evaluate("document.fonts.load('1000px \"STIX Two Math\"', '\U0001D436')")
        page.wait_for_timeout(300)
        widths = page.evaluate("""(chars) => { const t = document.getElementById('t');
            const out = {}; for (const c of chars) { t.textContent = c;
            out[c] = Math.round(t.getComputedTextLength()); } return out; }""", chars)
        browser.close()
    for ch, w in widths.items():
        mark = "" if diagrams._ADVANCE.get(ch) == w else f"  (table: {diagrams._ADVANCE.get(ch)})"
        print(f"U+{ord(ch):04X} {ch} {w}{mark}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=Path("/work/main/site"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/diagram-shots"))
    ap.add_argument("--pages", nargs="*", default=["ch12-rnn", "ch13-gated", "ch14-gru-lm"])
    ap.add_argument("--measure", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "site"
        prepare(args.site, root)
        httpd = serve(root)
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        try:
            measure(base) if args.measure else shoot(base, args.out, args.pages)
        finally:
            httpd.shutdown()


if __name__ == "__main__":
    main()
