"""Every way the build can fail: a clear message naming the cause and the place, a
non-zero exit, no traceback, and the previous site/ left exactly as it was.

The build's stages each fail end to end at least once here: a copy of the built
project (conftest.built_project, with the real page cache, so only what the test
breaks is recomputed) is broken in one place and built again. Where a stage can
fail in several ways, the others are tested on the function that raises, with
the message the build prints (that a GeneratorError from that stage becomes one
line, exit 1 and an unchanged site/ is the end-to-end test's): the in-process
tests at the end of this file, and test_markers.py for the markers. Each row of
the failure table in docs/building.md is one of these tests.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT  # noqa: F401
from helpers import build, copy_built, edit, tree_digest


@pytest.fixture
def project(built_project, tmp_path):
    """A fresh copy of the session's built project (conftest.built_project) to break."""
    return copy_built(built_project, tmp_path / "project")


def fails_cleanly(project, message, status=1, env=None):
    """Build; expect failure with `message` in stderr and site/ unchanged."""
    before = tree_digest(project / "site")
    result = build(project, env=env)
    assert result.returncode == status, result.stdout + result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert tree_digest(project / "site") == before, "a failed build changed site/"
    leftovers = [p.name for p in project.iterdir() if p.name.startswith(".site.")]
    assert leftovers == [], leftovers
    return result


def test_malformed_marker(project):
    edit(project / "docs" / "ch12-rnn.md", "<!-- gen table decay from rnn.py --vanish -->",
         "<!-- gen table decay rnn.py --vanish -->")
    result = fails_cleanly(project, "docs/ch12-rnn.md:")
    assert "malformed marker '<!-- gen table decay rnn.py --vanish -->'" in result.stderr


def test_script_that_raises(project):
    edit(project / "docs" / "code" / "rnn.py", '    """factor ** distance for every pair',
         '    raise ZeroDivisionError("broken on purpose")\n    """factor ** distance')
    fails_cleanly(project, "docs/code/rnn.py: `python3 rnn.py --vanish` failed: "
                           "ZeroDivisionError: broken on purpose (at docs/code/rnn.py:")


def test_plot_that_fails(project):
    legend = '        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.08))'
    edit(project / "generator" / "chapters" / "ch13_gated.py", legend,
         f"{legend}\n        raise ValueError('no room for the legend')")
    fails_cleanly(project, "generator/chapters/ch13_gated.py: figure highway failed: "
                           "ValueError: no room for the legend (at generator/chapters/ch13_gated.py:")


def test_chapter_module_edited_while_its_pages_are_computed(project):
    """A chapter module saved while the worker computes its pages (here: it rewrites itself
    as it is imported) fails the build, rather than caching old output under the new
    file's hash."""
    module = project / "generator" / "chapters" / "ch13_gated.py"
    edit(module, "import math\n", "import math\nfrom pathlib import Path\n"
         "Path(__file__).write_text(Path(__file__).read_text() + '# saved again\\n')\n")
    fails_cleanly(project, "generator/chapters/ch13_gated.py changed while its pages were "
                           "computed: build again")


def test_served_record_whose_usage_fails(project):
    """The lines the code page shows under a served file run at build time: broken, they
    stop the build, naming the file and the error."""
    edit(project / "generator" / "chapters" / "ch14_gru_lm.py",
         "print(gru.predict(params, 'gru', 'it has', 20))",
         "print(gru.predict(params, 'gru', 'it has', 20, 0.5))")
    fails_cleanly(project, "generator/chapters/ch14_gru_lm.py: the usage of code/gru-trained.json "
                           "failed: AttributeError: 'NoneType' object has no attribute 'random'")


def test_plot_whose_labels_collide(project):
    """The check of every plot's labels (plotstyle.layout_problems) refuses chapter 13's
    parameter chart with its old seven-digit ticks, which ran together at 1280 px."""
    edit(project / "generator" / "chapters" / "ch13_gated.py",
         'FuncFormatter(lambda v, _: f"{v / 1e6:g}")', 'FuncFormatter(lambda v, _: f"{v:,.0f}")')
    result = fails_cleanly(project, "generator/chapters/ch13_gated.py: figure params: labels "
                                    "collide in the desktop variant (1037 px wide, light): ")
    assert "x tick label '1,000,000' and the axes's x tick label '1,200,000' run together" \
        in result.stderr, result.stderr


