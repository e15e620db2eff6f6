"""Markers: where generated content enters a hand-written page.

What a script prints, named by the command that prints it (any page):

    <!-- gen table decay from rnn.py --vanish -->            the table, under `$ python3 rnn.py --vanish`
    <!-- gen value spectral_radius:.4f from rnn.py --vanish -->   a number of that run, in a sentence
    <!-- gen output from rnn.py --clip -->                    the whole output, as a console block

What the page's chapter module draws (generator/chapters/<page>.py):

    <!-- gen figure decay -->     a plot        <!-- gen diagram lstm_cell -->  a cell drawing
    <!-- gen widget decay_widget -->  an interactive figure (added by JavaScript; none without)
    <!-- gen block timing -->     any block     <!-- gen inline setup -->       inline text

What the site makes from its chapter registry (generator/site.py), on the pages
each such producer serves (the home page, every chapter's page):

    <!-- gen site chapters -->    the home page's chapter cards
    <!-- gen site run -->         a chapter's "run it yourself" lines, Colab included

A table, an output, a figure, a diagram and a block stand alone on their line;
a value and an inline marker stand inside a sentence. Anything that starts like
a marker (``<!-- gen``) but does not parse is an error, with the file and the
line. Markers written inside code (spans, fenced blocks, or blocks indented four
spaces deeper than the text they stand in) are documentation.

A value's format is a Python format spec (``:.4f``, ``:,``, ``:.1%``) or one of
``sci`` (two significant digits, ``7.1 × 10⁻¹⁵`` with a real superscript),
``sci3`` (three) and ``vec`` (a vector as the scripts print it). Its name may be
dotted to reach into a nested record (``measured.0.radius``); a dict keyed by labels
is reached with each run of other characters than letters, digits and _ written as
one _ (``mean_accuracy.LSTM_b_f_2.3`` for the key ``LSTM b_f=2``).
"""

import re
import shlex
from dataclasses import dataclass
from typing import Optional, Tuple

from .chapter import PRODUCER_KINDS, GeneratorError
from .tables import command

START = re.compile(r"<!--\s*gen\b")  # anything that claims to be a marker
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", re.M | re.S)  # fenced code
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)  # inline code
# What opens a block whose body is indented four spaces: an admonition or a details block,
# a tab, a list item, a footnote, a definition. Inside it, code is indented four more.
CONTAINER = re.compile(r"(!!!|\?\?\?\+?|===)[ \t]|[-*+][ \t]|\d+[.)][ \t]|\[\^[^\]]+\]:|:[ \t]")
BODY = re.compile(r"<!--\s*gen\s+(.*?)\s*-->", re.S)
NAME = r"[a-z][a-z0-9_]*"
FIELD = r"[A-Za-z_][A-Za-z0-9_]*"  # a record's field: h_1, C_t, W_xz
SCRIPT = r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.py"
RUN_MARKERS = {
    "table": re.compile(rf"table\s+(?P<name>{NAME})\s+from\s+(?P<run>{SCRIPT}.*)$", re.S),
    "value": re.compile(rf"value\s+(?P<name>{FIELD}(?:\.(?:{FIELD}|[0-9]+))*)(?::(?P<fmt>[^\s]+))?"
                        rf"\s+from\s+(?P<run>{SCRIPT}.*)$", re.S),
    "output": re.compile(rf"output\s+from\s+(?P<run>{SCRIPT}.*)$", re.S),
}
PRODUCER_MARKER = re.compile(rf"(?P<kind>{'|'.join(PRODUCER_KINDS)})\s+(?P<name>{NAME})$")
SITE_MARKER = re.compile(rf"site\s+(?P<name>{NAME})$")  # placed as its producer says
PLACEMENT = {"table": "block", "output": "block", "value": "inline", **PRODUCER_KINDS}
EXPECTED = ("<!-- gen table NAME from SCRIPT.py [FLAGS] -->, "
            "<!-- gen value NAME[:FORMAT] from SCRIPT.py [FLAGS] -->, "
            "<!-- gen output from SCRIPT.py [FLAGS] -->, "
            "<!-- gen figure|diagram|widget|block|inline NAME -->, or <!-- gen site NAME -->")


