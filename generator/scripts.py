"""Load the served scripts by path and run them as a reader would.

The scripts in ``docs/code/`` are standalone files, not a package: the
generator imports each one from its path (so it uses exactly the bytes the site
serves) and calls its functions, or its ``main(argv)`` with output captured,
which is what ``python3 <script> <args>`` prints.
"""

import contextlib
import importlib.util
import io
import shlex

from .registry import DOCS, GeneratorError

_loaded = {}


def load_script(relpath):
    """The script at docs/<relpath> as a module, loaded once per process."""
    path = DOCS / relpath
    if relpath not in _loaded:
        if not path.is_file():
            raise GeneratorError(f"docs/{relpath}: script not found")
        name = "site_script_" + path.stem
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a script that fails to import is a build failure
            raise GeneratorError(f"docs/{relpath}: failed to import: "
                                 f"{type(exc).__name__}: {exc}") from exc
        _loaded[relpath] = module
    return _loaded[relpath]


def run_main(script, command):
    """What `command` (e.g. "python3 rnn.py --vanish") prints: the script's main(argv)
    called in-process with stdout captured. A non-zero status is an error."""
    argv = shlex.split(command)[2:]  # drop "python3 rnn.py"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = script.main(argv)
        except SystemExit as exc:  # argparse exits on a bad flag
            status = exc.code
    if status not in (0, None):
        raise GeneratorError(f"`{command}` exited with status {status}: "
                             f"{err.getvalue().strip() or 'no message'}")
    return out.getvalue()
