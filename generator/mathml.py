"""MkDocs hook: the pages' LaTeX as MathML at build time, rendered natively by the browser.

``on_page_content`` replaces pymdownx.arithmatex's ``<span class="arithmatex">\\(...\\)</span>``
and ``<div class="arithmatex">\\[...\\]</div>`` with MathML: no script, no request to
another host. latex2mathml's public ``convert_to_element`` parses the LaTeX; ``_correct``
then fixes what renders wrongly in MathML Core (Chromium), each fix checked in headless
Chromium with STIX Two Math (tests/test_mathml.py): accents as ``<mover accent="true">``
with the spacing character, resting on their letter; brackets and bars outside
``\\left ... \\right`` fixed in size; ``\\sum \\prod`` with limits under and over in
display; ``\\partial \\top`` as symbols and ``\\operatorname{diag}`` as a name like
``\\tanh``, with TeX's thin spaces; ``\\!`` as a negative margin; a prime after its base.
Only the commands in ``COMMANDS`` (what the pages and tables use) are accepted: any
other, a stray ``&`` or a missing argument fails the build naming the page and formula.

Accessible name: a screen reader that reads MathML (NVDA with MathCAT, JAWS, VoiceOver)
speaks a formula from its structure and lets the reader walk through it; an
``aria-label`` would replace that with flat text. So only a formula holding a symbol whose
character name is not its meaning here (``SAY_MEANING``: ⊙ "circled dot operator" for
element-wise times, ⊤ "down tack" for transpose, ‖ "double vertical line" for a norm)
gets a spoken label from ``speak``.

Search: Material's search plugin indexes each page with its formulas as readable text
(``readable``: h<sub>t−1</sub>, σ(b<sub>f</sub>), (−1/√H, 1/√H)); the page keeps MathML.
"""

import html
import re
import unicodedata
import xml.etree.ElementTree as ET

from latex2mathml.converter import convert_to_element

try:
    from generator.mathfont import italic
except ImportError:  # loaded by MkDocs as a hook file, with generator/ on sys.path
    from mathfont import italic

from mkdocs.exceptions import PluginError

ARITHMATEX = re.compile(
    r'<(span|div) class="arithmatex">\s*(\\\(|\\\[)(.*?)(\\\)|\\\])\s*</\1>', re.S)

GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho "
         "sigma tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi "
         "Omega").split()
COMMANDS = set(GREEK) | set(
    "frac sqrt text operatorname left right bar tilde hat lVert rVert lvert rvert "
    "odot times cdot le ge approx ne leftarrow rightarrow to partial top sum prod "
    "tanh exp log ln max min quad qquad".split())
SPACES = ",:;! "  # \, \: \; \! and a backslash-space
COMMAND = re.compile(r"\\([A-Za-z]+|.)")

ACCENTS = {"\u00AF": "\u00AF", "~": "\u02DC", "^": "\u02C6"}  # latex2mathml's mark: ours
BIG = {"\u2211", "\u220F"}
SYMBOLS = {"\u2202", "\u22A4"}  # ∂ ⊤: ordinary symbols, not operators
PRIMES = set("\u2032\u2033")
THIN = "0.1667em"


class MathError(ValueError):
    """A formula that cannot be rendered faithfully."""


def stretches_vertically(text):
    """True for a bracket or bar, which the operator dictionary lets grow to its row."""
    return len(text) == 1 and (unicodedata.category(text) in ("Ps", "Pe") or text in "|\u2016")


def _check_source(tex):
    for match in COMMAND.finditer(tex):
        name = match.group(1)
        if name not in COMMANDS and name not in SPACES and name not in "{}|":
            raise MathError(f"formula {tex!r} uses \\{name}, which this site's math hook "
                            f"does not support (it supports: {', '.join(sorted(COMMANDS))})")
    if re.search(r"(?<!\\)&", tex):
        raise MathError(f"formula {tex!r}: a stray '&' (no matrices here)")


def _is_name(element):
    """A function name: tanh, diag (\\operatorname), or either with a prime or scripts."""
    while element.tag in ("msub", "msup", "msubsup", "mrow") and len(element) \
            and (element.tag != "mrow" or _primed(element)):
        element = element[0]
    text = element.text or ""
    return element.tag == "mi" and len(text) > 1 and text.isalpha()


