"""MkDocs hook: render the pages' LaTeX as MathML at build time.

pymdownx.arithmatex (generic mode) wraps each formula as
``<span class="arithmatex">\\(...\\)</span>`` or ``<div class="arithmatex">\\[...\\]</div>``;
this hook replaces them with MathML, which Chromium, Firefox and Safari render
natively. No math library is served and nothing is fetched from another host.

The module is self-contained: ``to_mathml(tex, display)`` and ``speak(element)``
are pure functions; ``on_page_content`` is the thin MkDocs layer.

latex2mathml parses the LaTeX; its output is then corrected as a tree, because
several of its constructs render wrongly in MathML Core (what Chromium
implements), each checked in headless Chromium with STIX Two Math:

* Accents (``\\bar``, ``\\tilde``, ``\\dot``, ``\\vec``, ...): latex2mathml writes a
  plain ``<mover>`` without ``accent="true"``, so the mark is laid out as a
  small limit at script size (``\\bar`` showed as a dash beside the letter), and
  it uses ASCII ``~``/``^`` and stretchy macrons. Here every accent becomes
  ``<mover accent="true">`` with the spacing (non-combining) accent character
  and TeX's stretchiness: fixed-size for ``\\bar \\tilde \\hat \\dot \\vec`` ...,
  stretchy for ``\\overline \\widehat \\overrightarrow`` ... (``\\widetilde`` and
  ``\\widecheck`` cannot stretch: STIX Two Math has wide variants only for the
  combining U+0303/U+030C, which Chromium neither stretches nor centres).
* Delimiters: ``\\lVert \\rVert \\lvert \\rvert`` come out as ``<mo>`` with no
  ``stretchy`` attribute, and the operator dictionary makes them stretch to the
  height of everything in their row (the norm bars beside a fraction were three
  lines tall). In TeX only ``\\left \\middle \\right``, ``\\big``... and matrix
  environments size a delimiter, so every other bracket, bar or vertical arrow
  gets ``stretchy="false"``; matrix delimiters get ``stretchy="true"``.
* Big operators and limits: ``\\lim \\max \\operatorname*`` and, below the top level
  of a display, ``\\sum \\prod`` came out as ``msub``/``msubsup``, whose scripts
  never go under the operator. They become ``munder``/``munderover`` with
  ``movablelimits``, so they sit under and over in display style and beside in
  text style, as in TeX; ``\\nolimits`` and ``\\limits`` are honoured.
* Spacing: ``\\!``, ``\\thinspace``, ... came out as named spaces
  (``negativethinmathspace``), which MathML Core dropped, and ``mu`` is no CSS
  unit: both are written in ``em``. Chromium ignores a negative ``mspace``
  width, so a negative space becomes a negative CSS margin. Function names
  (``\\tanh``, ``\\operatorname{diag}``, ``\\lim``) get TeX's thin space where TeX
  puts one (before a letter or a ``\\left...\\right`` group, not before ``(``).
* ``\\operatorname{diag}`` came out as an ``<mo>`` (an operator with thick spaces
  around it); it becomes an upright ``<mi>``, like ``\\tanh``.
* Fonts: ``\\mathrm{d}`` came out as a plain ``<mi>d</mi>``, drawn in italic;
  ``\\mathbf{Wx}`` as ``mathvariant="bold"``, which Chromium ignores. Upright
  letters get ``mathvariant="normal"`` (a run of them is one ``<mi>``), other
  variants are mapped to Unicode's mathematical alphanumerics.
* Ordinary symbols (``\\partial \\nabla \\infty \\top`` ...) came out as operators,
  with operator spacing; they become ``<mi>``.
* Primes: ``\\tanh'`` came out as a superscript prime, small and floating (STIX
  Two Math's prime is a text glyph already drawn high); it follows its base.
* Text is escaped properly (``\\text{a<b}`` produced a raw ``<``).

A formula that uses a macro latex2mathml does not know (it would pass ``\\foo``
through as text), a stray ``&``, a missing argument (``\\frac{a}`` came out as a
one-part fraction) or an ``\\operatorname`` with more than letters in it (it
came out as an empty operator) raises ``MathError``, which the hook turns into
a build failure naming the page and the formula.

Accessible name: each ``<math>`` gets an ``aria-label`` that reads the formula
in words ("h sub t equals tanh of W x sub t plus ..."), made by ``speak`` from
the corrected MathML tree. Words, not LaTeX, because a screen reader reads the
name aloud as text, and even cleaned LaTeX reads as "h underscore t" or
"backslash tanh"; and from the tree, not from the LaTeX, because the tree has
already resolved every macro into a handful of element types, so any formula
latex2mathml accepts gets a label without a second parser. Chromium names a
``<math>`` from ``aria-label`` (its role stays MathML's math role, so no
``role`` attribute is needed) and ignores ``alttext`` (checked in its
accessibility tree), which is therefore not written: it held the raw LaTeX. The words are a plain reading,
not MathSpeak: a closing parenthesis after a function name and the closing bar
of a norm are silent, as in "tanh of W x sub t plus b".
"""