def test_chapter_module_that_does_not_import(project):
    edit(project / "generator" / "chapters" / "ch12_rnn.py", "CHAPTER = Chapter(",
         "x = 1 / 0\nCHAPTER = Chapter(")
    fails_cleanly(project, "generator/chapters/ch12_rnn.py:")
    assert "failed to import: ZeroDivisionError" in build(project).stderr


def test_missing_dependency(project, tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    edit(project / "generator" / "chapters" / "ch12_rnn.py", '"""Chapter 12',
         '"""Chapter 12 (changed)')
    fails_cleanly(project, "needs the Python package matplotlib, which is not installed",
                  env={"PYTHONPATH": str(fake)})


def test_broken_link_fails_the_strict_build(project):
    edit(project / "docs" / "index.md", "[conventions page](conventions.md)",
         "[conventions page](no-such-page.md)")
    fails_cleanly(project, "mkdocs build --strict failed")


def test_page_not_utf8(project):
    path = project / "docs" / "conventions.md"
    path.write_bytes(path.read_bytes() + b"\n\xff\xfe caf\xe9\n")
    fails_cleanly(project, "docs/conventions.md: not UTF-8")


def test_file_name_not_utf8(project):
    (project / "docs" / os.fsdecode(b"notes-\xff.md")).write_text("# Notes\n", "utf-8")
    fails_cleanly(project, "docs/notes-\\xff.md: the file name is not UTF-8; rename it")


def test_missing_corpus(project):
    (project / "docs" / "code" / "timemachine.txt").unlink()
    fails_cleanly(project, "names docs/code/timemachine.txt, which does not exist")


def test_page_cache_that_is_not_a_directory(project):
    shutil.rmtree(project / "build" / "cache")
    (project / "build" / "cache").write_text("not a folder")
    result = fails_cleanly(project, "the page cache")
    assert "is not a directory" in result.stderr


def test_run_cache_that_cannot_be_written(project, tmp_path):
    if os.geteuid() == 0:  # root writes anywhere: make it a file instead of a folder
        blocked = tmp_path / "run-cache"
        blocked.write_text("a file")
        message = "is not a directory"
    else:
        blocked = tmp_path / "run-cache"
        blocked.mkdir()
        blocked.chmod(0o500)
        message = "cannot be written"
    edit(project / "docs" / "code" / "rnn.py", "CLIP_THRESHOLD = 5.0", "CLIP_THRESHOLD = 4.5")
    started = time.perf_counter()
    result = fails_cleanly(project, "the run cache", env={"RNN_EXPLAINER_CACHE": str(blocked)})
    assert message in result.stderr and "RNN_EXPLAINER_CACHE" in result.stderr
    assert "computing" not in result.stderr  # said before the expensive work
    assert time.perf_counter() - started < 30


def ctrl_c_as_in_a_terminal():
    """SIGINT back to its default in the build: a test run started in the background by a
    shell without job control (as CI may be) inherits it ignored, and then Python installs
    no KeyboardInterrupt handler at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def workers_of(proc):
    """The pids of the generator's workers in proc's session (it started one of its own)."""
    return subprocess.run(["pgrep", "-f", "generator.worker", "-s", str(proc.pid)],
                          capture_output=True, text=True).stdout.split()


def wait_until_gone(proc, seconds):
    deadline = time.monotonic() + seconds
    while workers_of(proc) and time.monotonic() < deadline:
        time.sleep(0.1)
    return workers_of(proc)


def build_with_a_sleeping_worker(project, seconds=60):
    """`python -m generator build` in its own session, returned once rnn.py's worker is
    asleep inside `python3 rnn.py --vanish`."""
    edit(project / "docs" / "code" / "rnn.py", '    """factor ** distance for every pair',
         f'    import time; time.sleep({seconds})\n    """factor ** distance')
    proc = subprocess.Popen([sys.executable, "-m", "generator", "build"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=ctrl_c_as_in_a_terminal,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    deadline = time.monotonic() + 60
    while not workers_of(proc) and time.monotonic() < deadline:  # wait until the worker runs
        time.sleep(0.1)
    assert workers_of(proc), "no worker started"
    time.sleep(1.5)  # past its imports, into the script
    return proc


def test_interrupted_build(project):
    """Ctrl-C while a worker computes: the usual line, no traceback, site/ unchanged."""
    before = tree_digest(project / "site")
    proc = build_with_a_sleeping_worker(project)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "generator: interrupted: the site is as before" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert tree_digest(project / "site") == before


def test_terminated_build(project):
    """SIGTERM to the build alone (as a service manager or `kill` sends it): one line, exit
    143, its worker stopped with it, site/ unchanged."""
    before = tree_digest(project / "site")
    proc = build_with_a_sleeping_worker(project)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    said = [line for line in err.splitlines() if "SIGTERM" in line]
    assert said == ["generator: stopped by SIGTERM: its workers are stopped; site/ is as "
                    "before"], err
    assert "Traceback" not in err, err
    assert wait_until_gone(proc, 10) == [], "a worker outlived the build"
    assert tree_digest(project / "site") == before
    assert [p.name for p in project.iterdir() if p.name.startswith(".site.")] == []


def test_killed_build(project):
    """SIGKILL to the build alone: nothing can run in it, yet its worker stops (it watches
    a pipe only the build holds), site/ is unchanged, and the next build removes the
    half-built folder the killed one left."""
    before = tree_digest(project / "site")
    script = project / "docs" / "code" / "rnn.py"
    original = script.read_bytes()
    proc = build_with_a_sleeping_worker(project, seconds=120)
    proc.kill()
    proc.communicate(timeout=60)
    assert wait_until_gone(proc, 10) == [], "a worker outlived the killed build"
    assert tree_digest(project / "site") == before
    assert [p.name for p in project.iterdir() if p.name.startswith(".site.tmp-")] != []
    script.write_bytes(original)
    result = build(project)
    assert result.returncode == 0, result.stderr
    assert tree_digest(project / "site") == before
    assert [p.name for p in project.iterdir() if p.name.startswith(".site.")] == []


def test_script_that_hangs(project):
    """A worker past its time limit is stopped, and says so every quarter of the limit
    (every minute with the default of 30 minutes) until then."""
    edit(project / "docs" / "code" / "rnn.py", '    """factor ** distance for every pair',
         '    import time; time.sleep(600)\n    """factor ** distance')
    before = tree_digest(project / "site")
    started = time.monotonic()
    result = build(project, env={"RNN_EXPLAINER_WORKER_TIMEOUT": "15"}, timeout=180)
    assert time.monotonic() - started < 120
    assert result.returncode == 1, result.stderr
    assert "generator: error: docs/code/rnn.py: its pages took longer than 15 s, the limit for " \
           "one script's pages, running `python3 rnn.py --vanish`: stopped. If they need " \
           "longer, set RNN_EXPLAINER_WORKER_TIMEOUT" in result.stderr
    assert "generator: still computing rnn.py's pages after " in result.stderr
    assert "the limit is 15 s (RNN_EXPLAINER_WORKER_TIMEOUT)" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree_digest(project / "site") == before


def test_worker_timeout_that_is_not_a_number(project):
    result = fails_cleanly(project, "RNN_EXPLAINER_WORKER_TIMEOUT='soon': give the seconds",
                           env={"RNN_EXPLAINER_WORKER_TIMEOUT": "soon"})
    assert "computing" not in result.stderr


def test_nan_in_a_table(project):
    """A table cell that is not a finite number, in a column of numbers, is not published."""
    edit(project / "docs" / "code" / "rnn.py", 'f"{e.survives:.6e}"',
         'f"{e.survives * float(\'nan\'):.6e}"')
    fails_cleanly(project, "docs/code/rnn.py: `python3 rnn.py --vanish` prints table 'example' "
                           "with 'nan' in column 'factor^47', row 1 (per-step factor 0.01): a "
                           "table on the site shows finite numbers only")


def test_plain_mkdocs_build_that_fails(project):
    """`mkdocs build` alone (which empties its site_dir before it builds) leaves site/ whole."""
    edit(project / "docs" / "index.md", "[conventions page](conventions.md)",
         "[conventions page](no-such-page.md)")
    before = tree_digest(project / "site")
    mkdocs = os.path.join(os.path.dirname(sys.executable), "mkdocs")
    result = subprocess.run([mkdocs, "build"], cwd=project, capture_output=True, text=True,
                            timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 1, result.stderr
    assert "Aborted with 1 warnings in strict mode!" in result.stdout + result.stderr
    assert tree_digest(project / "site") == before
    assert [p.name for p in project.iterdir() if p.name.startswith(".site.")] == []


def test_bug_in_the_generator(project):
    """An exception the generator did not expect: one line naming its place in generator/,
    and the truth about site/."""
    edit(project / "generator" / "pipeline.py", "        pages = self._pages(files)\n",
         "        pages = self._pages(files)\n        {}['injected']\n")
    result = fails_cleanly(project, "generator: error: unexpected KeyError: 'injected' (at "
                                    "generator/pipeline.py:")
    assert "in on_files), a bug in the generator (run with --traceback for details)\n" \
           "generator: nothing was changed: the site is as before" in result.stderr


def test_bug_in_the_generator_inside_a_worker(project):
    edit(project / "generator" / "worker.py", '    name = job["script"]\n',
         '    name = job["script"]\n    {}["injected"]\n')
    result = fails_cleanly(project, "failed in the generator itself: KeyError: 'injected' (at "
                                    "generator/worker.py:")
    assert "generator: error: the worker for docs/code/" in result.stderr
    assert "generator: nothing was changed: the site is as before" in result.stderr


def test_interrupted_just_after_the_swap_says_so(project):
    """Ctrl-C held back during the swap lands right after it: the new site is in place,
    and the message says that, not "as before"."""
    edit(project / "docs" / "conventions.md", "# GRU conventions, side by side",
         "# GRU conventions, compared")
    edit(project / "generator" / "lock.py", "            self.swapped = True\n",
         "            self.swapped = True\n            os.kill(os.getpid(), signal.SIGINT)\n")
    result = subprocess.run([sys.executable, "-m", "generator", "build"], cwd=project,
                            capture_output=True, text=True, timeout=600,
                            preexec_fn=ctrl_c_as_in_a_terminal,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 130, result.stderr
    assert "generator: interrupted: site/ holds the new build, which was already in place" \
        in result.stderr
    html = (project / "site" / "conventions" / "index.html").read_text("utf-8")
    assert "GRU conventions, compared" in html
    assert [p.name for p in project.iterdir() if p.name.startswith(".site.")] == []


def test_unknown_flag_of_the_generator(project):
    result = build(project, "--fast")
    assert result.returncode == 2 and "unrecognized arguments: --fast" in result.stderr


def test_a_good_build_after_a_failure_replaces_the_site(project):
    edit(project / "docs" / "conventions.md", "# GRU conventions, side by side",
         "# GRU conventions, compared")
    result = build(project)
    assert result.returncode == 0, result.stderr
    html = (project / "site" / "conventions" / "index.html").read_text("utf-8")
    assert "GRU conventions, compared" in html


EDITOR_FILES = ("ch12-rnn.md~", "#ch12-rnn.md#", "ch12-rnn.md.swp", "code/rnn.py.swx",
                "code/rnn.py.swo", "4913", "code/#rnn.py#", "code/.#rnn.py")  # and .#ch12-rnn.md


def test_editor_files_and_dangling_symlink_in_docs_are_ignored(project):
    """Editors' backups, autosaves, swap and probe files (vim's 4913) and lock symlinks
    are neither built nor published; nor is a symlink to a deleted page."""
    (project / "docs" / ".#ch12-rnn.md").symlink_to("root@host.1234:1700000000")  # emacs
    for name in EDITOR_FILES:
        (project / "docs" / name).write_text("# an editor's file\n", "utf-8")
    (project / "docs" / "old-page.md").symlink_to(project / "docs" / "deleted.md")
    result = build(project)
    assert result.returncode == 0, result.stderr
    assert not (project / "site" / "old-page").exists()
    published = [p.relative_to(project / "site").as_posix()
                 for p in (project / "site").rglob("*")]
    leaked = [p for p in published if p.rsplit("/", 1)[-1] in
              {Path(n).name for n in EDITOR_FILES} | {".#ch12-rnn.md"}
              or p.endswith(("~", ".swp", ".swx", ".swo")) or "#" in p]
    assert leaked == [], leaked
    assert "code/rnn.py" in published  # what they sit beside still is


def test_serve_on_a_port_in_use_says_so_before_building(project):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "generator", "serve", "--port",
                                 str(port)], cwd=project, capture_output=True, text=True,
                                timeout=60)
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert "computing" not in result.stderr and "Building" not in result.stderr


# -- one stage, in process: the function that raises, with the build's message -------------

@pytest.fixture
def scripts(tmp_path, monkeypatch):
    """A copy of docs/code/ in a project folder of its own, which generator.contract loads
    scripts from; returns its docs/code folder."""
    from generator import contract, runs

    code = tmp_path / "docs" / "code"
    shutil.copytree(ROOT / "docs" / "code", code)
    monkeypatch.setattr(contract, "CODE", code)
    monkeypatch.setattr(runs, "CODE", code)
    monkeypatch.setattr(runs, "ROOT", tmp_path)
    return code


def stage_error(func, *args):
    from generator.chapter import GeneratorError

    with pytest.raises(GeneratorError) as caught:
        func(*args)
    return str(caught.value)


def cached_run(name, *argv):
    from generator import contract, runs
    from generator.cache import RunCache

    return runs.run_command(contract.load_script(name), name, argv, (), RunCache())


def test_unknown_table():
    from generator import worker

    marker = {"kind": "table", "name": "bais", "fmt": None}
    said = stage_error(worker.run_fragment, marker, cached_run("gated.py", "--bias"),
                       "docs/ch13-gated.md:77")
    assert said == "docs/ch13-gated.md:77: `python3 gated.py --bias` prints no table 'bais' " \
                   "(it prints: bias)"


def test_unknown_value():
    from generator import worker

    marker = {"kind": "value", "name": "spectral_radious", "fmt": ".4f"}
    said = stage_error(worker.run_fragment, marker, cached_run("rnn.py", "--vanish"),
                       "docs/ch12-rnn.md:132")
    assert said.startswith("docs/ch12-rnn.md:132: ")
    assert "has no field 'spectral_radious' (it has: decay, distance, example" in said


def test_unknown_report_names_the_valid_ones():
    from generator import contract, runs

    said = stage_error(runs._compute, contract.load_script("rnn.py"), "rnn.py", ("--vanihs",),
                       "python3 rnn.py --vanihs")
    assert said.startswith("`python3 rnn.py --vanihs` is not a command rnn.py accepts: ")
    assert "unrecognized arguments: --vanihs" in said
    assert "(its reports: --unroll, --params, --vanish, --clip, --measure" in said


def test_script_that_calls_sys_exit(scripts):
    from generator import contract, runs

    edit(scripts / "rnn.py", '    """factor ** distance for every pair',
         '    sys.exit(3)\n    """factor ** distance')
    said = stage_error(runs._compute, contract.load_script("rnn.py"), "rnn.py", ("--vanish",),
                       "python3 rnn.py --vanish")
    assert said == "docs/code/rnn.py: `python3 rnn.py --vanish` called sys.exit(3); a report " \
                   "returns its record and lets main() decide the exit status"


def test_script_that_does_not_import(scripts):
    from generator import contract

    edit(scripts / "gated.py", "import argparse", "import argparse as")
    said = stage_error(contract.load_script, "gated.py")
    assert said.startswith("docs/code/gated.py: failed to import: SyntaxError: ")
    assert said.endswith(")") and "(at " not in said  # the line is in SyntaxError's own words


def test_script_that_exits_when_imported(scripts):
    from generator import contract

    path = scripts / "gated.py"
    path.write_text(path.read_text("utf-8") + "\nsys.exit(3)\n", "utf-8")
    assert stage_error(contract.load_script, "gated.py") == \
        "docs/code/gated.py: calls sys.exit(3) when imported; keep it behind " \
        "`if __name__ == \"__main__\":`"


def test_script_without_a_docstring(scripts):
    from generator import contract

    path = scripts / "gated.py"
    text = path.read_text("utf-8")
    path.write_text(text[text.index('"""', 3) + 3:], "utf-8")
    assert stage_error(contract.load_script, "gated.py").startswith(
        "docs/code/gated.py: has no docstring starting 'gated.py: '")


IN_OTHER_FILES = {"unknown_figure": "test_markers.py::test_unknown_producer_names_the_marker_"
                                    "and_the_alternatives",
                  "unused_figure": "test_markers.py::test_unused_producer_fails"}


def test_failure_table_lists_every_test_here():
    """docs/building.md's failure table has one row per test of this file, and each of its
    rows names a test that exists (here, or in the file IN_OTHER_FILES names)."""
    table = (ROOT / "docs" / "building.md").read_text("utf-8")
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M)
    names = [n for n in globals() if n.startswith("test_") and n not in (
        "test_failure_table_lists_every_test_here",
        "test_a_good_build_after_a_failure_replaces_the_site")]
    missing = [n for n in names if n[5:] not in rows]
    assert not missing, f"docs/building.md's failure table does not list: {missing}"
    for row in rows:
        if "test_" + row in globals():
            continue
        assert row in IN_OTHER_FILES, f"the failure table's `{row}` names no test"
        module, test = IN_OTHER_FILES[row].split("::")
        assert f"def {test}(" in (ROOT / "tests" / module).read_text("utf-8"), row
