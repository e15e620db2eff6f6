"""How fast chapter 14's trained GRU writes in the page (docs/assets/widgets/textgen.js),
in headless Chromium on the built site.

    .venv/bin/python benchmarks/textgen_speed.py [--repeat 20]

keystroke   from an edit of the prompt (an input event) to the new text in the page:
            both continuations (greedy and drawn) and the five likeliest characters,
            at the default 20 characters, then at the longest, 160. The widget writes
            synchronously, so this is the whole of it but the browser's paint.
per char    the 160-character keystroke over the GRU steps it ran (the prompt once,
            then each continuation's 160 characters, every one of them read: its own
            next-character distribution and mean update gate): the forward pass per
            character, sampling, shading and drawing included.
cursor      a key moving the cursor along a text (its readout: the five likeliest next
            characters and the mean update gate), and along the passage of "how far
            back" (its 256 characters shaded, the table and the chart redrawn).

Goals (issue 19): under 50 ms a keystroke, under 1 ms a character. Medians of --repeat
edits, after one that loads the weights; CPU is shared, so run it on an idle machine.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import yaml
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"

TIME_EDIT = """([host, text]) => {
  const prompt = host.querySelector('input[data-input="prompt"]');
  const start = performance.now();
  prompt.value = text;
  prompt.dispatchEvent(new Event('input', {bubbles: true}));
  const written = host.querySelector('[data-value="sampled"]').dataset.text;
  return [performance.now() - start, written];
}"""

TIME_KEYS = """([el, times]) => {
  const ms = [];
  for (let k = 0; k < times; k++) {
    const start = performance.now();
    el.dispatchEvent(new KeyboardEvent('keydown', {key: k % 2 ? 'ArrowLeft' : 'ArrowRight', bubbles: true}));
    ms.push(performance.now() - start);
  }
  return ms;
}"""

SET_LENGTH = """([host, index]) => {
  const el = host.querySelector('input[data-control="length"]');
  el.value = index;
  el.dispatchEvent(new Event('input', {bubbles: true}));
}"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    base = urlparse(yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["site_url"]).path.strip("/")
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / base).symlink_to(SITE)
        server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "8799",
                                   "-d", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:8799/{base}/ch14-gru-lm/", wait_until="networkidle")
                host = page.locator('.rw-widget[data-src$="/model_widget.json"]')
                host.scroll_into_view_if_needed()
                page.wait_for_function("(h) => h.dataset.state === 'ready'", arg=host.element_handle())
                host.locator('button[data-action="run"]').click()
                page.wait_for_function("(h) => h.querySelector('figure').dataset.model === 'ready'",
                                       arg=host.element_handle())
                handle = host.element_handle()
                for index, n in ((1, 20), (4, 160)):
                    page.evaluate(SET_LENGTH, [handle, index])
                    prompts = [("it has", "it has ")[k % 2] for k in range(args.repeat)]
                    ms = [page.evaluate(TIME_EDIT, [handle, text])[0] for text in prompts]
                    median = statistics.median(ms)
                    steps = len("it has ") + 2 * n
                    print(f"keystroke, {n:3d} characters: median {median:6.2f} ms, "
                          f"max {max(ms):6.2f} ms over {len(ms)} edits")
                    if n == 160:
                        print(f"per character: {1000 * median / steps:6.1f} us "
                              f"({steps} GRU steps a keystroke)")
                greedy = host.locator('[data-value="greedy"]').element_handle()
                ms = page.evaluate(TIME_KEYS, [greedy, args.repeat])
                print(f"cursor, text generator: median {statistics.median(ms):6.2f} ms, "
                      f"max {max(ms):6.2f} ms over {len(ms)} keys")
                reach = page.locator('.rw-widget[data-src$="/reach_widget.json"]')
                reach.scroll_into_view_if_needed()
                page.wait_for_function("(h) => h.dataset.state === 'ready'", arg=reach.element_handle())
                passage = reach.locator('[data-value="passage"]')
                passage.focus()
                page.wait_for_function("(h) => h.querySelector('figure').dataset.model === 'ready'",
                                       arg=reach.element_handle())
                ms = page.evaluate(TIME_KEYS, [passage.element_handle(), args.repeat])
                print(f"cursor, how far back: median {statistics.median(ms):6.2f} ms, "
                      f"max {max(ms):6.2f} ms over {len(ms)} keys")
                browser.close()
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