def _primed(element):
    return (element.tag == "mrow" and len(element) == 2 and element[1].tag == "mo"
            and set(element[1].text or "x") <= PRIMES)


def _correct(math, tex):
    for element in math.iter():
        if element.text and element.tag in ("mi", "mo", "mn", "mtext"):
            element.text = html.unescape(element.text)
            if "\\" in element.text:
                raise MathError(f"formula {tex!r}: {element.text!r} would show as raw TeX")
    for element in list(math.iter()):
        tag, kids, text = element.tag, list(element), element.text or ""
        want = {"mfrac": 2, "msub": 2, "msup": 2, "msubsup": 3, "mover": 2}.get(tag)
        if want and len(kids) != want:
            raise MathError(f"formula {tex!r}: <{tag}> has {len(kids)} parts, not {want} "
                            "(a missing argument?)")
        if tag == "mover" and kids[1].tag == "mo" and kids[1].text in ACCENTS:
            element.set("accent", "true")
            kids[1].text = ACCENTS[kids[1].text]
            kids[1].attrib = {"stretchy": "false"}
        elif tag == "mo" and text in SYMBOLS:
            element.tag = "mi"
            if italic(text):
                element.set("mathvariant", "normal")  # TeX's \partial is upright
        elif tag == "mo" and len(text) > 1 and text.isalpha():
            element.tag = "mi"  # \operatorname{diag}: a name, like \tanh
        elif tag == "mo" and stretches_vertically(text) and element.get("fence") != "true":
            element.attrib = {"stretchy": "false"}
        elif tag in ("msub", "msubsup", "msup") and kids[0].tag == "mo" and kids[0].text in BIG:
            element.tag = {"msub": "munder", "msup": "mover", "msubsup": "munderover"}[tag]
        elif tag == "msup" and kids[1].tag in ("mi", "mo") and set(kids[1].text or "x") <= PRIMES:
            element.tag = "mrow"  # f': the prime follows its base, at its size
            kids[1].tag, kids[1].attrib = "mo", {"lspace": "0", "rspace": "0"}
        elif tag == "mspace" and element.get("width") == "negativethinmathspace":
            element.attrib = {"style": "margin-inline-start:-0.1667em"}
        element.attrib.pop("xmlns", None)
        if tag in ("msub", "msup", "msubsup", "munder", "mover", "munderover", "mfrac",
                   "msqrt") or element is math:
            for i, kid in enumerate(list(element)):  # a part that is a row of one: itself
                if kid.tag == "mrow" and len(kid) == 1 and not kid.attrib:
                    element.remove(kid)
                    element.insert(i, kid[0])
    if len(math) == 1 and math[0].tag == "mrow" and not math[0].attrib:  # <math> is a row
        row = math[0]
        math.remove(row), math.extend(list(row))
    for row in [e for e in math.iter() if e.tag in ("math", "mrow", "msqrt")]:
        _space_names(row)


ORD = ("mi", "mn", "msub", "msup", "msubsup", "mover")


def _space_names(row):
    """TeX's thin space around a function name: after it before a letter, a name or a
    \\left group, before it after a letter or number; a \\! right after a name cancels
    the space after it (\\operatorname{diag}\\!\\left( ...)."""
    kids = list(row)
    for a, b in zip(kids, kids[1:]):
        if _is_name(a) and b.tag == "mspace" and "-0.1667em" in b.get("style", ""):
            row.remove(b)
        elif (_is_name(a) and (b.tag in ORD or (b.tag == "mrow" and len(b) and b[0].get("fence") == "true"))) \
                or (_is_name(b) and a.tag in ORD and not _is_name(a)):
            row.insert(list(row).index(b), ET.Element("mspace", {"width": THIN}))


