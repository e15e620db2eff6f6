"""python -m generator {build,serve,deploy,harness,new-chapter}: the command line behind
`make build`, `make serve`, `make deploy`, `make harness` and `make chapter`."""

import argparse
import os
import signal
import socket
import sys
import time
import traceback

from .chapter import ROOT, GeneratorError
from .lock import identity
from .chapter import describe


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="Build the site: MkDocs with the generator hook, which runs the chapters' "
                    "scripts and puts their tables, numbers and plots into the pages.")
    parser.add_argument("command", choices=("build", "serve", "deploy", "harness", "new-chapter"),
                        help="build: the site into site/, all or nothing; serve: mkdocs serve "
                             "on 127.0.0.1 (rebuilds on change and reloads the page); deploy: "
                             "build, then publish site/ to origin's gh-pages; harness: write "
                             "generator/harness.py's block into every served script; "
                             "new-chapter NUMBER NAME SCRIPT TITLE: the four files of a new "
                             "chapter")
    parser.add_argument("words", nargs="*", metavar="ARG",
                        help="new-chapter: NUMBER NAME SCRIPT TITLE, e.g. 18 recurrence "
                             "recurrence.py 'Recurrence returns'")
    parser.add_argument("--check", action="store_true",
                        help="harness: write nothing; fail, naming the script and the line, "
                             "where a copy differs")
    parser.add_argument("--site-dir", default=str(ROOT / "site"),
                        help="build, deploy: where the site goes (default: site/)")
    parser.add_argument("--port", type=int, default=8000,
                        help="serve: the port on 127.0.0.1 (default 8000)")
    parser.add_argument("--traceback", action="store_true",
                        help="on an unexpected failure, print the Python traceback")
    args = parser.parse_args(argv)
    wanted = 4 if args.command == "new-chapter" else 0
    if len(args.words) != wanted:
        parser.error(f"{args.command} takes " + ("NUMBER NAME SCRIPT TITLE"
                                                  if wanted else "no other argument"))
    if args.check and args.command != "harness":
        parser.error("--check goes with harness")
    return args


def scaffold(args):
    """harness and new-chapter: write source files, say which."""
    from .scaffold import new_chapter, sync_harness

    if args.command == "harness":
        written = sync_harness(check=args.check)
        print("generator: every served script's harness is generator/harness.py's"
              + (f" (written: {', '.join(written)})" if written else ""))
        return
    number, name, script, title = args.words
    if not number.isdigit():
        raise GeneratorError(f"the chapter's number {number!r}: a whole number, such as 18")
    for path in new_chapter(int(number), name, script, title):
        print(f"generator: wrote {path}")
    print("generator: now `make build`; docs/building.md, \"Adding a chapter\", says what "
          "to change next")


def port_in_use(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def serve(port):
    """`mkdocs serve` on 127.0.0.1:<port>, after checking the port is free."""
    if port_in_use(port):
        raise GeneratorError(f"port {port} on 127.0.0.1 is in use (another `make serve`?); "
                             f"choose another: make serve PORT={port + 1}")
    mkdocs = os.path.join(os.path.dirname(sys.executable), "mkdocs")
    os.execv(mkdocs, [mkdocs, "serve", "--dev-addr", f"127.0.0.1:{port}",
                      "--config-file", str(ROOT / "mkdocs.yml")])


def say_done(line):
    """The build's last line on stdout; if stdout cannot take it (`> /dev/full`), say so on
    stderr in one line instead: the build itself succeeded, and its status stays 0."""
    try:
        print(line, flush=True)
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
        print(f"generator: the site is built, but standard output could not be written "
              f"({exc.strerror or exc})", file=sys.stderr)


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    site = os.path.abspath(args.site_dir)
    before = identity(site)

    def outcome():  # true whenever it is said: compares site/ with what it was
        if identity(site) == before:
            return "the site is as before"
        return f"{os.path.relpath(site)}/ holds the new build, which was already in place"

    def after_failure():
        if args.command != "serve":
            unchanged = identity(site) == before
            print(f"generator: {'nothing was changed: ' if unchanged else ''}{outcome()}",
                  file=sys.stderr)

    def on_sigterm(signum, frame):  # the hook says it while MkDocs runs; this, outside
        print(f"generator: stopped by SIGTERM: {outcome()}", file=sys.stderr, flush=True)
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, on_sigterm)
    if args.command in ("harness", "new-chapter"):
        try:
            scaffold(args)
        except GeneratorError as exc:
            print(f"generator: error: {exc}", file=sys.stderr)
            return 1
        return 0
    try:
        if args.command == "serve":
            serve(args.port)
        from .build import build

        if args.command == "deploy":
            os.chdir(ROOT)  # git, as gh-deploy runs it, in the repository
        build(site, deploy=args.command == "deploy")
        say_done(f"generator: site built in {os.path.relpath(site)}/ "
                 + ("and published " if args.command == "deploy" else "")
                 + f"({time.perf_counter() - started:.1f} s)")
    except GeneratorError as exc:
        print(f"generator: error: {exc}", file=sys.stderr)
        after_failure()
        return 1
    except KeyboardInterrupt:
        print(f"generator: interrupted: {outcome()}", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug in the generator itself: say what and where
        if args.traceback:
            traceback.print_exc()
        print(f"generator: error: unexpected {describe(exc, generator_too=True)}, a bug in the "
              "generator" + ("" if args.traceback else " (run with --traceback for details)"),
              file=sys.stderr)
        after_failure()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