@dataclass(frozen=True)
class Marker:
    page: str  # docs-relative path of the page
    line: int  # 1-based
    text: str  # the marker as written
    kind: str  # table, value, output, figure, diagram, block, inline
    name: str  # the table, value or producer; "" for output
    fmt: Optional[str]  # a value's format
    script: Optional[str]  # the script whose run it shows
    argv: Tuple[str, ...]  # the run's flags
    alone: bool  # the only thing on its line
    start: int  # offsets in the page text
    end: int

    @property
    def where(self):
        return f"docs/{self.page}:{self.line}"

    @property
    def key(self):
        """What the marker asks for, independent of where it stands."""
        if self.script is None:
            return f"{self.kind} {self.name}"
        fmt = f":{self.fmt}" if self.fmt else ""
        return f"{self.kind} {self.name}{fmt} from {command(self.script, self.argv)}"


def _blank(text):
    return re.sub(r"[^\n]", " ", text)


def _mask_indented(text):
    """The text with its indented code blocks blanked out: after a blank line, lines
    indented four spaces more than the body of the block they stand in (none at the top
    level; an admonition's or a list item's, four deeper than its first line), as
    Python-Markdown reads them. A line indented less after a blank line closes the
    blocks it is outside of; without a blank line before it, it continues a paragraph."""
    out, bodies, blank, code = [], [], True, False
    for line in text.splitlines(keepends=True):
        expanded = line.rstrip("\n").expandtabs(4)
        if not expanded.strip():
            out.append(line)
            blank = True
            continue
        indent = len(expanded) - len(expanded.lstrip())
        if blank:
            while bodies and bodies[-1] > indent:
                bodies.pop()
        code = indent >= (bodies[-1] if bodies else 0) + 4 and (blank or code)
        if code:
            out.append(_blank(line))
        else:
            out.append(line)
            if CONTAINER.match(expanded, indent):
                bodies.append(indent + 4)
        blank = False
    return "".join(out)


def _mask_code(text):
    """The text with code blocks and code spans blanked out (same length): a marker
    written inside code is documentation, not a marker."""
    text = FENCE.sub(lambda m: _blank(m.group(0)), text)
    return CODE_SPAN.sub(lambda m: _blank(m.group(0)), _mask_indented(text))


def parse(page, text, site=False):
    """Every marker of a page (docs-relative path, text); GeneratorError if one is malformed.
    The site's markers (<!-- gen site NAME -->) are left out, or with site=True are the only
    ones returned: generator/site.py fills them, the chapters' scripts and modules the rest."""
    markers = []
    for m in START.finditer(_mask_code(text)):
        line = text.count("\n", 0, m.start()) + 1
        full = BODY.match(text, m.start())
        body = " ".join(full.group(1).split()) if full else ""
        kind = body.split(" ", 1)[0]
        fields = None
        if kind in RUN_MARKERS:
            fields = RUN_MARKERS[kind].match(body)
        elif kind in PRODUCER_KINDS:
            fields = PRODUCER_MARKER.match(body)
        elif kind == "site":
            fields = SITE_MARKER.match(body)
        if not full or not fields:
            shown = text[m.start(): full.end() if full else m.start() + 60].splitlines()[0]
            raise GeneratorError(f"docs/{page}:{line}: malformed marker {shown!r}; "
                                 f"expected {EXPECTED}")
        script, argv = None, ()
        if kind in RUN_MARKERS:
            try:
                script, *rest = shlex.split(fields.group("run"))
            except ValueError as exc:
                raise GeneratorError(f"docs/{page}:{line}: malformed marker "
                                     f"{full.group(0)!r}: {exc}") from None
            argv = tuple(rest)
        groups = fields.groupdict()
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", full.end())
        line_end = len(text) if line_end == -1 else line_end
        alone = text[line_start:m.start()].strip() == "" and text[full.end():line_end].strip() == ""
        markers.append(Marker(page, line, full.group(0), kind, groups.get("name") or "",
                              groups.get("fmt"), script, argv, alone, full.start(), full.end()))
    markers = [mk for mk in markers if (mk.kind == "site") == site]
    for mk in markers:
        if mk.kind != "site":  # a site marker's placement is its producer's (site.py)
            check_placement(mk, PLACEMENT.get(mk.kind))
    return markers


