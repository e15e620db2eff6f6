"""A run is keyed on its data: change the data file a script reads, and the page shows
what the script prints from the new data, although the script, its flags and every
generator module are unchanged. Both caches must see the change: the page cache
(the worker records the data among the files it read) and the run cache (the data's
hash is part of a run's key). Tested on a throwaway chapter whose script counts the
words of its data file, in a copy of the project with a run cache of its own."""

import re
import shutil

import pytest

from helpers import build, copy_project, edit
from generator.cache import run_cache_dir
from generator.contract import HARNESS, harness_lines

SCRIPT = '''\
"""toy.py: the words of toy.txt, counted.

    python3 toy.py --words   how many words toy.txt has
"""

import argparse
import os
import sys
import textwrap
from dataclasses import dataclass

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toy.txt")


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


@dataclass
class WordsReport:
    words: int  # how many words toy.txt has


def report_words(args, out):
    with open(DATA, encoding="utf-8") as f:
        words = len(f.read().split())
    out.table("words", format_table(("file", "words"), [("toy.txt", words)], "lr"))
    return WordsReport(words)


REPORTS = {"words": ("how many words toy.txt has", report_words)}
DEFAULT = tuple(REPORTS)
OPTIONS = {}


def estimate_seconds(args):
    return 0.0


def add_options(parser):
    pass


HARNESS

if __name__ == "__main__":
    sys.exit(main())
'''

PAGE = """\
# 99. Words

[Download toy.py](code/toy.py), or read it on [its code page](code/toy.md).

<!-- gen site run -->

<!-- gen table words from toy.py --words -->

The file has <!-- gen value words from toy.py --words --> words.
"""

MODULE = '''\
"""Chapter 99: docs/ch99-toy.md, from docs/code/toy.py and its data, toy.txt."""

from generator.chapter import Chapter

CHAPTER = Chapter("ch99-toy.md", "toy.py", data=("toy.txt",))
'''


@pytest.fixture
def toy(tmp_path):
    copy = copy_project(tmp_path / "project")
    (copy / "docs" / "code" / "toy.py").write_text(
        SCRIPT.replace("HARNESS", "\n".join(harness_lines(HARNESS.read_text("utf-8"))[1])),
        "utf-8")
    (copy / "docs" / "code" / "toy.txt").write_text("one two three\n", "utf-8")
    (copy / "docs" / "ch99-toy.md").write_text(PAGE, "utf-8")
    (copy / "generator" / "chapters" / "ch99_toy.py").write_text(MODULE, "utf-8")
    nav = (copy / "mkdocs.yml").read_text("utf-8")
    last = [line for line in nav.splitlines() if line.startswith('      - "1')][-1]
    edit(copy / "mkdocs.yml", last + "\n", last + '\n      - "99. Words": ch99-toy.md\n')
    runs = tmp_path / "runs"  # the toy's runs stay out of the reader's run cache; the
    if (run_cache_dir() / "runs").is_dir():  # other chapters' are copied, never retrained
        shutil.copytree(run_cache_dir() / "runs", runs / "runs")
    return copy, {"RNN_EXPLAINER_CACHE": str(runs)}


def words_shown(copy):
    html = (copy / "site" / "ch99-toy" / "index.html").read_text("utf-8")
    return int(re.search(r"The file has ([0-9]+) words", html).group(1))


def test_new_data_reaches_the_page_through_both_caches(toy):
    copy, env = toy
    first = build(copy, env=env)
    assert first.returncode == 0, first.stderr
    assert words_shown(copy) == 3
    (copy / "docs" / "code" / "toy.txt").write_text("one two three four five\n", "utf-8")
    second = build(copy, env=env)
    assert second.returncode == 0, second.stderr
    assert "generator: computing toy.py's pages" in second.stderr  # not the cached page
    assert words_shown(copy) == 5  # nor the cached run
    assert ">5</td>" in (copy / "site" / "ch99-toy" / "index.html").read_text("utf-8")
