"""recurrence.py: Recurrence returns.

    python3 recurrence.py            every report below
    python3 recurrence.py --squares  n and n squared (replace with the chapter's computation)

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


REPORTS = {"squares": ("n and n squared", report_squares)}
DEFAULT = tuple(REPORTS)
OPTIONS = {"count": ("squares",)}


def add_options(parser):
    parser.add_argument("--count", type=number(int, 1, 100), help="how many squares")


# ---------------------------------------------------------------------------
# The harness: the same in every script of the site, checked when it is built.
# Printing, the command line, main(). Above it: this script's own code.
# ---------------------------------------------------------------------------

NAME = os.path.basename(__file__)  # rnn.py, as the command line names it


class Printer:
    """Prints paragraphs and tables, a blank line between; keeps each table by name."""

    def __init__(self, stream=None):
        self.stream, self.tables, self.gap = stream or sys.stdout, {}, ""

    def text(self, paragraph):  # lines over 78 characters wrapped, but not a `time:` line
        self.block("\n".join(textwrap.fill(line, 78, break_on_hyphens=False)
                             if len(line) > 78 and not line.startswith("time:") else line
                             for line in paragraph.split("\n")))

    def table(self, name, table):  # the table can grow: row(name, line) prints one more row
        assert name not in self.tables, f"table {name!r} printed twice"
        self.tables[name] = table
        self.block(table)

    def row(self, name, line):
        self.tables[name] += "\n" + line
        print(line, file=self.stream, flush=True)

    def block(self, text):  # a blank line before every block but the first
        print(self.gap + text, file=self.stream, flush=True)
        self.gap = "\n"


def format_table(header, rows, align, min_widths=None):
    """A markdown table; align: 'l' or 'r' per column; min_widths: to print row by row."""
    cells = [[str(c) for c in row] for row in (header, *rows)]
    widths = [max(3, (min_widths or [0] * len(header))[j], *(len(row[j]) for row in cells))
              for j in range(len(header))]
    lines = ["| " + " | ".join(c.rjust(w) if a == "r" else c.ljust(w)
                               for c, w, a in zip(row, widths, align)) + " |" for row in cells]
    rule = "|" + "|".join("-" * (w + 1) + ":-"[a != "r"] for w, a in zip(widths, align)) + "|"
    return "\n".join([lines[0], rule, *lines[1:]])


def number(kind, low, high):  # an argparse type: a number of kind (int or float), low to high
    def check(text):  # not a number: kind raises ValueError, "invalid int value: 'x'"
        if not low <= kind(text) <= high:  # (nan fails it too)
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return kind(text)
    check.__name__ = kind.__name__
    return check


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n")[0])
    for flag, (help_text, _) in REPORTS.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    add_options(parser)
    args = parser.parse_args(argv)
    args.chosen = [flag for flag in REPORTS if getattr(args, flag)] or list(DEFAULT)
    for option, users in OPTIONS.items():  # an option no chosen report uses is an error
        if getattr(args, option) not in (None, False) and not set(users) & set(args.chosen):
            parser.error(f"--{option.replace('_', '-')} has no effect without --"
                         + " or --".join(users))
    return args


def run(args, out):
    """Print the chosen reports to out (a Printer), two blank lines between; {flag: record}."""
    records = {}
    for flag in args.chosen:
        out.gap = "\n\n" if records else ""
        records[flag] = REPORTS[flag][1](args, out)
    return records


def main(argv=None):
    args = parse_args(argv)
    try:
        if np is None:
            raise Refused("needs numpy: pip install numpy")
        records = run(args, Printer())
    except (Refused, OSError) as exc:  # bad input; stdout closed early (`| head`) or full
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # drop what is left
        if not isinstance(exc, BrokenPipeError):
            why = exc if isinstance(exc, Refused) else f"cannot write the output: {exc.strerror}"
            print(f"{NAME}: {why}", file=sys.stderr)
        return 0 if isinstance(exc, BrokenPipeError) else 1
    return 1 if any(getattr(r, "passed", True) is False for r in records.values()) else 0

# ------------------------------------------------------------- end of the harness


if __name__ == "__main__":
    sys.exit(main())