import html
import re
import unicodedata
from xml.etree.ElementTree import Element, tostring

from latex2mathml import commands
from latex2mathml.converter import Converter

try:  # the hook needs MkDocs; the pure functions do not
    from mkdocs.exceptions import PluginError
except ImportError:  # pragma: no cover
    PluginError = RuntimeError

ARITHMATEX = re.compile(
    r'<(span|div) class="arithmatex">\s*(\\\(|\\\[)(.*?)(\\\)|\\\])\s*</\1>', re.S)


class MathError(ValueError):
    """A formula that cannot be rendered faithfully."""


# Attributes set while converting and removed before the markup is written.
SRC = "data-src"        # the LaTeX token an element came from
LIMITS = "data-limits"  # \limits or \nolimits on a sub/superscript

UNDER_OVER = ("munder", "mover", "munderover")
SCRIPTS = ("msub", "msup", "msubsup")
ROWS = ("math", "mrow", "mstyle", "mpadded", "mphantom", "mtd", "msqrt", "menclose")
THIN = 0.1667  # em: TeX's thin space, 3mu

# Accent commands: (character, stretchy). Spacing (non-combining) characters:
# Chromium centres a combining mark (zero advance, ink left of the origin) off
# to the left. Fixed-size accents as in TeX; the wide ones stretch over the base.
ACCENTS = {
    commands.BAR: ("\u00AF", False),        # macron
    commands.TILDE: ("\u02DC", False),      # small tilde
    commands.HAT: ("\u02C6", False),        # modifier circumflex
    commands.CHECK: ("\u02C7", False),
    commands.BREVE: ("\u02D8", False),
    commands.ACUTE: ("\u00B4", False),
    commands.GRAVE: ("\u0060", False),
    commands.DOT: ("\u02D9", False),
    commands.DDOT: ("\u00A8", False),
    commands.DDDOT: ("\u20DB", False),
    commands.DDDDOT: ("\u20DC", False),
    commands.MATHRING: ("\u02DA", False),
    commands.VEC: ("\u2192", False),        # drawn at 70 %: TeX's \vec is a small arrow
    commands.OVERLINE: ("\u203E", True),
    # Of the wide accents only U+0302 has wide variants in STIX Two Math that Chromium
    # uses; a tilde or check stays its natural size (a combining U+0303 does not
    # stretch either, and sits off to the left). Over one letter: the fixed accent.
    commands.WIDEHAT: ("\u0302", True),
    commands.WIDETILDE: ("\u02DC", True),
    commands.WIDECHECK: ("\u02C7", True),
    commands.OVERRIGHTARROW: ("\u2192", True),
    commands.OVERLEFTARROW: ("\u2190", True),
    commands.OVERLEFTRIGHTARROW: ("\u2194", True),
}
UNDER_ACCENTS = {
    commands.UNDERLINE: ("\u203E", True),
    commands.UNDERBAR: ("\u203E", True),
    commands.UNDERRIGHTARROW: ("\u2192", True),
    commands.UNDERLEFTARROW: ("\u2190", True),
    commands.UNDERLEFTRIGHTARROW: ("\u2194", True),
}
SMALL_ACCENTS = {commands.VEC: "70%"}
NARROW = {"\u0302": "\u02C6"}
MATRIX_DELIMITED = (r"\pmatrix", r"\bmatrix", r"\Bmatrix", r"\vmatrix", r"\Vmatrix")

# Operators whose scripts go under and over in display style (TeX's \sum class);
# integrals keep their scripts beside (TeX's \nolimits default).
BIG_OPERATORS = set("\u2211\u220F\u2210\u22C0\u22C1\u22C2\u22C3\u2A00\u2A01\u2A02\u2A04\u2A06")

# TeX's ordinary symbols that latex2mathml writes as <mo>.
ORDINARY = set("\u2202\u2207\u221E\u2205\u22A4\u22A5\u2200\u2203\u2204\u2220\u00AC\u2032\u2033")


def _auto_italic(ch):
    """True if Chromium draws `ch` in italic in a one-character <mi> (text-transform: math-auto)."""
    return (("A" <= ch <= "Z") or ("a" <= ch <= "z") or ("\u0391" <= ch <= "\u03A9")
            or ("\u03B1" <= ch <= "\u03C9")
            or ch in "\u0131\u0237\u03D1\u03D5\u03D6\u03F0\u03F1\u03F4\u03F5\u2202\u2207")


NAMED_SPACES = {
    "veryverythinmathspace": 1 / 18, "verythinmathspace": 2 / 18, "thinmathspace": 3 / 18,
    "mediummathspace": 4 / 18, "thickmathspace": 5 / 18, "verythickmathspace": 6 / 18,
    "veryverythickmathspace": 7 / 18,
}
NAMED_SPACES.update({"negative" + k: -v for k, v in list(NAMED_SPACES.items())})
# TeX units that are not CSS units, in em (1em = 18mu = 10pt at TeX's 10pt).
TEX_UNITS = {"mu": 1 / 18, "bp": 72.27 / 72 / 10, "dd": 1238 / 1157 / 10, "cc": 12 * 1238 / 1157 / 10,
             "sp": 1 / 65536 / 10}
