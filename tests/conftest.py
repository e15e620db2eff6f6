"""Fixtures and pytest's hooks. What the test modules share otherwise is in helpers.py."""

import os
import shutil
import uuid
from pathlib import Path

from generator.runs import blas_kernel  # imports no numpy

if blas_kernel():  # the tests' own numpy computes with the kernel the build and scripts use
    os.environ.setdefault("OPENBLAS_CORETYPE", blas_kernel())
# and with one BLAS thread, as the build's workers and a reader's run do: `make test`'s
# three workers on two cores, each with OpenBLAS's two threads, spun against one another
# (a test that trains a small GRU in-process took 145 s instead of 2 s on a busy machine)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest

import helpers
from helpers import CHAPTERS, CHROMIUM, HAVE_TORCH, SITE, StaticServer, launch_chromium

# The PyTorch checks run in their own virtualenv (`make test-torch`); where torch
# is not installed they are not collected at all, and the header says so.
collect_ignore_glob = [] if HAVE_TORCH else ["test_*torch*.py"]


def pytest_report_header(config):
    lines = [f"browser tests: headless Chromium at {CHROMIUM}" if CHROMIUM.exists() else
             f"browser tests: SKIPPED, no Chromium at {CHROMIUM} "
             "(apt-get install chromium; .ci/run installs it)"]
    if not HAVE_TORCH:
        lines.append("PyTorch checks: not here; `make test-torch` runs them with torch 2.13.0")
    lines.append("chapters: " + ", ".join(f"{ch.page} ({ch.script})" for ch in CHAPTERS))
    return lines


# What `make check` leaves out: modules that build copies of the project, serve it, or run
# every notebook and page command as a reader would (minutes each). The rest, the maths,
# the markers, the tables and the scripts' own checks, runs in under two minutes.
SLOW_MODULES = {"test_build_failures", "test_generator", "test_reproducible", "test_serve",
                "test_site_swap", "test_deploy", "test_new_chapter", "test_run_keys",
                "test_notebooks", "test_page_matches_script"}


# Modules whose tests share a costly fixture (a build of a copy, a visit of every page),
# each kept on one worker of `pytest -n` (pytest_xdist_make_scheduler), so that it is made
# once; every other test goes to whichever worker is free.
TOGETHER = {"test_build_failures": "built-project", "test_serve": "built-project",
            "test_browser": "visits", "test_generator": "built-copy",
            "test_deploy": "deployed", "test_new_chapter": "with-toy"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


def unit_of_work(nodeid):
    """What xdist sends to a worker with this test: its module's TOGETHER group, or the
    test alone."""
    return TOGETHER.get(Path(nodeid.split("::", 1)[0]).stem, nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's load scheduling with TOGETHER's modules each sent to one worker whole.
    (Not `--dist loadgroup`: xdist 3.8.0 marks a group by renaming each test's node id,
    which pytest 9.2 no longer lets it do, and the groups are silently ignored.)"""
    from xdist.scheduler import LoadScopeScheduling

    class Together(LoadScopeScheduling):
        _split_scope = staticmethod(unit_of_work)

    return Together(config, log)


def pytest_collection_finish(session):
    """Start the notebooks of the chapters the selected tests check against a reader's run."""
    needed, pages = set(), None
    for item in session.items:
        if item.module.__name__ not in ("test_notebooks", "test_page_matches_script"):
            continue
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if getattr(params.get("ch"), "script", None):
            needed.add(params["ch"].script)
        if isinstance(params.get("page"), str):
            pages = helpers.page_markers() if pages is None else pages
            needed.update(m.script for m in pages.get(params["page"], []))
    chapters = [ch for ch in CHAPTERS if ch.script in needed and (SITE / ch.notebook).is_file()]
    for ch in sorted(chapters, key=helpers.recorded_seconds, reverse=True):
        helpers._pending[ch.script] = helpers._background.submit(helpers.claim_notebook, ch)


def pytest_sessionfinish(session, exitstatus):
    """Runs not started are dropped; a notebook under way is stopped if the session was
    interrupted, else finished (another worker may be waiting for it)."""
    for future in helpers._pending.values():
        future.cancel()
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        for process in list(helpers._processes):
            process.kill()
    helpers._background.shutdown(wait=True)
    if not hasattr(session.config, "workerinput"):  # the controller, or the only process
        shutil.rmtree(helpers.SHARED_RUNS, ignore_errors=True)
        if getattr(session.config.option, "testrunuid", None):
            shutil.rmtree(helpers.shared_runs(session.config.option.testrunuid), ignore_errors=True)


def pytest_configure(config):
    """Under xdist, the id its workers share, chosen here so that the controller knows it
    (to remove their notebook runs when they are done)."""
    if not hasattr(config, "workerinput") and hasattr(config.option, "testrunuid") \
            and config.option.testrunuid is None:
        config.option.testrunuid = uuid.uuid4().hex


# -- fixtures ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def site():
    """The built site; `make test` builds it first."""
    if not (SITE / "index.html").is_file():
        pytest.fail("the site is not built: run `make build` (`make test` does it first)")
    return SITE


@pytest.fixture(scope="session")
def built_project(tmp_path_factory):
    """A copy of the project with the checkout's page cache, built once for the session
    (helpers.build: the copies' fixed SOURCE_DATE_EPOCH). Tests that break or serve a copy
    start from a copy of this one (helpers.copy_built), not from a build of their own."""
    base = helpers.copy_project(tmp_path_factory.mktemp("built-project"))
    result = helpers.build(base)
    assert result.returncode == 0, result.stderr
    return base


@pytest.fixture(scope="session")
def server(site, tmp_path_factory):
    """The built site on a static server at its published base path (/rnn-explainer/, from
    site_url), so that pages whose links MkDocs writes from the site's root, the 404
    page, work as published. One for the session."""
    base = helpers.BASE
    root = tmp_path_factory.mktemp("served")
    (root / base).symlink_to(site)
    srv = StaticServer(root).start()
    srv.url += base + "/"
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser(chromium_path):
    """One headless Chromium for the whole session (Playwright's sync API allows one)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright, chromium_path)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def chromium_path():
    if not CHROMIUM.exists() or shutil.which("chromium") is None:
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    return str(CHROMIUM)
