"""Every way the build can fail: a clear message naming the cause, a non-zero exit,
and the previous build/docs and site/ left exactly as they were.

Each test builds a copy of the project (with the real build cache, so only what
the test breaks is recomputed), breaks one thing, builds again and compares.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

COPIED = ("docs", "generator", "mkdocs.yml", "requirements.txt")


def tree_digest(folder):
    """One hash over every file's path and bytes below folder."""
    h = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def build(project, *args, env=None):
    return subprocess.run([sys.executable, "-m", "generator", "build", *args], cwd=project,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})})


@pytest.fixture(scope="module")
def built_copy(tmp_path_factory):
    """A copy of the project, built once; each test gets a fresh copy of that."""
    base = tmp_path_factory.mktemp("project")
    for name in COPIED:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, base / name)
    if (ROOT / "build" / "cache").is_dir():
        shutil.copytree(ROOT / "build" / "cache", base / "build" / "cache")
    result = build(base)
    assert result.returncode == 0, result.stderr
    return base


@pytest.fixture
def project(built_copy, tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(built_copy, copy, symlinks=True)
    return copy


def edit(path, old, new):
    text = path.read_text("utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), "utf-8")


def fails_cleanly(project, message, status=1, env=None):
    """Build; expect failure with `message` in stderr and nothing changed."""
    before = tree_digest(project / "site"), tree_digest(project / "build" / "docs")
    result = build(project, env=env)
    assert result.returncode == status, result.stdout + result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    after = tree_digest(project / "site"), tree_digest(project / "build" / "docs")
    assert after == before, "a failed build changed site/ or build/docs"
    leftovers = [p.name for p in (project / "build").iterdir() if p.name.endswith((".tmp", ".old"))]
    assert leftovers == [] and not (project / "site.tmp").exists()
    return result


def test_malformed_marker(project):
    edit(project / "docs" / "ch12-rnn.md", "<!-- gen ch12_rnn.decay_table -->",
         "<!-- gen ch12_rnn decay_table -->")
    fails_cleanly(project, "docs/ch12-rnn.md:")
    result = build(project)
    assert "malformed marker '<!-- gen ch12_rnn decay_table -->'" in result.stderr


def test_unknown_marker(project):
    edit(project / "docs" / "ch13-gated.md", "<!-- gen ch13_gated.bias_table -->",
         "<!-- gen ch13_gated.bias_tabel -->")
    fails_cleanly(project, "unknown marker <!-- gen ch13_gated.bias_tabel -->")


def test_unused_producer(project):
    edit(project / "docs" / "ch12-rnn.md", "<!-- gen ch12_rnn.clip_plot -->", "")
    fails_cleanly(project, "unused producer(s) of generator/ch12_rnn.py: "
                           "<!-- gen ch12_rnn.clip_plot -->")


def test_script_that_raises(project):
    edit(project / "docs" / "code" / "rnn.py", '    """factor ** distance for every pair',
         '    raise ZeroDivisionError("broken on purpose")\n    """factor ** distance')
    fails_cleanly(project, "generator/ch12_rnn.py: producer decay_table failed: "
                           "ZeroDivisionError: broken on purpose")


def test_script_that_does_not_import(project):
    edit(project / "docs" / "code" / "gated.py", "import argparse", "import argparse as")
    fails_cleanly(project, "docs/code/gated.py: failed to import: SyntaxError")


def test_plot_that_fails(project):
    edit(project / "generator" / "ch13_gated.py", "        ax.set_ylim(1e-30, 3)",
         "        ax.set_ylim(1e-30, 3)\n        raise ValueError('no room for the legend')")
    fails_cleanly(project, "generator/ch13_gated.py: producer highway_plot failed: "
                           "ValueError: no room for the legend")


def test_missing_dependency(project, tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    edit(project / "generator" / "ch12_rnn.py", '"""Chapter 12', '"""Chapter 12 (changed)')
    fails_cleanly(project, "needs the Python package matplotlib, which is not installed",
                  env={"PYTHONPATH": str(fake)})


def test_interrupted_build(project):
    edit(project / "generator" / "ch12_rnn.py", "    rows = _clipping(ctx)\n",
         "    import os, signal\n    os.kill(os.getpid(), signal.SIGINT)\n"
         "    rows = _clipping(ctx)\n")
    fails_cleanly(project, "interrupted: build/docs and the site are as before", status=130)


def test_broken_link_fails_the_strict_build(project):
    edit(project / "docs" / "index.md", "[conventions page](conventions.md)",
         "[conventions page](no-such-page.md)")
    fails_cleanly(project, "mkdocs build --strict failed")


def test_page_not_utf8(project):
    path = project / "docs" / "conventions.md"
    path.write_bytes(path.read_bytes() + b"\n\xff\xfe caf\xe9\n")
    fails_cleanly(project, "docs/conventions.md: not UTF-8")


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


def test_missing_corpus(project):
    (project / "docs" / "code" / "timemachine.txt").unlink()
    fails_cleanly(project, "docs/code/timemachine.txt: cannot read: No such file or directory "
                           "(generator/ch14_gru_lm.py needs it)")


def test_corpus_that_is_not_utf8(project):
    corpus = project / "docs" / "code" / "timemachine.txt"
    corpus.write_bytes(corpus.read_bytes()[:5000] + b"\xff\xfe\x00 caf\xe9\n")
    result = fails_cleanly(project, "docs/code/timemachine.txt: cannot read corpus")
    assert "UTF-8" in result.stderr