LENGTH = re.compile(r"^\s*(-?\d*\.?\d+)\s*([a-z]*)\s*$")

# mathvariant -> the word Unicode uses in "MATHEMATICAL <WORD> SMALL X".
VARIANTS = {
    "bold": "BOLD", "italic": "ITALIC", "bold-italic": "BOLD ITALIC", "double-struck": "DOUBLE-STRUCK",
    "script": "SCRIPT", "bold-script": "BOLD SCRIPT", "fraktur": "FRAKTUR", "bold-fraktur": "BOLD FRAKTUR",
    "sans-serif": "SANS-SERIF", "bold-sans-serif": "SANS-SERIF BOLD",
    "sans-serif-italic": "SANS-SERIF ITALIC", "sans-serif-bold-italic": "SANS-SERIF BOLD ITALIC",
    "monospace": "MONOSPACE",
}
# Letters Unicode encoded before the mathematical block (the "holes" in it).
VARIANT_HOLES = {
    ("ITALIC", "h"): "\u210E",
    ("SCRIPT", "B"): "\u212C", ("SCRIPT", "E"): "\u2130", ("SCRIPT", "F"): "\u2131",
    ("SCRIPT", "H"): "\u210B", ("SCRIPT", "I"): "\u2110", ("SCRIPT", "L"): "\u2112",
    ("SCRIPT", "M"): "\u2133", ("SCRIPT", "R"): "\u211B", ("SCRIPT", "e"): "\u212F",
    ("SCRIPT", "g"): "\u210A", ("SCRIPT", "o"): "\u2134",
    ("FRAKTUR", "C"): "\u212D", ("FRAKTUR", "H"): "\u210C", ("FRAKTUR", "I"): "\u2111",
    ("FRAKTUR", "R"): "\u211C", ("FRAKTUR", "Z"): "\u2128",
    ("DOUBLE-STRUCK", "C"): "\u2102", ("DOUBLE-STRUCK", "H"): "\u210D", ("DOUBLE-STRUCK", "N"): "\u2115",
    ("DOUBLE-STRUCK", "P"): "\u2119", ("DOUBLE-STRUCK", "Q"): "\u211A", ("DOUBLE-STRUCK", "R"): "\u211D",
    ("DOUBLE-STRUCK", "Z"): "\u2124",
}


def styled(text, variant):
    """`text` in a mathvariant, as Unicode mathematical alphanumerics where they exist."""
    word = VARIANTS.get(variant)
    if word is None:
        return text
    out = []
    for ch in text:
        if (word, ch) in VARIANT_HOLES:
            out.append(VARIANT_HOLES[(word, ch)])
            continue
        try:
            name = unicodedata.name(ch)
        except ValueError:
            out.append(ch)
            continue
        rest = re.sub(r"^(LATIN|GREEK) (SMALL|CAPITAL) LETTER ", r"\2 ", name)
        try:
            out.append(unicodedata.lookup(f"MATHEMATICAL {word} {rest}"))
        except KeyError:
            out.append(ch)
    return "".join(out)


class _Converter(Converter):
    """latex2mathml's converter, marking each element with the LaTeX it came from."""

    def _convert_command(self, node, parent, font=None):
        start = len(parent)
        super()._convert_command(node, parent, font)
        new = list(parent)[start:]
        if not new:
            return
        token = node.token
        if token in ACCENTS or token in UNDER_ACCENTS or token in commands.LIMIT:
            new[0].set(SRC, token)
        elif token in MATRIX_DELIMITED:
            for element in (new[0], new[-1]):
                if element.tag == "mo":
                    element.set("stretchy", "true")
        elif token in (commands.SUBSCRIPT, commands.SUPERSCRIPT, commands.SUBSUP) and node.modifier in (
                commands.LIMITS, commands.NOLIMITS):
            automatic = (node.modifier == commands.LIMITS and self.display == "block" and node.children
                         and node.children[0].token in (commands.SUMMATION, commands.PRODUCT))
            if not automatic:  # latex2mathml's own \limits on a top-level \sum of a display
                new[0].set(LIMITS, node.modifier)

    def _convert_symbol(self, node, parent, font=None):
        token = node.token
        if token in (commands.OPERATORNAME, commands.OPERATORNAMESTAR, commands.OPERATORNAMEWITHLIMITS):
            raise MathError(f"{token} needs a name of letters and spaces in braces, "
                            "such as \\operatorname{diag}")
        start = len(parent)
        super()._convert_symbol(node, parent, font)
        new = list(parent)[start:]
        if new:
            new[0].set(SRC, token)


# --- the corrections, each a pass over the tree --------------------------------

LEFTOVER = re.compile(r"\\|&(?!#x?[0-9a-fA-F]+;)")


def _check_and_decode(math, tex):
    for element in math.iter():
        if element.text and element.tag in ("mi", "mo", "mn", "mtext", "ms"):
            if LEFTOVER.search(element.text):
                raise MathError(f"formula {tex!r} uses a macro or an '&' that latex2mathml does "
                                f"not support ({element.text!r}); it would show as raw TeX")
            element.text = html.unescape(element.text)


