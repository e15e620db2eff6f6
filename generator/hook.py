"""The MkDocs hook that runs the generator (mkdocs.yml: `hooks: [generator/hook.py]`).

`mkdocs build`, `mkdocs serve`, `mkdocs gh-deploy` and `make build` all go
through here. MkDocs loads a hook file once per process, and the modules it
imports stay loaded; so at the start of every build this shim drops every
`generator.*` module and imports the pipeline afresh: under `mkdocs serve`, an
edit to any generator module takes effect at the next rebuild. (The numbers
themselves are computed in fresh worker processes, see worker.py.) The site's
own markers, the home page's list of chapters and each chapter's run-it lines,
are filled from the registry by generator/site.py.

A `mkdocs build` or `gh-deploy` takes the build lock (build/.lock) for its
whole run, so it never writes site/ while another build does; `make build`
holds the lock itself and says so in RNN_EXPLAINER_LOCK_HELD.
"""

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True  # no __pycache__ in watched folders: it would trigger rebuilds

_state = {"command": None, "pipeline": None, "site": None, "lock": None}


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
    """Call the pipeline (see _guarded)."""
    return _guarded(getattr(_state["pipeline"], method), *args)


def _guarded(func, *args):
    """func(*args); a GeneratorError becomes MkDocs' PluginError (one line, no traceback)."""
    try:
        return func(*args)
    except Exception as exc:
        if type(exc).__name__ == "GeneratorError":
            raise _plugin_error(exc) from None
        raise


def on_startup(command, dirty):
    _state["command"] = command
    if command in ("build", "gh-deploy") and not os.environ.get("RNN_EXPLAINER_LOCK_HELD"):
        lock = _fresh("generator.lock").BuildLock()
        lock.acquire()
        _state["lock"] = lock


def on_shutdown():
    if _state["lock"] is not None:
        _state["lock"].release()
        _state["lock"] = None


def on_config(config):
    pipeline = _fresh("generator.pipeline")
    _state["pipeline"] = pipeline.Pipeline(_state["command"] or "build")
    return _call("on_config", config)


def on_files(files, config):
    # The site's markers first: they are checked in a moment, the chapters' take workers.
    site, pipeline = importlib.import_module("generator.site"), _state["pipeline"]
    _state["site"] = _guarded(lambda: site.Site(pipeline.chapters, pipeline.colab,
                                                pipeline._pages(files)))
    return _call("on_files", files, config)


def on_page_markdown(markdown, page, config, files):
    markdown = _guarded(_state["site"].fill, page.file.src_uri, markdown)
    return _call("on_page_markdown", markdown, page)
