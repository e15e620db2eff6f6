"""The MkDocs hook that runs the generator (mkdocs.yml: `hooks: [generator/hook.py]`).

`mkdocs build`, `mkdocs serve`, `mkdocs gh-deploy`, `make build` and `make
deploy` all go through here. MkDocs loads a hook file once per process, and the
modules it imports stay loaded; so at the start of every build this shim drops
every `generator.*` module and imports the pipeline afresh: under `mkdocs
serve`, an edit to any generator module takes effect at the next rebuild. (The
numbers themselves are computed in fresh worker processes, see worker.py.) The site's
own markers, the home page's list of chapters and each chapter's run-it lines,
are made from the registry by generator/site.py; the pipeline fills both kinds.

A build (anything but `mkdocs serve`) keeps site/ whole the same way whichever
command started it (lock.py): it takes the build lock for its whole run, builds
into a fresh folder beside site/, and swaps that folder into place in one step
once MkDocs has written everything without a warning. SIGTERM stops it with one
line saying what happened; its workers stop with it.
"""

import importlib
import logging
import signal
import sys
import threading
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True  # no __pycache__ in watched folders: it would trigger rebuilds

_state = {"command": None, "pipeline": None, "error": None, "lock": None,
          "staging": None, "warnings": None, "sigterm": None}


def _fresh(name):
    for loaded in [n for n in sys.modules if n == "generator" or n.startswith("generator.")]:
        del sys.modules[loaded]
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(name)


def _plugin_error(exc):
    from mkdocs.exceptions import PluginError

    return PluginError(f"generator: {exc}")


def _call(method, *args):
    """The pipeline's method; its GeneratorError becomes MkDocs' PluginError (one line, no
    traceback). The class is the one the fresh pipeline was imported with (_fresh)."""
    try:
        return getattr(_state["pipeline"], method)(*args)
    except _state["error"] as exc:
        raise _plugin_error(exc) from None


class _Warnings(logging.Handler):
    """Counts what MkDocs' strict mode counts, so that a build it will abort is never
    swapped into place."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        self.count += 1


def _on_sigterm(signum, frame):
    staging = _state["staging"]
    where = "site/" if staging is None else f"{staging.target.name}/"
    done = (f"{where} holds the new build, which was already in place"
            if staging is not None and staging.swapped else f"{where} is as before")
    sys.stderr.write(f"generator: stopped by SIGTERM: its workers are stopped; {done}\n")
    sys.stderr.flush()
    raise SystemExit(143)  # unwinds like Ctrl-C: workers stopped, the fresh folder removed


def on_startup(command, dirty):
    _state["command"] = command
    if command in ("build", "gh-deploy"):
        lock = _fresh("generator.lock")
        _state["lock"] = lock.BuildLock().acquire()
        _state["warnings"] = _Warnings()
        logging.getLogger("mkdocs").addHandler(_state["warnings"])
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) != signal.SIG_IGN:
            _state["sigterm"] = signal.signal(signal.SIGTERM, _on_sigterm)


# Under `make serve`, an open page says when the site is being rebuilt: a changed script
# recomputes its chapter's runs, which takes seconds to minutes, and MkDocs holds every
# request for a page until the build is done. The page polls BUILDING (answered at once,
# while the build runs) and shows a line at the foot of the screen until the build ends
# and MkDocs' own script reloads it.
BUILDING = "__building"
NOTICE_JS = """(function () {
  var url = %s, shown = null, since = 0;
  function say(seconds) {
    shown.textContent = "Rebuilding the site (" + seconds + " s so far): a page, a script or "
      + "the generator changed, and what depends on it is being recomputed. This page "
      + "reloads by itself when it is done; make serve's output says what it is doing.";
  }
  function poll() {
    fetch(url, {cache: "no-store"}).then(function (r) { return r.json(); }).then(function (s) {
      if (s.building && !shown) {
        since = Date.now();
        shown = document.createElement("p");
        shown.className = "rw-rebuilding";
        shown.setAttribute("role", "status");
        shown.style.cssText = "position:fixed;left:0;right:0;bottom:0;margin:0;z-index:5;"
          + "padding:.6em 1em;background:#1f2329;color:#fff;text-align:center";
        document.body.appendChild(shown);
      } else if (!s.building && shown) {
        shown.remove();
        shown = null;
      }
      if (shown) say(Math.round((Date.now() - since) / 1000));
    }, function () {}).then(function () { setTimeout(poll, 1000); });
  }
  poll();
})();"""


def on_serve(server, config, builder):
    """Under `mkdocs serve`, a path holding a NUL byte (`/%00`) is a page that does not
    exist, 404, like any other; MkDocs' server passes it to open(), whose ValueError was a
    500 and a traceback in the log. BUILDING says whether a build is under way, and every
    page MkDocs serves carries NOTICE_JS beside its own reload script. (Wraps the private
    _serve_request, which says None for "not found", and _inject_js_into_html; mkdocs is
    pinned in requirements.txt.)"""
    import json

    serve, inject = server._serve_request, server._inject_js_into_html
    status = server.mount_path + BUILDING

    def answered(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if "\0" in path:
            return None
        if path == status:  # not held back by the build, unlike every file
            body = json.dumps({"building": server._wanted_epoch != server._visible_epoch})
            start_response("200 OK", [("Content-Type", "application/json"),
                                      ("Cache-Control", "no-store")])
            return [body.encode("utf-8")]
        return serve(environ, start_response)

    def with_notice(content, epoch):
        content = inject(content, epoch)
        at = content.rindex(b"</body>") if b"</body>" in content else len(content)
        script = NOTICE_JS % json.dumps(status)
        return b"%b<script>%b</script>%b" % (content[:at], script.encode("utf-8"), content[at:])

    server._serve_request = answered
    server._inject_js_into_html = with_notice
    return server


def on_shutdown():
    if _state["staging"] is not None:
        _state["staging"].discard()
        _state["staging"] = None
    if _state["sigterm"] is not None:
        signal.signal(signal.SIGTERM, _state["sigterm"])
        _state["sigterm"] = None
    if _state["warnings"] is not None:
        logging.getLogger("mkdocs").removeHandler(_state["warnings"])
        _state["warnings"] = None
    if _state["lock"] is not None:
        _state["lock"].release()
        _state["lock"] = None


def on_config(config):
    pipeline = _fresh("generator.pipeline")
    _state["pipeline"] = pipeline.Pipeline(_state["command"] or "build")
    _state["error"] = pipeline.GeneratorError
    config = _call("on_config", config)
    if _state["lock"] is not None:  # a build: into a fresh folder, never into site/ itself
        if _state["staging"] is not None:
            _state["staging"].discard()
        _state["warnings"].count = 0  # what MkDocs' strict mode counts: this build's
        _state["staging"] = importlib.import_module("generator.lock").Staging(config.site_dir)
        config.site_dir = _state["staging"].begin()
    return config


def on_files(files, config):
    return _call("on_files", files, config)


def on_page_markdown(markdown, page, config, files):
    return _call("on_page_markdown", markdown, page)


@event_priority(-100)  # after every other hook has written its files (the math font)
def on_post_build(config):
    staging = _state["staging"]
    if staging is None:
        return
    if config.strict and _state["warnings"].count:
        return  # MkDocs aborts the build right after this; site/ stays as it was
    try:
        staging.swap()
    except OSError as exc:
        raise _plugin_error(f"cannot put the new site in place of {staging.target}: "
                            f"{exc.strerror or exc}") from None
    config.site_dir = str(staging.target)  # what gh-deploy publishes: the new site/