ARITY = {"mfrac": 2, "msub": 2, "msup": 2, "msubsup": 3, "munder": 2, "mover": 2, "munderover": 3,
         "mroot": 2}


def _check_structure(math, tex):
    """latex2mathml writes \\frac{a} as a one-child <mfrac> without a word: refuse it."""
    for element in math.iter():
        want = ARITY.get(element.tag)
        if want is not None and len(element) != want:
            raise MathError(f"formula {tex!r}: <{element.tag}> has {len(element)} parts, not {want} "
                            "(a missing argument?)")


def _parents(math):
    return {child: parent for parent in math.iter() for child in parent}


def _fix_fonts(math):
    for element in list(math.iter()):
        variant = element.get("mathvariant")
        text = element.text or ""
        src = element.get(SRC, "")
        if element.tag == "mi" and variant is None and src.startswith("&#x") and len(text) == 1 \
                and _auto_italic(text):
            # \mathrm{d}: latex2mathml maps it to the plain letter, which Chromium draws in italic.
            element.set("mathvariant", "normal")
        elif variant in VARIANTS and element.tag in ("mi", "mn"):
            element.text = styled(text, variant)
            del element.attrib["mathvariant"]
        elif variant == "normal" and element.tag == "mi" and len(text) > 1:
            del element.attrib["mathvariant"]
    # A run of upright letters (\mathrm{softmax}) is one name: one <mi>.
    for parent in list(math.iter()):
        children = list(parent)
        i = 0
        while i < len(children):
            run = [children[i]]
            while (_upright_letter(run[-1]) and i + len(run) < len(children)
                   and _upright_letter(children[i + len(run)])):
                run.append(children[i + len(run)])
            if len(run) > 1 and _upright_letter(run[0]):
                run[0].text = "".join(e.text for e in run)
                del run[0].attrib["mathvariant"]
                for extra in run[1:]:
                    parent.remove(extra)
            i += len(run)


def _upright_letter(element):
    return (element.tag == "mi" and element.get("mathvariant") == "normal" and len(element) == 0
            and len(element.text or "") == 1 and element.text.isalpha())


def _fix_symbols(math):
    for element in math.iter():
        src = element.get(SRC, "")
        if element.tag == "mo" and (element.text or "") in ORDINARY:
            element.tag = "mi"
            if _auto_italic(element.text):
                element.set("mathvariant", "normal")
        elif element.tag == "mo" and src.startswith(commands.OPERATORNAME + "{"):
            element.tag = "mi"  # \operatorname{diag}: a name like \tanh, not an operator
            element.set(SRC, "function")
        elif element.tag == "mi" and src in commands.FUNCTIONS:
            element.set(SRC, "function")
        elif element.tag == "mo" and (src in commands.LIMIT or element.get("movablelimits") == "true"):
            element.set("movablelimits", "true")  # \lim, \max, \det, \operatorname*{...}
            element.set("lspace", "0")
            element.set("rspace", "0")
            element.set(SRC, "function")


PRIMES = set("\u2032\u2033\u2034\u2057")


def _is_primed(element):
    """A base followed by its prime, as _fix_primes writes f' : <mrow>f <mo>′</mo></mrow>."""
    return (element.tag == "mrow" and len(element) == 2 and element[1].tag == "mo"
            and bool(element[1].text) and set(element[1].text) <= PRIMES)


def _core(element):
    """The innermost base of a script or under/over construct, or of a primed name."""
    while (element.tag in SCRIPTS + UNDER_OVER and len(element)) or _is_primed(element):
        element = element[0]
    return element


def _fix_primes(math):
    """f' and \\tanh' : the prime after the base, not in a superscript.

    STIX Two Math's prime is drawn high already, for text, and the font has no
    script-size form of it; in a superscript it came out small and floating
    above the letter. A prime with a subscript too (h'_t) stays a superscript.
    """
    for element in math.iter("msup"):
        if len(element) == 2 and element[1].tag in ("mi", "mo") and len(element[1]) == 0 \
                and (element[1].text or "x").strip() and set(element[1].text) <= PRIMES:
            element.tag = "mrow"
            element[1].tag = "mo"
            element[1].attrib = {"lspace": "0", "rspace": "0"}


def _fix_limits(math):
    renames = {"msub": "munder", "msup": "mover", "msubsup": "munderover"}
    for element in math.iter():
        if element.tag not in SCRIPTS or not len(element):
            continue
        base = element[0]
        if base.tag != "mo":
            continue
        is_big = (base.text or "") in BIG_OPERATORS or base.get("movablelimits") == "true"
        limits = element.get(LIMITS)
        if is_big and limits != commands.NOLIMITS:
            element.tag = renames[element.tag]
        if limits == commands.LIMITS:
            base.set("movablelimits", "false")
    for element in math.iter():
        if element.tag in UNDER_OVER and element.get(LIMITS) == commands.LIMITS and len(element) \
                and element[0].tag == "mo":
            element[0].set("movablelimits", "false")


