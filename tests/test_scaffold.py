"""The commands that write source files: `python -m generator harness` keeps one source
for the harness, `python -m generator new-chapter` writes a chapter's four files (the
chapter it writes is built and tested in test_new_chapter.py)."""

import subprocess
import sys

import pytest

from helpers import CODE, ROOT, copy_project, edit
from generator.chapter import GeneratorError
from generator.scaffold import nav_with, served_scripts, with_harness


def generator(copy, *words):
    return subprocess.run([sys.executable, "-m", "generator", *words], cwd=copy,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def copy(tmp_path):
    return copy_project(tmp_path / "project", page_cache=False)


def test_every_chapter_script_carries_the_harness():
    from helpers import SCRIPTS

    assert sorted(p.name for p in served_scripts()) == sorted(SCRIPTS)


def test_the_harness_command_mends_a_drifted_copy_and_check_names_the_line(copy):
    script = copy / "docs" / "code" / "gated.py"
    before = script.read_bytes()
    edit(script, "self.gap = \"\\n\"", "self.gap = \"\\n\\n\"")
    line = next(n for n, text in enumerate(script.read_text("utf-8").split("\n"), 1)
                if 'self.gap = "\\n\\n"' in text)
    checked = generator(copy, "harness", "--check")
    assert checked.returncode == 1
    assert f"docs/code/gated.py:{line}: the harness differs from generator/harness.py" \
        in checked.stderr
    assert len(checked.stderr.strip().splitlines()) == 1
    mended = generator(copy, "harness")
    assert mended.returncode == 0, mended.stderr
    assert "written: gated.py" in mended.stdout
    assert script.read_bytes() == before
    assert generator(copy, "harness", "--check").returncode == 0


def test_a_change_to_the_source_reaches_every_script(copy):
    edit(copy / "generator" / "harness.py", "def run(args, out):", "def run(args, out):  # x")
    result = generator(copy, "harness")
    assert result.returncode == 0, result.stderr
    for path in (copy / "docs" / "code").glob("*.py"):
        if path.name in {p.name for p in served_scripts()}:
            assert "def run(args, out):  # x\n" in path.read_text("utf-8"), path.name


def test_a_script_whose_harness_lost_its_end_rule_is_not_written_over():
    text = (CODE / "rnn.py").read_text("utf-8").replace(
        "# ------------------------------------------------------------- end of the harness\n", "")
    with pytest.raises(GeneratorError, match="rnn.py:[0-9]+: the harness has no end rule"):
        with_harness(text, "rnn.py")


def test_new_chapter_writes_nothing_over_what_exists(copy):
    first = generator(copy, "new-chapter", "99", "toy", "toy.py", "Squares")
    assert first.returncode == 0, first.stderr
    written = {p: (copy / p).read_bytes() for p in
               ("docs/code/toy.py", "docs/ch99-toy.md", "generator/chapters/ch99_toy.py",
                "mkdocs.yml")}
    again = generator(copy, "new-chapter", "99", "toy", "toy.py", "Squares")
    assert again.returncode == 1
    assert again.stderr.startswith("generator: error: new-chapter writes nothing over what "
                                   "exists: docs/ch99-toy.md, docs/code/toy.py")
    assert {p: (copy / p).read_bytes() for p in written} == written
    clash = generator(copy, "new-chapter", "12", "other", "other.py", "Other")
    assert clash.returncode == 1 and "chapter 12 exists" in clash.stderr


@pytest.mark.parametrize("words, message", [
    (["x", "toy", "toy.py", "T"], "the chapter's number 'x': a whole number"),
    (["99", "Toy", "toy.py", "T"], "the chapter's name 'Toy'"),
    (["99", "toy", "toy.sh", "T"], "the script's name 'toy.sh'"),
    (["99", "toy", "toy.py", 'say "hi"'], "without a double quote"),
])
def test_new_chapter_refuses_bad_words_in_one_line(copy, words, message):
    result = generator(copy, "new-chapter", *words)
    assert result.returncode == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (copy / "docs" / "code" / "toy.py").exists()


def test_new_chapter_without_its_words_is_a_usage_error(copy):
    result = generator(copy, "new-chapter", "99")
    assert result.returncode == 2 and "new-chapter takes NUMBER NAME SCRIPT TITLE" in result.stderr


def test_the_nav_line_goes_in_number_order():
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    after = nav_with(config, 99, "Last", "ch99-last.md").split("\n")
    lines = [line.strip() for line in after if line.strip().startswith('- "')]
    chapters = [line for line in lines if ".md" in line and line.split('"')[1][0].isdigit()]
    assert chapters[-1] == '- "99. Last": ch99-last.md'
    first = nav_with(config, 1, "First", "ch1-first.md").split("\n")
    chapters = [line.strip() for line in first if line.strip().startswith('- "')
                and line.strip().split('"')[1][0].isdigit()]
    assert chapters[0] == '- "1. First": ch1-first.md'
