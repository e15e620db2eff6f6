"""Markdown helpers: a script's output, and its numbers, on a page.

Tables are shown exactly as the script prints them; these helpers only frame
them (the command above a table, a run's output in a console block) and
format the numbers that prose quotes.
"""

import math
import shlex

from .chapter import GeneratorError


def command(script, argv):
    """The command line a reader types: python3 rnn.py --vanish."""
    return shlex.join(["python3", script, *argv])


def command_label(cmd):
    """The command that prints what follows, as a prompt line: `$ python3 rnn.py --vanish`."""
    return f"`$ {cmd}`\n{{: .command }}"


def command_table(cmd, table):
    """A script's table under the command that prints it. The table is kept out of the
    search index (a table flattened into a snippet reads as noise); the label is not."""
    return (f'{command_label(cmd)}\n\n<div class="command-output" data-search-exclude '
            f'markdown>\n\n{table}\n\n</div>')


def console_block(text, prompt=None):
    """Verbatim output in a fenced block (the fence longer than any run of backticks),
    kept out of the search index; with `prompt`, the command first, as a terminal shows
    it (the copy button copies the command alone)."""
    body = text.rstrip("\n")
    lexer = "text"
    if prompt:
        body = f"$ {prompt}\n{body}"
        lexer = "console"
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return (f'<div class="command-output" data-search-exclude markdown>\n\n'
            f"{fence}{lexer}\n{body}\n{fence}\n\n</div>")


def _longest_backtick_run(text):
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return longest


def format_value(value, fmt, where):
    """A record's value as prose quotes it.

    fmt: a Python format spec (".4f", ",", ".1%"), "sci" / "sci3" (two or three
    significant digits times a power of ten, typeset as math), "vec" (a vector
    as the scripts print it: signed, four decimals), or None for an int or str.
    """
    if fmt is None:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise GeneratorError(f"{where}: {value!r} needs a format, e.g. :.4f or :sci")
        return f"{value:,}" if isinstance(value, int) else value
    if fmt == "vec":
        if not isinstance(value, list) or not all(isinstance(x, (int, float)) for x in value):
            raise GeneratorError(f"{where}: format vec needs a list of numbers, got {value!r}")
        return "(" + ", ".join(f"{x:+.4f}" for x in value) + ")"
    if fmt in ("sci", "sci3"):
        return scientific(value, 2 if fmt == "sci" else 3, where)
    try:
        return format(value, fmt)
    except (ValueError, TypeError) as exc:
        raise GeneratorError(f"{where}: cannot format {value!r} with :{fmt} ({exc})") from None


def scientific(x, digits, where=""):
    """x with `digits` significant digits as LaTeX, 7.1 \\times 10^{-15}, which the
    math hook typesets like the equations (a real superscript, a real minus)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        raise GeneratorError(f"{where}: format sci needs a finite number, got {x!r}")
    if x == 0:
        return "$0$"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    exponent = int(exponent)
    if exponent == 0:
        return f"${mantissa}$"
    return f"${mantissa} \\times 10^{{{exponent}}}$"