def _fix_accents(math):
    for element in math.iter():
        src = element.get(SRC)
        table = ACCENTS if element.tag == "mover" else UNDER_ACCENTS if element.tag == "munder" else None
        if table is None or src not in table or len(element) != 2:
            continue
        char, stretchy = table[src]
        base, mark = element
        if base.tag == "mrow" and len(base) == 1:  # the base as itself, not a one-item row
            element.remove(base)
            base = base[0]
            element.insert(0, base)
        if stretchy and base.tag == "mi" and len(base.text or "") == 1 and char in NARROW:
            char, stretchy = NARROW[char], False  # \widehat{x}: the combining U+0302 would sit askew
        mark.tag = "mo"
        mark.text = char
        mark.attrib = {"stretchy": "true" if stretchy else "false"}
        if char in "\u2190\u2192\u2194":
            mark.set("lspace", "0")
            mark.set("rspace", "0")
        if src in SMALL_ACCENTS:
            mark.set("mathsize", SMALL_ACCENTS[src])
        element.set("accent" if element.tag == "mover" else "accentunder", "true")


def stretches_vertically(text):
    """True for an operator that the operator dictionary lets grow to the height of
    its row: brackets, bars and vertical arrows (measured in Chromium over every
    character latex2mathml writes as an operator: 34 of them, all of these kinds)."""
    if len(text) != 1:
        return False
    name = unicodedata.name(text, "")
    return (unicodedata.category(text) in ("Ps", "Pe") or text in "|\u2016\u2223\u2225"
            or ("ARROW" in name and ("UP" in name or "DOWN" in name)))


def _fix_stretchy(math):
    parents = _parents(math)
    for element in math.iter("mo"):
        if "stretchy" in element.attrib or "minsize" in element.attrib or "maxsize" in element.attrib:
            continue
        if not stretches_vertically(element.text or ""):
            continue
        # An operator over or under something (a brace, an extensible arrow) stretches to its width.
        parent = parents.get(element)
        while parent is not None and parent.tag in ("mstyle", "mrow", "mpadded") and len(parent) == 1:
            parent = parents.get(parent)
        if parent is not None and parent.tag in UNDER_OVER:
            continue
        element.set("stretchy", "false")


def _em(width):
    """A width attribute in em, or None if it is a CSS length to keep as it is."""
    if width in NAMED_SPACES:
        return NAMED_SPACES[width]
    match = LENGTH.match(width or "")
    if not match:
        return None
    value, unit = float(match.group(1)), match.group(2)
    if unit == "em":
        return value
    if unit in TEX_UNITS:
        return value * TEX_UNITS[unit]
    return None


def _atom(element):
    """TeX's class of a row item, as far as spacing around function names needs it."""
    if element.tag == "mspace":
        return "kern"
    core = _core(element)
    if core.get(SRC) == "function":
        return "op"
    if element.tag == "mo":
        if element.get("form") == "postfix" or (element.text or "") in ")]}\u27E9\u2309\u230B":
            return "close"
        return "mo"
    if element.tag == "mrow" and len(element) and element[0].tag == "mo" and element[0].get("fence") == "true":
        return "inner"  # \left ... \right
    if element.tag in ("mfrac",):
        return "inner"
    return "ord"


def _fix_spacing(math):
    for parent in list(math.iter()):
        if parent.tag not in ROWS:
            continue
        children = list(parent)
        # Thin spaces around function names, as TeX puts them between an Op and an
        # Ord or Inner atom; kerns (\!, \,) between atoms add to them.
        inserts = []
        atoms = [(i, _atom(c)) for i, c in enumerate(children) if _atom(c) != "kern"]
        for (i, a), (j, b) in zip(atoms, atoms[1:]):
            if (a == "op" and b in ("ord", "op", "inner")) or (a in ("ord", "close", "inner") and b == "op"):
                inserts.append(j)
        for j in reversed(inserts):
            space = Element("mspace", {"width": f"{THIN}em"})
            parent.insert(list(parent).index(children[j]), space)
        # Widths in em; adjacent spaces merged; negative space as a negative margin.
        children = list(parent)
        i = 0
        while i < len(children):
            if not _plain_space(children[i]):
                i += 1
                continue
            j = i
            while j + 1 < len(children) and _plain_space(children[j + 1]):
                j += 1
            run = children[i:j + 1]
            total = round(sum(_em(e.get("width", "0em")) for e in run), 4)
            for extra in run[1:]:
                parent.remove(extra)
            if abs(total) < 1e-4:
                parent.remove(run[0])
            elif total > 0:
                run[0].attrib = {"width": f"{total:g}em"}
            else:  # Chromium clamps a negative mspace width to 0; a margin is honoured
                run[0].attrib = {"style": f"margin-inline-start:{total:g}em"}
            i = j + 1


def _plain_space(element):
    """An <mspace> with nothing but a width that _em understands."""
    return (element.tag == "mspace" and set(element.attrib) <= {"width"}
            and _em(element.get("width", "0em")) is not None)


