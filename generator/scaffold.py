"""The two commands that write source files for you, so that nothing is pasted by hand.

``python -m generator harness`` writes the block of generator/harness.py into every
served script (docs/code/*.py that carries one), in place of the copy it has; with
``--check`` it writes nothing and fails, naming the script and the line, where a copy
differs (the build makes the same check, generator/contract.py ``check_harness``).

``python -m generator new-chapter 18 recurrence recurrence.py "Recurrence returns"``
writes a chapter that builds and passes the generic tests as made: the script (with the
harness), the page (with the markers every chapter needs), the chapter module (which is
the registry's line: generator/chapter.py finds it by its name) and the nav line in
mkdocs.yml. The number is written once, here, into all four.

Every file is written whole or not at all (a temporary file renamed into place), and
new-chapter refuses to overwrite anything.
"""

import os
import re
import tempfile
from pathlib import Path

from .chapter import CODE, DOCS, ROOT, GeneratorError
from .contract import HARNESS, HARNESS_END, HARNESS_OPEN, check_harness, harness_lines


def write_atomic(path, text):
    """path holds text, or what it held before: never half of it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def harness_block():
    """The harness as every script carries it: from the rule above its opening line to
    its end rule, with the newline after it."""
    _, lines = harness_lines(HARNESS.read_text("utf-8"))
    return "\n".join(lines) + "\n"


def served_scripts():
    """Every docs/code/*.py that carries a harness (the long-lag pilot carries none)."""
    return [p for p in sorted(CODE.glob("*.py"))
            if HARNESS_OPEN in p.read_text("utf-8").split("\n")]


def with_harness(text, name):
    """text with its harness block replaced by generator/harness.py's."""
    found = harness_lines(text)
    if found is None:
        raise GeneratorError(f"docs/code/{name}: has no harness opening line "
                             f"{HARNESS_OPEN!r} to write over")
    lines = text.split("\n")
    start, old = found
    if old[-1] != HARNESS_END:
        raise GeneratorError(f"docs/code/{name}:{start}: the harness has no end rule "
                             f"{HARNESS_END!r}: put it back after main(), then run this again")
    _, canonical = harness_lines(HARNESS.read_text("utf-8"))
    return "\n".join(lines[:start - 1] + canonical + lines[start - 1 + len(old):])


def sync_harness(check=False):
    """Write the harness into every served script, or (check) fail on the first drift.
    Returns the names written."""
    written = []
    for path in served_scripts():
        text = path.read_text("utf-8")
        if check:
            check_harness(path.name, text)
            continue
        new = with_harness(text, path.name)
        if new != text:
            write_atomic(path, new)
            written.append(path.name)
    return written


# -- a new chapter --------------------------------------------------------------------

SCRIPT = '''\
"""{script}: {title}.

    python3 {script}            every report below
    python3 {script} --squares  n and n squared (replace with the chapter's computation)

Python 3 and numpy only. The model comes first, as pure functions returning plain
records; what the site prints comes after it; the harness (printing, the command line,
main) closes the file.
"""

import argparse
import os
import sys
import textwrap
from dataclasses import dataclass
from typing import List

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


# -- the computation ------------------------------------------------------------------

N = 4  # how many squares


def squares(count=N):
    """The first count numbers and their squares."""
    n = np.arange(1, count + 1)
    return [int(v) for v in n], [int(v) for v in n ** 2]


# -- what the site prints -------------------------------------------------------------

@dataclass
class SquaresReport:
    n: List[int]
    squares: List[int]
    total: int  # the sum of the squares


def report_squares(args, out):
    n, sq = squares(args.count or N)
    out.text("The first numbers and their squares")
    out.table("squares", format_table(("n", "n^2"), list(zip(n, sq)), "rr"))
    return SquaresReport(n, sq, sum(sq))


REPORTS = {{"squares": ("n and n squared", report_squares)}}
DEFAULT = tuple(REPORTS)
OPTIONS = {{"count": ("squares",)}}


def estimate_seconds(args):  # about how long the chosen reports take: past an hour, the
    return 0.0  # harness refuses the command, saying the estimate


def add_options(parser):
    parser.add_argument("--count", type=number(int, 1, 100), help="how many squares")


{harness}

if __name__ == "__main__":
    sys.exit(main())
'''

PAGE = """\
---
description: >-
  {title}: what the chapter shows, in one sentence (the home page's card).
---

# {number}. {title}

<!-- gen figure growth -->

[Download {script}](code/{script}), or read it on [its code page](code/{stem}.md).

!!! tip "Run it yourself"

    <!-- gen site run -->

The first numbers and their squares:

<!-- gen table squares from {script} --squares -->

Their sum is <!-- gen value total from {script} --squares -->.
"""

MODULE = '''\
"""Chapter {number}, {title_lower}: the figures of docs/{page}, from docs/code/{script}."""

from generator.chapter import Chapter

CHAPTER = Chapter("{page}", "{script}")


@CHAPTER.figure
def growth(ctx):
    record = ctx.record("--squares")

    def draw(ax, colors):
        ax.plot(list(record.n), list(record.squares), marker="o", color=colors.series[0])
        ax.set_xlabel("n")
        ax.set_ylabel("n squared")

    return ctx.figure(draw, alt="The squares of 1 to 4 grow faster than the numbers")
'''


def nav_with(config_text, number, title, page):
    """mkdocs.yml's text with the chapter's line added under Chapters, in number order."""
    lines = config_text.split("\n")
    chapter_lines = [i for i, line in enumerate(lines)
                     if re.match(r'\s+- "(\d+)\. .*": ch\d+-[\w-]+\.md$', line)]
    if not chapter_lines:
        raise GeneratorError("mkdocs.yml: no chapter line under nav's Chapters to add after")
    indent = re.match(r"\s*", lines[chapter_lines[0]]).group(0)
    entry = f'{indent}- "{number}. {title}": {page}'
    after = chapter_lines[-1]
    for i in chapter_lines:
        if int(re.search(r'"(\d+)\.', lines[i]).group(1)) < number:
            after = i
    before_all = int(re.search(r'"(\d+)\.', lines[chapter_lines[0]]).group(1)) > number
    lines.insert(chapter_lines[0] if before_all else after + 1, entry)
    return "\n".join(lines)


def new_chapter(number, slug, script, title):
    """Write the four files of a new chapter; returns their paths, relative to the root."""
    if not re.fullmatch(r"[a-z][a-z0-9-]*", slug):
        raise GeneratorError(f"the chapter's name {slug!r}: lower-case letters, digits and "
                             "hyphens, starting with a letter (recurrence, linear-rnn)")
    if not re.fullmatch(r"[a-z][a-z0-9_]*\.py", script):
        raise GeneratorError(f"the script's name {script!r}: a Python file name in lower "
                             "case (recurrence.py)")
    if not 1 <= number <= 999:
        raise GeneratorError(f"the chapter's number {number}: from 1 to 999")
    title = " ".join(title.split())
    if not title or '"' in title:
        raise GeneratorError("the chapter's title: some words, without a double quote")
    page = f"ch{number}-{slug}.md"
    module = re.sub(r"[^a-z0-9]+", "_", f"ch{number}-{slug}")
    files = {
        CODE / script: SCRIPT.format(script=script, title=title,
                                     harness=harness_block()),
        DOCS / page: PAGE.format(number=number, title=title, script=script,
                                 stem=Path(script).stem),
        ROOT / "generator" / "chapters" / f"{module}.py": MODULE.format(
            number=number, title_lower=title[0].lower() + title[1:], page=page, script=script),
    }
    taken = [p.relative_to(ROOT).as_posix() for p in files if p.exists()]
    taken += [f"mkdocs.yml's nav: {page}"] if page in (ROOT / "mkdocs.yml").read_text("utf-8") \
        else []
    for other in (ROOT / "generator" / "chapters").glob(f"ch{number}_*.py"):
        taken.append(f"generator/chapters/{other.name} (chapter {number} exists)")
    if taken:
        raise GeneratorError("new-chapter writes nothing over what exists: "
                             + ", ".join(sorted(set(taken))))
    config = nav_with((ROOT / "mkdocs.yml").read_text("utf-8"), number, title, page)
    for path, text in files.items():
        write_atomic(path, text)
    write_atomic(ROOT / "mkdocs.yml", config)
    return [p.relative_to(ROOT).as_posix() for p in files] + ["mkdocs.yml"]
