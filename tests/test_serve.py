"""`make serve` (mkdocs serve with the generator hook) in a copy of the project: the page
follows an edit of a script constant, a failing edit keeps the last good page and
says why, and an open page reloads by itself after a prose edit."""

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from helpers import copy_built, edit


EDITOR_FILES = ("ch12-rnn.md~", "#ch12-rnn.md#", "ch12-rnn.md.swp", "code/rnn.py.swx", "4913",
                ".#ch12-rnn.md")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except OSError:
        return None


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"{what} did not happen within {timeout} s")


@pytest.fixture(scope="module")
def served(built_project, tmp_path_factory):
    """`python -m generator serve` (what `make serve` runs) on a free port in a copy with a
    warm page cache (conftest.built_project)."""
    copy = copy_built(built_project, tmp_path_factory.mktemp("serve") / "project")
    for name in EDITOR_FILES:  # what an editor leaves beside the pages it has open
        (copy / "docs" / name).write_text("# an editor's file\n", "utf-8")
    port = free_port()
    log = open(copy / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--port", str(port)],
                            cwd=copy, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                                 "PYTHONDONTWRITEBYTECODE": "1"})
    base = f"http://127.0.0.1:{port}/rnn-explainer/"
    wait_for(lambda: fetch(base + "ch12-rnn/"), 120, "the first build")
    yield copy, base, proc
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_editor_files_are_not_served(served):
    copy, base, _ = served
    assert fetch(base + "code/rnn.py") and fetch(base + "ch12-rnn/")  # what they sit beside
    served_anyway = [name for name in EDITOR_FILES
                     if fetch(base + urllib.parse.quote(name)) is not None]
    assert served_anyway == []


def clip_threshold_shown(html):
    found = re.search(r"Clipping at ([0-9.]+) \(dashed\)", html or "")
    return found.group(1) if found else None


def test_an_error_under_serve_says_why_and_recovers_after_the_fix(served):
    """A failing rebuild prints the generator's one-line message; MkDocs then holds the
    page back (it "appears stuck", as mkdocs serve does) until the next good build."""
    copy, base, _ = served
    module = copy / "generator" / "chapters" / "ch12_rnn.py"
    good = module.read_text("utf-8")
    log = copy / "serve.log"
    start = log.stat().st_size
    edit(module, "    clipping = ctx.record(\"--clip\")",
         "    clipping = ctx.record(\"--clip\")\n    1 / 0")
    wait_for(lambda: "figure clip failed: ZeroDivisionError" in log.read_text("utf-8")[start:],
             60, "the error in serve's output")
    after_error = log.stat().st_size
    module.write_text(good, "utf-8")
    wait_for(lambda: "Reloading browsers" in log.read_text("utf-8")[after_error:], 60,
             "a good rebuild after the fix")
    assert "Traceback" not in log.read_text("utf-8")[start:]
    assert clip_threshold_shown(fetch(base + "ch12-rnn/"))


@contextlib.contextmanager
def open_page(browser, url):
    """The page at url, loaded in a context of its own, closed afterwards."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        yield page
    finally:
        context.close()


@pytest.mark.browser
def test_an_open_page_reloads_by_itself_after_a_prose_edit(served, browser):
    """The open page shows the new sentence without a reader's reload, and the rebuild
    recomputed no chapter: prose is not an input of any chapter's pages. (Not a bound on
    the seconds it took, which a busy machine stretched past 15.)"""
    copy, base, _ = served
    log = copy / "serve.log"
    with open_page(browser, base + "ch13-gated/") as page:
        assert "A sentence added while serving" not in page.content()
        start = log.stat().st_size
        edit(copy / "docs" / "ch13-gated.md", "## 13.1", "A sentence added while serving.\n\n## 13.1")
        page.wait_for_function(
            "document.body.innerText.includes('A sentence added while serving')", timeout=90_000)
    rebuilt = log.read_text("utf-8")[start:]
    assert "Building documentation" in rebuilt or "Reloading browsers" in rebuilt, rebuilt
    assert "generator: computing" not in rebuilt, rebuilt


def building(base):
    text = fetch(base + "__building")
    return None if text is None else json.loads(text)["building"]


@pytest.fixture(scope="module")
def script_edit(served, browser):
    """One edit of rnn.py under serve, watched from an open page and from __building: the
    page before, the build under way, the notice on the open page, the build done, the page
    after. (A script's edit recomputes its chapter, about 30 s here: three tests read this
    one rebuild instead of making three.)"""
    copy, base, _ = served
    seen = {"before": fetch(base + "ch12-rnn/"), "building_before": building(base)}
    with open_page(browser, base + "ch12-rnn/") as page:
        seen["notice_before"] = page.locator(".rw-rebuilding").count()
        edit(copy / "docs" / "code" / "rnn.py", "CLIP_THRESHOLD = 5.0", "CLIP_THRESHOLD = 2.5")
        seen["building_during"] = wait_for(lambda: building(base) is True, 30,
                                           "__building saying a build is under way")
        notice = page.locator("p.rw-rebuilding[role=status]")
        notice.wait_for(state="visible", timeout=30_000)
        seen["notice"] = notice.inner_text()
        notice.wait_for(state="detached", timeout=180_000)  # the build done, the page reloaded
        page.wait_for_load_state("load")
        seen["reloaded"] = (page.url, page.locator("h1").count(),
                            clip_threshold_shown(page.content()))
    wait_for(lambda: building(base) is False, 180, "__building saying the build is done")
    seen["after"] = fetch(base + "ch12-rnn/")
    seen["script"] = fetch(base + "code/rnn.py")
    return seen


@pytest.mark.browser
def test_a_script_edit_under_serve_reaches_the_page(script_edit):
    assert clip_threshold_shown(script_edit["before"]) == "5"
    assert clip_threshold_shown(script_edit["after"]) == "2.5"
    assert ">2.5000</td>" in script_edit["after"]  # the table, not only the caption
    assert "CLIP_THRESHOLD = 2.5" in script_edit["script"]


@pytest.mark.browser
def test_serve_says_while_it_rebuilds_and_when_it_is_done(script_edit):
    """Issue 27, edge 10: a script's edit recomputes its chapter (seconds to minutes), and
    MkDocs holds every page until then; __building answers at once, and every page carries
    the script that shows it."""
    assert script_edit["building_before"] is False
    assert "__building" in script_edit["before"] and "rw-rebuilding" in script_edit["before"]
    assert script_edit["building_during"] is True
    assert script_edit["after"]  # and __building said False once it was done (the fixture)


@pytest.mark.browser
def test_an_open_page_shows_the_rebuild_and_then_reloads(script_edit):
    assert script_edit["notice_before"] == 0
    assert "Rebuilding the site" in script_edit["notice"]
    url, headings, threshold = script_edit["reloaded"]
    assert "ch12-rnn" in url and headings == 1
    assert threshold == "2.5"  # the reloaded page is the new one
