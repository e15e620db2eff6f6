"""Markdown helpers: a script's output, and its numbers, on a page.

Tables are shown exactly as the script prints them; these helpers only frame
them (the command above a table, a run's output in a console block) and
format the numbers that prose quotes.
"""

import math
import re
import shlex

from .chapter import GeneratorError


def command(script, argv):
    """The command line a reader types: python3 rnn.py --vanish."""
    return shlex.join(["python3", script, *argv])


def command_label(cmd):
    """The command that prints what follows, as a prompt line: `$ python3 rnn.py --vanish`."""
    return f"`$ {cmd}`\n{{: .command }}"


def command_table(cmd, table):
    """A script's table under the command that prints it, its header typeset like the
    page's equations (typeset_header). The table is kept out of the search index (a
    table flattened into a snippet reads as noise); the label is not."""
    return (f'{command_label(cmd)}\n\n<section class="command-output" data-search-exclude '
            f'markdown>\n\n{typeset_header(table)}\n\n</section>')


# How a table's header is typeset. The scripts print their headers in a plain notation
# that reads well in a terminal (h_{t-1}, sigma(b_f), rho^47); on the page each run of
# notation in a header cell becomes the same formula in LaTeX, which the math hook
# typesets like the equations, while words stay words. The table's body, the numbers,
# is never touched: it is exactly what the command prints. A cell is changed only where
# it has a subscript, a superscript or one of these names:
GREEK = ("sigma", "rho", "lambda", "theta", "alpha", "beta", "gamma", "delta", "epsilon")
FUNCTIONS = ("tanh",)
STRONG = re.compile(rf"[_^]|^({'|'.join(GREEK + FUNCTIONS)})(?![a-z])")
OPERATOR = re.compile(r"^[-+=*/]$")
SINGLE = re.compile(r"^\(?[A-Za-z]\)?[,']?$")  # a one-letter variable: W, x, (q)


def typeset_header(table):
    """The markdown table with its header row typeset (see above); the rest as it was."""
    lines = table.split("\n")
    if len(lines) < 2 or not lines[0].startswith("|"):
        return table
    cells = lines[0].strip().strip("|").split("|")
    typeset = [header_cell(c.strip()) for c in cells]
    lines[0] = "| " + " | ".join(typeset) + " |"
    return "\n".join(lines)


def header_cell(text):
    """One header cell: its runs of notation as $LaTeX$, its words as they are."""
    tokens = text.split(" ")
    out, run = [], []

    def flush():
        if run and any(STRONG.search(t) for t in run):
            while run and OPERATOR.match(run[-1]):  # a trailing operator stays outside
                run.pop()
            out.append("$" + " ".join(notation_tex(t) for t in run) + "$")
        else:
            out.extend(run)
        run.clear()

    for token in tokens:
        if STRONG.search(token) or OPERATOR.match(token) or SINGLE.match(token):
            run.append(token)
        else:
            flush()
            out.append(token)
    flush()
    return " ".join(out)


def notation_tex(token):
    """One token of a script's notation in LaTeX: sigma -> \\sigma, _47 -> _{47},
    factor^47 -> \\text{factor}^{47}."""
    tex = re.sub(rf"(?<![A-Za-z\\])({'|'.join(GREEK + FUNCTIONS)})(?![a-z])", r"\\\1", token)
    tex = re.sub(r"([_^])([A-Za-z0-9]{2,})", r"\1{\2}", tex)
    tex = re.sub(r"(?<![\\A-Za-z])([A-Za-z]{2,})(?=[_^])",
                 lambda m: m.group(1) if m.group(1) in ("dh", "dC") else rf"\text{{{m.group(1)}}}",
                 tex)
    return tex


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
    return (f'<section class="command-output" data-search-exclude markdown>\n\n'
            f"{fence}{lexer}\n{body}\n{fence}\n\n</section>")


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
