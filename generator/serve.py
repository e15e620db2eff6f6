"""`make serve`: build, serve site/ on localhost, rebuild when a source changes.

A plain static server, like the one a reader would use offline, so what you
see is exactly what `make build` publishes. Every second it looks at the
modification times under docs/, generator/ and mkdocs.yml; on a change it
rebuilds (all or nothing, from the cache where it can). A failed rebuild prints
its message and keeps serving the last good site. Reload the page to see a
rebuild.
"""

import functools
import http.server
import threading
import time

from .build import build_all
from .registry import ROOT, GeneratorError

WATCHED = (ROOT / "docs", ROOT / "generator", ROOT / "mkdocs.yml")


def snapshot():
    """(path, mtime, size) of every watched file: changes when a source changes."""
    files = []
    for top in WATCHED:
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for p in paths:
            if "__pycache__" not in p.parts:
                st = p.stat()
                files.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(files)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # one line per request is noise here
        pass


def serve(site, port, log=print):
    build_all(site, log=log)
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log(f"serve: http://127.0.0.1:{port}/ (Ctrl-C stops; rebuilds when docs/, generator/ "
        "or mkdocs.yml change)")
    seen = snapshot()
    try:
        while True:
            time.sleep(1.0)
            now = snapshot()
            if now != seen:
                seen = now
                started = time.perf_counter()
                try:
                    build_all(site, log=log)
                    log(f"serve: rebuilt in {time.perf_counter() - started:.1f} s; reload the page")
                except GeneratorError as exc:
                    log(f"serve: rebuild failed, still serving the last good site: {exc}")
    except KeyboardInterrupt:
        log("serve: stopped")
    finally:
        server.shutdown()
