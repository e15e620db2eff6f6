"""MkDocs hook: render the pages' LaTeX as MathML at build time.

pymdownx.arithmatex (generic mode) wraps each formula as
``<span class="arithmatex">\\(...\\)</span>`` or ``<div class="arithmatex">\\[...\\]</div>``;
this hook replaces them with MathML from latex2mathml, which browsers render
natively. No math library is served and nothing is fetched from another host.

latex2mathml passes a macro it does not know through as text (``\\foo``
becomes ``<mi>\\foo</mi>``); such a formula fails the build, naming the page
and the formula, instead of showing raw TeX to a reader.
"""

import html
import re

from latex2mathml.converter import convert
from mkdocs.exceptions import PluginError

ARITHMATEX = re.compile(
    r'<(span|div) class="arithmatex">\s*(\\\(|\\\[)(.*?)(\\\)|\\\])\s*</\1>', re.S)
LEFTOVER = re.compile(r"<m(?:i|o|n|text)[^>]*>[^<]*(\\|&amp;(?!#)|&(?![#a-z]))[^<]*</m")
XMLNS = ' xmlns="http://www.w3.org/1998/Math/MathML"'


def to_mathml(tex, display, where):
    try:
        mathml = convert(tex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises its own errors on bad syntax
        raise PluginError(f"{where}: cannot convert formula {tex!r}: {exc}") from exc
    if LEFTOVER.search(mathml):
        raise PluginError(f"{where}: formula {tex!r} uses a macro or an '&' that "
                          "latex2mathml does not support; it would show as raw TeX")
    label = html.escape(tex.strip(), quote=True)
    return mathml.replace(XMLNS, "", 1).replace("<math ", f'<math alttext="{label}" ', 1)


def on_page_content(html_text, page, **kwargs):
    where = page.file.src_uri

    def replace(match):
        tag, opening, tex = match.group(1), match.group(2), html.unescape(match.group(3))
        mathml = to_mathml(tex, opening == "\\[", where)
        return f'<div class="math-block">{mathml}</div>' if tag == "div" else mathml

    out = ARITHMATEX.sub(replace, html_text)
    if 'class="arithmatex"' in out:
        raise PluginError(f"{where}: a formula was left unconverted")
    return out