def check_placement(mk, placement):
    """A "block" marker stands on a line of its own; an "inline" one inside a sentence."""
    if placement == "block" and not mk.alone:
        raise GeneratorError(f"{mk.where}: marker {mk.text} makes a block; "
                             "put it on a line of its own")
    if placement == "inline" and mk.alone:
        raise GeneratorError(f"{mk.where}: marker {mk.text} makes inline text; "
                             "put it inside a sentence")


def check(markers, chapter, scripts):
    """Every marker names a script the site has, and a producer of this page's chapter;
    every producer of the chapter is used. `chapter` is the Chapter whose page this is,
    or None; `scripts` the served scripts' names."""
    for mk in markers:
        if mk.script is not None and mk.script not in scripts:
            raise GeneratorError(f"{mk.where}: unknown script in {mk.text}: docs/code/ has "
                                 f"{', '.join(sorted(scripts))}")
        if mk.script is None:
            if chapter is None:
                raise GeneratorError(f"{mk.where}: unknown marker {mk.text}: no chapter module "
                                     "draws for this page (only table, value and output "
                                     "markers work here)")
            producer = chapter.producers.get(mk.name)
            if producer is None or producer.kind != mk.kind:
                have = ", ".join(f"{p.kind} {p.name}" for p in chapter.producers.values())
                raise GeneratorError(
                    f"{mk.where}: unknown marker {mk.text}: generator/chapters/"
                    f"{chapter.module}.py has no {mk.kind} {mk.name!r} (it has: {have or 'none'})")
    if chapter is not None:
        used = {mk.name for mk in markers if mk.script is None}
        unused = [p for p in chapter.producers.values() if p.name not in used]
        if unused:
            raise GeneratorError(
                f"docs/{chapter.page}: unused in the page: "
                + ", ".join(f"<!-- gen {p.kind} {p.name} -->" for p in unused)
                + f" (registered by generator/chapters/{chapter.module}.py)")


def fill(page, markdown, fragments, site=False):
    """The page's markdown (as MkDocs hands it over) with its markers (its site markers,
    if `site`) replaced by their fragments ({marker key: markdown}), which were made from
    the page as it was read at the start of the build."""
    found = parse(page, markdown, site=site)
    missing = [mk for mk in found if mk.key not in fragments]
    if missing:
        raise GeneratorError(f"{missing[0].where}: marker {missing[0].text} was added to "
                             "the page while it was being built; build again")
    return substitute(markdown, found, fragments)


def substitute(text, markers, fragments):
    """The page with each marker replaced by its fragment ({marker key: markdown}). A block
    fragment takes the indentation of its marker's line, so a marker inside an admonition
    or a list item fills it."""
    out, pos = [], 0
    for mk in markers:
        out.append(text[pos:mk.start])
        fragment = fragments[mk.key]
        if mk.alone:
            indent = text[text.rfind("\n", 0, mk.start) + 1:mk.start]
            fragment = fragment.replace("\n", "\n" + indent)
            fragment = "\n".join(line.rstrip() for line in fragment.split("\n"))
        out.append(fragment)
        pos = mk.end
    out.append(text[pos:])
    return "".join(out)
