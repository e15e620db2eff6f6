"""How fast chapter 14's trainer (docs/assets/widgets/gru-train.js) takes an SGD update in
headless Chromium, side by side with gru.py's numpy (sgd_update, float64, one BLAS
thread) on the same run: the book's first windows, as the page's default, seed 0.

    .venv/bin/python benchmarks/trainer_speed.py [--updates 100]

For 32 and 64 hidden units and batches of 1, 8 and 32 windows of 32 characters: the
milliseconds per update (forward, backward, clipping, SGD; no validation or samples), the
median of five stretches of --updates / 5 updates after --updates of warm-up, in the page
and in numpy. Goal (issue 30): at most 3 ms per update at 32 units, batch 1. CPU is
shared: run it on an idle machine.
"""

import argparse
import os
import statistics
import time
from dataclasses import asdict, replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the script sets for itself

from playwright.sync_api import sync_playwright  # noqa: E402

import importlib.util  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WIDGETS = ROOT / "docs" / "assets" / "widgets"
SPEC = importlib.util.spec_from_file_location("gru", ROOT / "docs" / "code" / "gru.py")
gru = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gru)

NUM_TRAIN, NUM_VAL = 3000, 100

TIME_PAGE = """([config, ids, init, warm, stretches]) => {
  const run = new GruTrain.Run(config, ids, init), ms = [];
  for (let k = 0; k < warm; k++) run.step();
  for (const n of stretches) {
    const start = performance.now();
    for (let k = 0; k < n; k++) run.step();
    ms.push((performance.now() - start) / n);
  }
  return ms;
}"""


def numpy_ms(config, text, warm, stretches):
    data = gru.make_dataset(text, config)
    rng = gru.np.random.default_rng(config.seed)
    params = gru.init_params('gru', len(gru.VOCAB), config.hidden, rng, 'float64')
    order = gru.batches(rng, len(data.X_train), config.batch_size)

    def step():
        _, batch = next(order)
        gru.sgd_update(params, config, data.X_train[batch], data.Y_train[batch], 'benchmark')
    for _ in range(warm):
        step()
    out = []
    for n in stretches:
        start = time.perf_counter()
        for _ in range(n):
            step()
        out.append(1000 * (time.perf_counter() - start) / n)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=100)
    args = ap.parse_args()
    text = gru.read_corpus(gru.CORPUS)
    stretches = [max(1, args.updates // 5)] * 5
    print(f"ms per update, float64, 32 characters a window; median of 5 x {stretches[0]} updates")
    print("| hidden | batch | page (Chromium) | numpy | page / numpy |")
    print("|-------:|------:|----------------:|------:|-------------:|")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.set_content("<!doctype html><title>trainer speed</title>")
        for name in ("core.js", "numpy-random.js", "gru-train.js"):
            page.add_script_tag(content=(WIDGETS / name).read_text("utf-8"))
        for hidden in (32, 64):
            for batch in (1, 8, 32):
                config = replace(gru.Config(), hidden=hidden, batch_size=batch, dtype='float64',
                                 num_train=NUM_TRAIN, num_val=NUM_VAL, updates=1)
                init = asdict(gru.compute_init(config))
                ids = [int(i) for i in gru.token_ids(text[:NUM_TRAIN + NUM_VAL + config.num_steps])]
                js = dict(hidden=hidden, lr=config.lr, clip=config.clip, batch=batch, updates=10 ** 9,
                          numTrain=NUM_TRAIN, numVal=NUM_VAL, T=config.num_steps, seed=0, every=50,
                          prefix=[], numPreds=0, temperatures=[], unk=1, V=len(gru.VOCAB))
                page_ms = statistics.median(page.evaluate(TIME_PAGE, [js, ids, init, args.updates,
                                                                      stretches]))
                np_ms = statistics.median(numpy_ms(config, text, args.updates, stretches))
                print(f"| {hidden:6} | {batch:5} | {page_ms:15.2f} | {np_ms:5.2f} | "
                      f"{page_ms / np_ms:12.2f} |", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
