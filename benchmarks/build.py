"""Build timings, side by side in one run: cold, warm, and a bare MkDocs build.

    .venv/bin/python benchmarks/build.py [--repeat 5] [--measure-cold]

warm : `make build` with nothing changed (the generator finds every page in
       its cache, then MkDocs builds the site).
bare : `mkdocs build --strict` of the same generated pages, nothing else: the
       floor a warm build is compared with.
cold : a copy of the project with an empty build cache: every page and plot
       recomputed. Measurements (training runs, executed notebooks) come from
       the measurement cache unless --measure-cold empties that too, which
       retrains every model (minutes).

Warm and bare runs alternate, so machine noise hits both alike; the figures
are medians, and the ratio is warm/bare (goal: at most 1.2).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def timed(cmd, cwd=ROOT, env=ENV):
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"benchmark: `{' '.join(map(str, cmd))}` failed:\n{result.stderr}")
    return seconds, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm/bare pairs (default 5)")
    parser.add_argument("--measure-cold", action="store_true",
                        help="also empty the measurement cache for the cold build (retrains)")
    args = parser.parse_args(argv)
    if not (VENV_BIN / "mkdocs").exists():
        sys.exit("benchmark: run `make build` first (it creates .venv)")

    timed(["make", "build"])  # make sure everything is warm
    bare_site = Path(tempfile.mkdtemp(prefix="bare-site-"))
    warm, bare = [], []
    for _ in range(args.repeat):
        warm.append(timed(["make", "build"])[0])
        bare.append(timed([VENV_BIN / "mkdocs", "build", "--strict", "--quiet",
                           "--site-dir", bare_site])[0])
    shutil.rmtree(bare_site, ignore_errors=True)

    copy = Path(tempfile.mkdtemp(prefix="cold-build-"))
    for name in ("docs", "generator", "mkdocs.yml", "requirements.txt"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, copy / name)
    env = dict(ENV)
    if args.measure_cold:
        env["RNN_EXPLAINER_CACHE"] = str(copy / "measurements")
    cold, result = timed([VENV_BIN / "python", "-m", "generator", "build"], cwd=copy, env=env)
    shutil.rmtree(copy, ignore_errors=True)

    w, b = statistics.median(warm), statistics.median(bare)
    print(f"build timings, median of {args.repeat} (seconds)")
    print(f"  cold build ({'measurements too' if args.measure_cold else 'page cache empty'}): "
          f"{cold:7.2f}")
    for line in result.stdout.splitlines():
        if "computed in" in line:
            print("      " + line)
    print(f"  warm `make build`:                  {w:7.2f}   (runs: "
          + ", ".join(f"{x:.2f}" for x in warm) + ")")
    print(f"  bare `mkdocs build --strict`:       {b:7.2f}   (runs: "
          + ", ".join(f"{x:.2f}" for x in bare) + ")")
    print(f"  warm / bare:                        {w / b:7.2f}   (goal: at most 1.20)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