def _clean(math):
    for element in math.iter():
        element.attrib.pop(SRC, None)
        element.attrib.pop(LIMITS, None)
        element.attrib.pop("xmlns", None)
        if (element.tag == "mo" and element.get("movablelimits") == "true"
                and (element.text or "") in BIG_OPERATORS):
            del element.attrib["movablelimits"]  # the operator dictionary says so already
    # A script, fraction or root part that is a row of one item is that item.
    for parent in list(math.iter()):
        if parent.tag not in SCRIPTS + UNDER_OVER + ("mfrac", "mroot"):
            continue
        for i, child in enumerate(list(parent)):
            if child.tag == "mrow" and len(child) == 1 and not child.attrib:
                parent.remove(child)
                parent.insert(i, child[0])


def mathml_tree(tex, display=False):
    """The corrected MathML of `tex` as an ElementTree element (no label yet)."""
    try:
        math = _Converter(display="block" if display else "inline").convert_to_element(tex)
    except MathError:
        raise
    except Exception as exc:  # latex2mathml raises its own errors on bad syntax
        raise MathError(f"cannot convert formula {tex!r}: {type(exc).__name__} {exc}") from exc
    _check_and_decode(math, tex)
    _check_structure(math, tex)
    _fix_fonts(math)
    _fix_symbols(math)
    _fix_primes(math)
    _fix_limits(math)
    _fix_accents(math)
    _fix_stretchy(math)
    _fix_spacing(math)
    _clean(math)
    return math


def to_mathml(tex, display=False):
    """`<math>` markup for the LaTeX `tex`, with an aria-label in words.

    Raises MathError for a formula that latex2mathml cannot render faithfully.
    """
    math = mathml_tree(tex, display)
    words = _tidy(speak(math))
    attrib = {"display": "block"} if display else {}
    attrib["aria-label"] = words
    attrib["data-tex"] = tex.strip()  # the source, for tests that compare with a script's text
    math.attrib = attrib
    return tostring(math, encoding="unicode", short_empty_elements=True)


# --- the accessible name --------------------------------------------------------

OPERATOR_WORDS = {
    "=": "equals", "+": "plus", "-": "minus", "\u2212": "minus", "\u00B1": "plus or minus",
    "\u2213": "minus or plus", "\u00D7": "times", "\u00B7": "times", "\u22C5": "times", "*": "times",
    "\u2217": "times", "\u2299": "element-wise times", "\u2297": "tensor product", "\u2218": "composed with",
    "/": "over", "\u00F7": "divided by", "<": "less than", ">": "greater than",
    "\u2264": "is at most", "\u2265": "is at least", "\u2260": "does not equal", "\u2248": "is approximately",
    "\u2261": "is equivalent to", "\u221D": "is proportional to", "\u223C": "is distributed as",
    "\u226A": "is much less than", "\u226B": "is much greater than",
    "\u2190": "left arrow", "\u2192": "to", "\u21A6": "maps to", "\u21D2": "implies",
    "\u21D4": "if and only if", "\u2208": "in", "\u2209": "not in", "\u2282": "subset of",
    "\u2286": "subset of or equal to", "\u222A": "union", "\u2229": "intersection",
    "\u2211": "sum", "\u220F": "product", "\u222B": "integral", "\u2026": "dots", "\u22EF": "dots",
    "!": "factorial", ":": "colon", ";": ";", ",": ",", ".": ".", "|": "vertical bar",
    "\u2223": "divides", "lim": "limit", "max": "maximum", "min": "minimum", "sup": "supremum",
    "inf": "infimum", "det": "determinant", "arg\u2009max": "arg max", "arg\u2009min": "arg min",
}
SYMBOL_WORDS = {
    "\u2202": "partial", "\u2207": "nabla", "\u221E": "infinity", "\u2205": "empty set",
    "\u22A4": "top", "\u22A5": "bottom", "\u2200": "for all", "\u2203": "there exists",
    "\u2032": "prime", "\u2033": "double prime", "\u2026": "dots", "\u00AC": "not",
}
ACCENT_WORDS = {
    "\u00AF": "bar", "\u203E": "bar", "\u2015": "bar", "\u02DC": "tilde", "\u0303": "tilde", "~": "tilde",
    "\u02C6": "hat", "\u0302": "hat", "^": "hat", "\u02C7": "check", "\u030C": "check",
    "\u02D8": "breve", "\u00B4": "acute", "`": "grave", "\u02D9": "dot", "\u00A8": "double dot",
    "\u20DB": "triple dot", "\u02DA": "ring", "\u2192": "vector", "\u2190": "left vector",
    "\u2194": "left right arrow", "\u23DE": "overbrace", "\u23DF": "underbrace",
}
POWER_WORDS = {"2": "squared", "3": "cubed", "\u22A4": "transpose", "\u2032": "prime",
               "\u2033": "double prime", "*": "star", "\u2217": "star"}
OPENERS = {"(": ("open paren", ")"), "[": ("open bracket", "]"), "{": ("open brace", "}"),
           "\u27E8": ("open angle", "\u27E9"), "\u230A": ("floor of", "\u230B"),
           "\u2308": ("ceiling of", "\u2309")}
CLOSE_WORDS = {")": "close paren", "]": "close bracket", "}": "close brace", "\u27E9": "close angle",
               "\u230B": "", "\u2309": ""}