def mathml_tree(tex, display=False):
    """The corrected MathML of `tex` as an ElementTree element (no label yet)."""
    _check_source(tex)
    try:
        math = convert_to_element(tex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises its own errors on bad syntax
        raise MathError(f"cannot convert formula {tex!r}: {type(exc).__name__} {exc}") from exc
    _correct(math, tex)
    return math


SAY_MEANING = {"\u2299", "\u22A4", "\u2016"}


def to_mathml(tex, display=False):
    """`<math>` markup for the LaTeX `tex`; with a spoken aria-label where the MathML's
    characters would say something else than they mean (SAY_MEANING)."""
    math = mathml_tree(tex, display)
    attrib = {"display": "block"} if display else {}
    if any((e.text or "") in SAY_MEANING for e in math.iter()):
        attrib["aria-label"] = label_of(math)
    math.attrib = attrib
    return ET.tostring(math, encoding="unicode", short_empty_elements=True)


# --- the spoken label -------------------------------------------------------------

WORDS = {
    "=": "equals", "+": "plus", "-": "minus", "\u2212": "minus", "\u00D7": "times",
    "\u22C5": "times", "\u00B7": "times", "\u2299": "element-wise times", "/": "over",
    "<": "less than", ">": "greater than", "\u2264": "is at most", "\u2265": "is at least",
    "\u2248": "is approximately", "\u2260": "does not equal", "\u2190": "left arrow",
    "\u2192": "to", "\u2202": "partial", "\u22A4": "transpose", "\u2211": "sum",
    "\u220F": "product", "\u00AF": "bar", "\u02DC": "tilde", "\u02C6": "hat", ",": ",",
    ".": ".", "(": "open paren", ")": "close paren", "[": "open bracket",
    "]": "close bracket", "\u2032": "prime",
}
POWERS = {"2": "squared", "\u22A4": "transpose", "\u2032": "prime"}
BARS = {"|": "absolute value of", "\u2016": "norm of"}
OPEN = {"(": ")", "[": "]"}


def _token(element):
    text = (element.text or "").replace("\u00A0", " ").strip()
    if element.tag in ("mn", "mtext") or (len(text) > 1 and text.isalpha()):
        return text
    if element.tag == "mo" or text in WORDS:
        return WORDS.get(text, text)
    words = []
    for ch in text:
        m = re.match(r"(LATIN|GREEK) (SMALL|CAPITAL) LETTER (\w+)$", unicodedata.name(ch, ""))
        script, case, letter = m.groups() if m else ("", "", unicodedata.name(ch, ch))
        letter = letter.lower().replace("lamda", "lambda")
        words.append(letter.upper() if (script, case) == ("LATIN", "CAPITAL")
                     else "capital " + letter if case == "CAPITAL" else letter)
    return " ".join(words)


def _row(kids):
    """A row in words: a bracket after a name reads "of" (and its closer nothing), a bar
    pair reads "absolute value of" or "norm of"."""
    out, closers, previous = [], [], None  # closers: (character, what it says)
    for kid in kids:
        text = (kid.text or "") if kid.tag == "mo" and not len(kid) else None
        after_name = previous is not None and _is_name(previous)
        if text in OPEN:
            closers.append((OPEN[text], "" if after_name else WORDS[OPEN[text]]))
            said = "of" if after_name else WORDS[text]
        elif text in BARS and not (closers and closers[-1][0] == text):
            closers.append((text, ""))
            said = BARS[text]
        elif text is not None and closers and closers[-1][0] == text:
            said = closers.pop()[1]
        elif kid.tag == "mrow" and len(kid) > 2 and kid[0].get("fence") == "true":
            inner = _row(list(kid)[1:-1])
            said = (f"of {inner}" if after_name
                    else f"{speak(kid[0])} {inner} {speak(kid[-1])}")
        else:
            said = speak(kid)
        out.append(said)
        if kid.tag != "mspace":
            previous = kid
    return " ".join(w for w in out if w)


def speak(element):
    """The MathML `element` in words: "h sub t equals tanh of W x sub t plus ..."."""
    tag, kids = element.tag, list(element)
    if tag in ("mi", "mn", "mo", "mtext"):
        return _token(element)
    if tag == "mspace":
        return ""
    if tag in ("msub", "msup", "msubsup"):
        words = [speak(kids[0])] + (["sub", speak(kids[1])] if tag != "msup" else [])
        sup = kids[-1] if tag != "msub" else None
        if sup is not None:
            power = POWERS.get(sup.text) if not len(sup) else None
            words += [power] if power else ["sup" if tag == "msubsup" else "to the", speak(sup)]
        return " ".join(words)
    if tag in ("munder", "mover", "munderover"):
        if element.get("accent") == "true":
            return f"{speak(kids[0])} {speak(kids[1])}"
        under = kids[1] if tag != "mover" else None
        over = kids[-1] if tag != "munder" else None
        words = [speak(kids[0])]
        words += ["from", speak(under)] if under is not None else []
        words += ["to", speak(over)] if over is not None else []
        return " ".join(words + ["of"])
    if tag == "mfrac":
        num, den = speak(kids[0]), speak(kids[1])
        if len(num.split()) <= 1 and len(den.split()) <= 1:
            return f"{num} over {den}"
        return f"fraction {num} over {den} end fraction"
    if tag == "msqrt":
        inner = _row(kids)
        return f"square root of {inner}" + ("" if len(inner.split()) <= 1 else " end root")
    return _row(kids)


def label_of(math):
    words = re.sub(r"\s+", " ", speak(math)).strip()
    return re.sub(r" ([,.;])", r"\1", words)


def label(tex, display=False):
    """The words `to_mathml` would put in the aria-label of `tex` (tests)."""
    return label_of(mathml_tree(tex, display))


# --- the MkDocs hook ---------------------------------------------------------------

def display_parts(tex):
    """A display formula split at its \\qquad: the equations a page sets side by side,
    shown as one row that wraps (a phone gets one equation per line)."""
    return [p.strip() for p in re.split(r"\\qquad(?![A-Za-z])", tex) if p.strip()]


def readable(element):
    """A formula as the search index shows it: h<sub>t−1</sub>, σ(b<sub>f</sub>),
    (−1/√H, 1/√H), C̃<sub>t</sub> (Material's index keeps <sub> and <sup>)."""
    tag, kids = element.tag, list(element)
    if tag in ("mi", "mn", "mo", "mtext"):
        text = element.text or ""
        return html.escape(f" {text} " if tag == "mo" and text in BINARY else
                           text + " " if text == "," else text)
    if tag in ("msub", "msup", "msubsup", "munder", "mover", "munderover"):
        if element.get("accent") == "true":
            return readable(kids[0]) + {"\u00AF": "\u0304", "\u02DC": "\u0303"}.get(
                kids[1].text, "\u0302")
        sub = kids[1] if tag in ("msub", "msubsup", "munder", "munderover") else None
        sup = kids[-1] if tag not in ("msub", "munder") else None
        tight = lambda e: readable(e).replace(" ", "")  # noqa: E731
        return (readable(kids[0]) + (f"<sub>{tight(sub)}</sub>" if sub is not None else "")
                + (f"<sup>{tight(sup)}</sup>" if sup is not None else ""))
    if tag == "mfrac":
        return "/".join(_grouped(kid) for kid in kids)
    if tag == "msqrt":
        return "\u221A" + _grouped(kids[0] if len(kids) == 1 else element[0])
    if tag == "mspace":
        return " " if "-" not in element.get("style", "") else ""
    return "".join(readable(kid) for kid in kids)


BINARY = {"=", "+", "\u2212", "\u2299", "\u00D7", "\u2264", "\u2248", "\u2190", "\u2192", "<", ">"}


def _grouped(element):
    text = readable(element)
    return text if len(element) == 0 or element.tag in ("msub", "msup") else f"({text})"


def search_text(html_text):
    """The page as the search index reads it: each <math> as its readable text."""
    def one(match):  # a minus after an opening or an operator is a sign: no spaces
        text = readable(ET.fromstring(match.group(0))).strip()
        return re.sub(r"(^|[(\[=] ?) \u2212 ", "\\1\u2212", text)

    return re.sub(r"<math\b.*?</math>", one, html_text, flags=re.S)


def convert_page(html_text, where="page"):
    """Every arithmatex formula in `html_text` replaced by MathML (pure; raises MathError)."""

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


_PAGES = {}  # src_uri -> the page's content with MathML, while the search plugin reads it


def on_page_content(html_text, page, **kwargs):
    """The page with readable formulas for Material's search plugin, whose on_page_context
    runs before this hook's (MkDocs runs hooks after plugins); then the page with MathML."""
    try:
        content = convert_page(html_text, page.file.src_uri)
    except MathError as exc:
        raise PluginError(str(exc)) from exc
    _PAGES[page.file.src_uri] = content
    return search_text(content)


def on_page_context(context, page, **kwargs):
    page.content = _PAGES.pop(page.file.src_uri, page.content)
    return context
