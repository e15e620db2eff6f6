"""Markers: where generated content enters a hand-written page.

    <!-- gen MODULE.PRODUCER -->

MODULE is the generator module that feeds the page (named after it), PRODUCER
one of its registered producers. A marker alone on its line takes a block
producer; a marker inside a line takes an inline producer. Anything that
starts like a marker (``<!-- gen``) but does not parse is an error, and so is
a producer that the page never uses: the build fails with the file, the line
and the marker, and writes nothing.
"""

import re
from dataclasses import dataclass

from .registry import GeneratorError

START = re.compile(r"<!--\s*gen\b")  # anything that claims to be a marker
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", re.M | re.S)  # fenced code
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)  # inline code
MARKER = re.compile(r"<!--\s*gen\s+([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\s*-->")


@dataclass
class Marker:
    line: int  # 1-based
    text: str  # the marker as written
    module: str
    producer: str
    alone: bool  # the only thing on its line: a block marker
    start: int  # offsets in the page text
    end: int


def _mask_code(text):
    """The text with code blocks and code spans blanked out (same length): a marker
    written inside code is documentation, not a marker."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return CODE_SPAN.sub(blank, FENCE.sub(blank, text))


def find_markers(text, path):
    """Every marker in a page; raises GeneratorError on a malformed one."""
    markers = []
    for m in START.finditer(_mask_code(text)):
        line = text.count("\n", 0, m.start()) + 1
        full = MARKER.match(text, m.start())
        if not full:
            close = text.find("-->", m.start())
            shown = text[m.start(): close + 3 if close != -1 else m.start() + 40]
            shown = shown.splitlines()[0] if shown else shown
            raise GeneratorError(
                f"{path}:{line}: malformed marker {shown!r}; "
                "expected <!-- gen MODULE.PRODUCER -->")
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", full.end())
        line_end = len(text) if line_end == -1 else line_end
        alone = text[line_start:m.start()].strip() == "" and text[full.end():line_end].strip() == ""
        markers.append(Marker(line, full.group(0), full.group(1), full.group(2), alone,
                              full.start(), full.end()))
    return markers


def check_markers(markers, path, page):
    """Every marker names this page's module and one of its producers, of the right kind;
    every producer is used. ``page`` is the Page fed by this file, or None."""
    for mk in markers:
        if page is None or mk.module != page.module:
            owner = f"it is fed by generator/{page.module}.py" if page else \
                "no generator module feeds this page"
            raise GeneratorError(f"{path}:{mk.line}: unknown marker {mk.text}: {owner}")
        producer = page.producers.get(mk.producer)
        if producer is None:
            raise GeneratorError(
                f"{path}:{mk.line}: unknown marker {mk.text}: generator/{page.module}.py "
                f"has no producer {mk.producer!r} (it has: {', '.join(sorted(page.producers))})")
        if producer.kind == "block" and not mk.alone:
            raise GeneratorError(
                f"{path}:{mk.line}: marker {mk.text} makes a block; put it on a line of its own")
        if producer.kind == "inline" and mk.alone:
            raise GeneratorError(
                f"{path}:{mk.line}: marker {mk.text} makes inline text; put it inside a sentence")
    if page is not None:
        used = {mk.producer for mk in markers}
        unused = [name for name in page.producers if name not in used]
        if unused:
            raise GeneratorError(
                f"{path}: unused producer(s) of generator/{page.module}.py: "
                + ", ".join(f"<!-- gen {page.module}.{name} -->" for name in unused))


def substitute(text, markers, fragments):
    """The page with each marker replaced by its producer's output."""
    out, pos = [], 0
    for mk in markers:
        out.append(text[pos:mk.start])
        out.append(fragments[mk.producer])
        pos = mk.end
    out.append(text[pos:])
    return "".join(out)