BARS = {"|": "absolute value of", "\u2016": "norm of"}
BIG_WORDS = {"\u2211": "sum", "\u220F": "product", "\u222B": "integral", "\u22C3": "union",
             "\u22C2": "intersection"}


def _char_words(ch):
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return ""
    name = re.sub(r"^MATHEMATICAL ", "", name)
    name = name.replace(" SYMBOL", "").replace("FINAL ", "").replace("LUNATE ", "")
    match = re.match(r"^(.*?)(?:(LATIN|GREEK) )?(SMALL|CAPITAL) (?:LETTER )?(\w+)$", name)
    if match:
        style, script, case, letter = match.groups()
        style = style.strip().lower()
        if script == "GREEK" or len(letter) > 1:
            letter = {"LAMDA": "lambda"}.get(letter, letter).lower()
            if case == "CAPITAL":
                letter = "capital " + letter
        else:
            letter = letter if case == "CAPITAL" else letter.lower()
        return f"{style} {letter}".strip()
    return name.lower()


def _text_words(text):
    if text in SYMBOL_WORDS:
        return SYMBOL_WORDS[text]
    if len(text) > 1 and text.isascii():
        return text
    return " ".join(w for w in (_char_words(c) if not c.isascii() else c for c in text) if w.strip())


def _is_function(element):
    core = _core(element)
    text = core.text or ""
    return (core.tag == "mi" and len(text) > 1) or (core.tag == "mo" and text in ("lim", "max", "min", "det"))


def _simple(words):
    return len(words.split()) <= 1


def _speak_fence(mo, stack, previous):
    """Words for a bracket or bar in a row, or None if `mo` is not one.

    Brackets pair up through `stack`; after a function name an opening parenthesis
    reads "of" and its closing one is silent, and so is the closing bar of an
    absolute value or a norm.
    """
    text, form = mo.text or "", mo.get("form")
    if text in OPENERS and form != "postfix":
        word, closer = OPENERS[text]
        if previous is not None and _is_function(previous):
            stack.append((closer, ""))
            return "of"
        stack.append((closer, CLOSE_WORDS.get(closer, "")))
        return word
    if text in CLOSE_WORDS and form != "prefix":
        if stack and stack[-1][0] == text:
            return stack.pop()[1]
        return CLOSE_WORDS[text]
    if text in BARS and mo.get("lspace") is None:  # not \middle|
        if stack and stack[-1][0] == text and form != "prefix":
            stack.pop()
            return ""
        stack.append((text, ""))
        return BARS[text]
    return None


def _speak_row(children):
    out = []
    stack = []  # closers to expect: (character, word to say)
    previous = None
    for child in children:
        said = None
        if child.tag == "mo" and len(child) == 0:
            said = _speak_fence(child, stack, previous)
        elif child.tag in SCRIPTS and child[0].tag == "mo" and len(child[0]) == 0:
            fence = _speak_fence(child[0], stack, previous)  # (b_f)^t: the script is on the bracket
            if fence is not None:
                scripts = {"msub": (child[1], None), "msup": (None, child[1])}.get(
                    child.tag, (child[1], child[2] if len(child) > 2 else None))
                said = f"{fence} {_script_suffix(*scripts)}"
        elif child.tag == "mrow" and len(child) and child[0].tag == "mo" and child[0].get("fence") == "true":
            said = _speak_row(list(child)) if previous is None or not _is_function(previous) else None
            if said is None:  # f\left( ... \right): "f of ..."
                inner = list(child)[1:-1] if child[-1].tag == "mo" else list(child)[1:]
                said = "of " + _speak_row(inner)
        if said is None:
            said = speak(child)
        out.append(said)
        if child.tag != "mspace":
            previous = child
    return " ".join(w for w in out if w)


def _script_suffix(sub=None, sup=None):
    """The words that follow a base: "sub t", "squared", "to the t", "sub t sup h"."""
    words = []
    if sub is not None:
        words += ["sub", speak(sub)]
    if sup is not None:
        sup_text = sup.text if sup.tag in ("mi", "mn", "mo") and len(sup) == 0 else None
        if sup_text in POWER_WORDS:
            words.append(POWER_WORDS[sup_text])
        elif sub is not None:
            words += ["sup", speak(sup)]
        else:
            words += ["to the", speak(sup)]
    return " ".join(words)


def _is_evaluation(base):
    """\\left. ... \\right| : an expression evaluated at its subscript."""
    return (base.tag == "mrow" and len(base) >= 2 and base[0].tag == "mo" and not (base[0].text or "")
            and base[-1].tag == "mo" and base[-1].text == "|" and base[-1].get("form") == "postfix")


def _script_words(base, sub=None, sup=None):
    if _is_evaluation(base) and sub is not None:
        words = [_speak_row(list(base)[1:-1]), "evaluated at", speak(sub)]
        if sup is not None:
            words += ["to", speak(sup)]
        return " ".join(words)
    return f"{speak(base)} {_script_suffix(sub, sup)}"


