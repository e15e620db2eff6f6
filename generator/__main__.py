"""python -m generator {build,docs,serve}: the command line behind `make build` and `make serve`."""

import argparse
import os
import sys
import time
import traceback

# One BLAS thread, as the scripts use when run by a reader (gru.py sets this itself
# when run as a script, but not when imported): at these matrix sizes threads only
# cost time, and float32 sums differ in the last bits with the thread count, which
# would let the page drift from what `python3 gru.py` prints. Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .registry import ROOT, GeneratorError


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="Run the chapters' scripts, write their tables and plots into the pages "
                    "(build/docs), and build the site with MkDocs in strict mode (site/).")
    parser.add_argument("command", choices=("build", "docs", "serve"),
                        help="build: the docs tree, then the site; docs: the docs tree only; "
                             "serve: build, serve on localhost, rebuild on change")
    parser.add_argument("--site-dir", default=str(ROOT / "site"),
                        help="where the site goes (default: site/)")
    parser.add_argument("--port", type=int, default=8000,
                        help="serve: the port on 127.0.0.1 (default 8000)")
    parser.add_argument("--traceback", action="store_true",
                        help="on an unexpected failure, print the Python traceback")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    from . import build

    started = time.perf_counter()
    try:
        if args.command == "docs":
            build.generate()
        if args.command == "serve":
            from .serve import serve

            serve(args.site_dir, args.port)
        if args.command == "build":
            build.build_all(args.site_dir)
            print(f"generator: site built in {os.path.relpath(args.site_dir)}/ "
                  f"({time.perf_counter() - started:.1f} s)")
    except GeneratorError as exc:
        print(f"generator: error: {exc}", file=sys.stderr)
        print("generator: nothing was changed: build/docs and the site are as before",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("generator: interrupted: build/docs and the site are as before", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug in the generator itself: say what, offer the traceback
        if args.traceback:
            traceback.print_exc()
        print(f"generator: error: unexpected {type(exc).__name__}: {exc}"
              + ("" if args.traceback else " (run with --traceback for details)"),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
