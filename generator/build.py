"""`make build`: MkDocs (with the generator hook) into a fresh folder, then swapped
into site/, all or nothing.

The build holds the build lock from start to end, writes into a folder with a
unique name beside the target, and only when MkDocs has finished in strict mode
renames the old site away and the new one into place, with Ctrl-C held back
for those two renames. A failed or interrupted build leaves site/ as it was.
"""

import logging
import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .cache import check_usable, page_cache_dir, run_cache_dir
from .chapter import ROOT, GeneratorError
from .lock import BuildLock
from .pipeline import PAGE_CACHE_SETTING, RUN_CACHE_SETTING

CONFIG = ROOT / "mkdocs.yml"


class _Collect(logging.Handler):
    """Keep MkDocs' warnings and errors, so a failed build can say what failed."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@contextmanager
def _no_interrupt():
    """Hold back Ctrl-C (SIGINT) for a few renames; it is delivered right after."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _leftovers(site):
    return list(site.parent.glob(f".{site.name}.tmp-*")) + \
        list(site.parent.glob(f".{site.name}.old-*"))


def build(site=ROOT / "site", log=print):
    site = Path(site).resolve()
    check_usable(run_cache_dir(), "run cache", RUN_CACHE_SETTING)
    check_usable(page_cache_dir(), "page cache", PAGE_CACHE_SETTING)
    with BuildLock():
        for old in _leftovers(site):  # a build killed hard; no other build runs now
            shutil.rmtree(old, ignore_errors=True)
        site.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{site.name}.tmp-", dir=site.parent))
        try:
            _mkdocs_build(tmp)
            old = site.parent / f".{site.name}.old-{tmp.name.rsplit('-', 1)[-1]}"
            with _no_interrupt():
                if site.exists():
                    os.rename(site, old)
                os.rename(tmp, site)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _mkdocs_build(site_dir):
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material 9.8's end-of-life banner
    os.environ["RNN_EXPLAINER_LOCK_HELD"] = "1"  # the hook must not wait for our own lock
    from mkdocs import config as mkconfig
    from mkdocs.commands import build as mkbuild
    from mkdocs.exceptions import MkDocsException

    collect = _Collect()
    mk_logger = logging.getLogger("mkdocs")
    mk_logger.addHandler(collect)
    try:
        cfg = mkconfig.load_config(config_file=str(CONFIG), site_dir=str(site_dir))
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            mkbuild.build(cfg)
        finally:
            cfg.plugins.on_shutdown()
    except (MkDocsException, SystemExit) as exc:
        ours = [m for m in collect.messages if m.startswith("generator: ")]
        if ours:
            raise GeneratorError(ours[-1][len("generator: "):]) from None
        details = "; ".join(collect.messages[-5:]) or str(exc)
        raise GeneratorError(f"mkdocs build --strict failed: {details}") from None
    finally:
        mk_logger.removeHandler(collect)
        os.environ.pop("RNN_EXPLAINER_LOCK_HELD", None)