def _big_words(op, under=None, over=None):
    text = op.text or ""
    words = [BIG_WORDS.get(text) or OPERATOR_WORDS.get(text) or speak(op)]
    if under is not None and over is not None:
        words += ["from", speak(under), "to", speak(over), "of"]
    elif under is not None:
        words += ["as" if text == "lim" else "over", speak(under), "of"]
    elif over is not None:
        words += ["to", speak(over), "of"]
    return " ".join(words)


def speak(element):
    """The MathML `element` read in words: "h sub t equals tanh of W x sub t plus ..."."""
    tag, kids = element.tag, list(element)
    if tag in ("mi", "mn", "mtext", "ms"):
        text = (element.text or "").replace("\u00A0", " ").strip()
        return text if tag in ("mn", "mtext", "ms") else _text_words(text)
    if tag == "mo":
        return OPERATOR_WORDS.get(element.text or "") or _text_words(element.text or "")
    if tag in ("mspace", "mphantom", "none", "mprescripts"):
        return ""
    if tag in SCRIPTS:
        base = kids[0]
        if base.tag == "mo" and ((base.text or "") in BIG_OPERATORS or (base.text or "") in BIG_WORDS
                                 or base.get("movablelimits") == "true"):
            if tag == "msub":
                return _big_words(base, under=kids[1])
            if tag == "msup":
                return _big_words(base, over=kids[1])
            return _big_words(base, kids[1], kids[2])
        if tag == "msub":
            return _script_words(base, sub=kids[1])
        if tag == "msup":
            return _script_words(base, sup=kids[1])
        return _script_words(base, sub=kids[1], sup=kids[2])
    if tag in UNDER_OVER:
        base = kids[0]
        accent = element.get("accent") == "true" or element.get("accentunder") == "true"
        if accent and len(kids) == 2 and kids[1].tag == "mo":
            mark = kids[1].text or ""
            word = ACCENT_WORDS.get(mark) or _text_words(mark)
            if tag == "munder":
                word = {"bar": "underline"}.get(word, "under " + word)
            return f"{speak(base)} {word}"
        if base.tag == "mo":
            if tag == "munder":
                return _big_words(base, under=kids[1])
            if tag == "mover":
                return _big_words(base, over=kids[1])
            return _big_words(base, kids[1], kids[2])
        if tag == "munder":
            return f"{speak(base)} under {speak(kids[1])}"
        if tag == "mover":
            return f"{speak(base)} over {speak(kids[1])}"
        return f"{speak(base)} under {speak(kids[1])} over {speak(kids[2])}"
    if tag == "mfrac":
        num, den = speak(kids[0]), speak(kids[1])
        if _simple(num) and _simple(den):
            return f"{num} over {den}"
        return f"fraction {num} over {den} end fraction"
    if tag == "msqrt":
        inner = _speak_row(kids)
        return f"square root of {inner}" + ("" if _simple(inner) else " end root")
    if tag == "mroot":
        return f"root {speak(kids[1])} of {speak(kids[0])} end root"
    if tag == "mtable":
        rows = []
        for r, row in enumerate(kids, 1):
            cells = ", ".join(speak(cell) for cell in row)
            rows.append(f"row {r}: {cells}")
        return "matrix, " + "; ".join(rows) + ", end matrix"
    return _speak_row(kids)


def label(tex, display=False):
    """The words that `to_mathml` puts in the aria-label of `tex`."""
    return _tidy(speak(mathml_tree(tex, display)))


def _tidy(words):
    words = re.sub(r"\s+", " ", words).strip()
    return re.sub(r" ([,.;])", r"\1", words)


# --- the MkDocs hook ---------------------------------------------------------------

def display_parts(tex):
    """A display formula split at its top-level \\qquad: the equations a page sets side by
    side. Shown as one row that wraps, so a phone gets one equation per line."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\" and tex.startswith("\\qquad", i) and depth == 0 \
                and not tex[i + 6:i + 7].isalpha():
            parts.append(tex[start:i])
            i = start = i + 6
            continue
        if ch == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        i += 1
    parts.append(tex[start:])
    return [p.strip() for p in parts if p.strip()]


def convert_page(html_text, where="page"):
    """Every arithmatex formula in `html_text` replaced by MathML (pure; raises MathError).
    A display formula of several equations side by side becomes a row of them that wraps."""

    def replace(match):
        tag, opening, tex = match.group(1), match.group(2), html.unescape(match.group(3))
        display = opening == "\\["
        parts = display_parts(tex) if display else [tex]
        try:
            mathml = "".join(to_mathml(part, display) for part in parts)
        except MathError as exc:
            raise MathError(f"{where}: {exc}") from exc
        if tag != "div":
            return mathml
        row = " math-row" if len(parts) > 1 else ""
        return f'<div class="math-block{row}">{mathml}</div>'

    out = ARITHMATEX.sub(replace, html_text)
    if 'class="arithmatex"' in out:
        raise MathError(f"{where}: a formula was left unconverted")
    return out


def on_page_content(html_text, page, **kwargs):
    try:
        return convert_page(html_text, page.file.src_uri)
    except MathError as exc:
        raise PluginError(str(exc)) from exc
