"""The harness: the block at the end of every served script, byte for byte.

Not imported by the generator. Every script in docs/code/ ends with the lines
between the two rules below, exactly as they stand here, then its
``if __name__ == "__main__": sys.exit(main())``. The build checks each copy
against this file (generator/runs.py, ``check_harness``) and fails on the
first line that differs, naming the script and the line. docs/building.md
says what a script defines for the harness to work: REPORTS, DEFAULT,
OPTIONS, add_options(parser), the exception Refused, and the imports
argparse, os, sys, textwrap and numpy as np (None where numpy is missing).
"""

# ---------------------------------------------------------------------------
# The harness: the same in every script of the site, checked when it is built.
# Printing, the command line, main(). Above it: this script's own code.
# ---------------------------------------------------------------------------

NAME = os.path.basename(__file__)  # rnn.py, as the command line names it
WRAP = 78  # the width of the paragraphs the reports print


class Printer:
    """Prints paragraphs and tables, a blank line between; keeps each table by name."""

    def __init__(self, stream=None):
        self.stream, self.tables, self.blocks = stream or sys.stdout, {}, 0

    def text(self, paragraph):  # long lines wrapped at WRAP; a `time:` line is kept whole
        self.block("\n".join(line if len(line) <= WRAP or line.startswith("time:")
                             else textwrap.fill(line, WRAP, break_on_hyphens=False)
                             for line in paragraph.split("\n")))

    def table(self, name, table):
        assert name not in self.tables, f"table {name!r} printed twice"
        self.tables[name] = table
        self.block(table)

    def row(self, name, line):  # one more row of a table that is printed as it grows
        self.tables[name] += "\n" + line
        self.write(line + "\n")

    def block(self, text):
        self.write("\n" * (self.blocks > 0) + text + "\n")
        self.blocks += 1

    def write(self, text):
        self.stream.write(text)
        self.stream.flush()


def format_table(header, rows, align, min_widths=None):
    """A markdown table; align: 'l' or 'r' per column; min_widths: to print row by row."""
    cells = [[str(c) for c in row] for row in (header, *rows)]
    widths = [max(3, (min_widths or [0] * len(header))[j], *(len(row[j]) for row in cells))
              for j in range(len(header))]
    pad = [str.rjust if a == "r" else str.ljust for a in align]
    lines = ["| " + " | ".join(p(c, w) for p, c, w in zip(pad, row, widths)) + " |"
             for row in cells]
    rule = "|" + "|".join("-" * (w + 1) + ":-"[a != "r"] for w, a in zip(widths, align)) + "|"
    return "\n".join([lines[0], rule, *lines[1:]])


def number(kind, low, high):
    """An argparse type: a number of kind (int or float) from low to high."""
    def check(text):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= x <= high:  # (nan fails it too)
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return x
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
            parser.error(f"--{option.replace('_', '-')} has no effect without "
                         + " or ".join(f"--{user}" for user in users))
    return args


def run(args, out):
    """Print the chosen reports to out (a Printer), a blank line between; {flag: record}."""
    records = {}
    for n, flag in enumerate(args.chosen):
        out.write("\n" * (n > 0))
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
        if isinstance(exc, BrokenPipeError):
            return 0
        why = f"cannot write the output: {exc.strerror}" if isinstance(exc, OSError) else exc
        print(f"{NAME}: {why}", file=sys.stderr)
        return 1
    return 1 if any(getattr(r, "passed", True) is False for r in records.values()) else 0

# ------------------------------------------------------------- end of the harness
