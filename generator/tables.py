"""Markdown helpers: a script's output, and its numbers, on a page.

Tables are shown exactly as the script prints them; these helpers only frame
them (the command above a table, a run's output in a console block) and
format the numbers that prose quotes.
"""

import math
import re
import shlex
from html import escape

from .chapter import GeneratorError


def command(script, argv):
    """The command line a reader types: python3 rnn.py --vanish."""
    return shlex.join(["python3", script, *argv])


def command_label(cmd):
    """The command that prints what follows, as a prompt line: `$ python3 rnn.py --vanish`."""
    return f"`$ {cmd}`\n{{: .command }}"


def command_table(cmd, table):
    """A script's table under the command that prints it, its notation typeset like the
    page's equations (typeset_table). The table is kept out of the search index (a
    table flattened into a snippet reads as noise); the label is not."""
    return (f'{command_label(cmd)}\n\n<section class="command-output" data-search-exclude '
            f'markdown>\n\n{typeset_table(table)}\n\n</section>')


# How a script's notation is typeset on the page: ONE rule for a table's header and body
# cells and for the figures' captions. The scripts print a plain notation that reads well
# in a terminal (h_{t-1}, C~_t, sigma(W_f q + b_f), f * C_{t-1}, rho^47, dh_t/dh_0); on
# the page each run of notation becomes the same formula in LaTeX, which the math hook
# typesets like the equations, while words stay words and numbers stay as printed.
#
# A cell is read as words separated by spaces. A run of words that are notation (a
# subscript, a superscript, a tilde, a Greek or function name), one-letter variables,
# operators (+ - * = /) and numbers inside them, holding at least one piece of notation,
# is one formula: `*` is the element-wise product (odot), `X~` is X with a tilde. Operators
# and punctuation at a run's ends, and an unmatched bracket, stay outside it. A cell
# without notation (every number the scripts print) is never touched.
GREEK = ("sigma", "rho", "lambda", "theta", "alpha", "beta", "gamma", "delta", "epsilon")
FUNCTIONS = ("tanh",)
NAME = rf"(?<![A-Za-z\\])({'|'.join(GREEK + FUNCTIONS)})(?![a-z])"
STRONG = re.compile(rf"[_^~]|^[(\[]*{NAME}")
OPERATOR = re.compile(r"^[-+=*/]$")
SINGLE = re.compile(r"^[(\[]?[A-Za-z]'?[)\]]*[,;]?$")  # a one-letter variable: W, (q), [r
NUMBER = re.compile(r"^[(\[]?[0-9][0-9.]*[)\]]*[,;]?$")


def typeset_table(table):
    """The markdown table with every cell typeset (typeset); the alignment rule kept."""
    lines = table.split("\n")
    if len(lines) < 2 or not lines[0].startswith("|"):
        return table
    for n, line in enumerate(lines):
        if n != 1 and line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            lines[n] = "| " + " | ".join(typeset(c.strip()) for c in cells) + " |"
    return "\n".join(lines)


def typeset(text, html=False):
    """One cell or caption with its runs of notation as $LaTeX$ (with html=True, as the
    math hook's <span class="arithmatex">, for text that Markdown does not read)."""
    out, run = [], []

    def flush():
        if any(STRONG.search(t) for t in run):
            for trim_numbers in (True, False):
                shown = _formula(list(run), trim_numbers, html)
                if shown:
                    out.append(shown)
                    run.clear()
                    return
        out.extend(run)
        run.clear()

    for token in text.split(" "):
        if STRONG.search(token) or OPERATOR.match(token) or SINGLE.match(token) \
                or NUMBER.match(token):
            run.append(token)
            if token[-1:] in ",;:." and _balanced(" ".join(run)):
                flush()  # punctuation outside brackets ends a formula
        else:
            flush()
            out.append(token)
    flush()
    return " ".join(out)


def _formula(run, trim_numbers, html):
    """The run as text with its formula, or None if its brackets do not match."""
    before, after, head, tail = [], [], "", ""
    edge = (lambda t: OPERATOR.match(t) or NUMBER.match(t)) if trim_numbers else OPERATOR.match
    while run and edge(run[0]):
        before.append(run.pop(0))
    while run and edge(run[-1]):
        after.insert(0, run.pop())
    while run and len(run[-1]) > 1 and run[-1][-1] in ",;:.":
        tail = run[-1][-1] + tail
        run[-1] = run[-1][:-1]
    while run and run[0][:1] in "([" and not _balanced(" ".join(run)):
        head, run[0] = head + run[0][0], run[0][1:]
    while run and run[-1][-1:] in ")]" and not _balanced(" ".join(run)):
        tail, run[-1] = run[-1][-1] + tail, run[-1][:-1]
    if not run or not any(STRONG.search(t) for t in run) or not _balanced(" ".join(run)):
        return None
    if not _balanced(head + "".join(before) + "".join(after) + tail):
        return None
    tex = " ".join(_join(run))
    math = f'<span class="arithmatex">\\({escape(tex)}\\)</span>' if html else f"${tex}$"
    return " ".join(before + [head + math + tail] + after)


def _join(run):
    """The run's words as LaTeX; two operands side by side keep a space if one is a number."""
    parts = []
    for i, token in enumerate(run):
        if i and not OPERATOR.match(token) and not OPERATOR.match(run[i - 1]) \
                and (NUMBER.match(token) or NUMBER.match(run[i - 1])):
            parts.append("\\")
        parts.append(notation_tex(token))
    return parts


def _balanced(text):
    depth = 0
    for ch in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def notation_tex(token):
    """One word of a script's notation in LaTeX: sigma -> \\sigma, C~_t -> \\tilde{C}_t,
    * -> \\odot, _47 -> _{47}, factor^47 -> \\text{factor}^{47}."""
    if token == "*":
        return "\\odot"
    tex = re.sub(NAME, r"\\\1", token)
    tex = re.sub(r"([A-Za-z])~", r"\\tilde{\1}", tex)
    tex = re.sub(r"([_^])([A-Za-z0-9]{2,})", r"\1{\2}", tex)
    tex = re.sub(r"(?<![\\A-Za-z{])([A-Za-z]{2,})(?=[_^])",
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
