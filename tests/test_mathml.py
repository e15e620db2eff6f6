"""The MathML hook (generator/mathml.py): the markup of each construct, the
accessible name, every formula of the pages, and the rendering in Chromium.

The markup tests parse what `to_mathml` returns and check what the browser
needs (an accent is an accent, a norm bar does not stretch, a \\left bracket
does); the browser tests measure the boxes Chromium draws. Nothing here builds
the site or needs the network: the pages' formulas are read from docs/*.md
through Python-Markdown with mkdocs.yml's extensions, as MkDocs reads them.
"""

import html
import re
import unicodedata
import xml.etree.ElementTree as ET

import pytest

from helpers import BOXES_JS, DOCS, FONT, TRICKY, fixture_html, markdown_converter, open_fixture
from generator import mathml
from generator.mathml import MathError, convert_page, to_mathml

BAR, TILDE, HAT = "\u00AF", "\u02DC", "\u02C6"
NORM = "\u2016"


def tree(tex, display=False):
    """The <math> element `to_mathml` writes, parsed."""
    return ET.fromstring(to_mathml(tex, display))


def first(element, tag):
    found = element.find(f".//{tag}") if element.tag != tag else element
    assert found is not None, f"no <{tag}> in {ET.tostring(element, encoding='unicode')}"
    return found


def mos(element, text):
    return [mo for mo in element.iter("mo") if mo.text == text]


# --- accents ------------------------------------------------------------------

@pytest.mark.parametrize("tex, char, stretchy", [
    (r"\bar{A}", BAR, "false"),
    (r"\tilde{h}", TILDE, "false"),
    (r"\hat{Y}", HAT, "false"),
    (r"\bar{AB}", BAR, "false"),        # TeX's \bar keeps its width over a wide base
])
def test_accent_is_an_accent_mover_with_a_spacing_accent_character(tex, char, stretchy):
    mover = first(tree(tex), "mover")
    assert mover.get("accent") == "true"
    base, mark = list(mover)
    assert mark.tag == "mo" and mark.text == char
    assert mark.get("stretchy") == stretchy
    assert not unicodedata.combining(char)


def test_accent_base_is_the_letter_itself_not_a_one_item_row():
    base = list(first(tree(r"\tilde{h}"), "mover"))[0]
    assert base.tag == "mi" and base.text == "h"


def test_scripts_attach_to_the_accented_base():
    msubsup = first(tree(r"\bar{A}^h_t"), "msubsup")
    base, sub, sup = list(msubsup)
    assert base.tag == "mover" and base.get("accent") == "true"
    assert [base[0].text, base[1].text, sub.text, sup.text] == ["A", BAR, "t", "h"]


def test_nested_accents_are_both_accents():
    msub = first(tree(r"\bar{\tilde{H}}_t"), "msub")
    outer = msub[0]
    inner = outer[0]
    assert outer.tag == inner.tag == "mover"
    assert outer.get("accent") == inner.get("accent") == "true"
    assert [inner[0].text, inner[1].text, outer[1].text, msub[1].text] == ["H", TILDE, BAR, "t"]


# --- delimiters ----------------------------------------------------------------

@pytest.mark.parametrize("tex, char", [
    (r"\lVert g \rVert", NORM),
    (r"\|x\|", NORM),
    (r"\lvert V \rvert", "|"),
    (r"|\lambda|", "|"),
    (r"\frac{\theta}{\lVert g \rVert}\, g \quad \text{if } \lVert g \rVert > \theta", NORM),
    (r"(R_t \odot H_{t-1})^\top", "("),
    (r"[h_{t-1}, x_t]", "]"),
])
def test_delimiters_without_left_right_do_not_stretch(tex, char):
    for display in (False, True):
        found = mos(tree(tex, display), char)
        assert found and all(mo.get("stretchy") == "false" for mo in found)


def test_every_bracket_bar_and_vertical_arrow_outside_left_right_is_fixed():
    math = tree(r"(x) [y] \| z \| \{ a \} \lvert b \rvert")
    loose = [mo.text for mo in math.iter("mo")
             if mathml.stretches_vertically(mo.text or "") and mo.get("stretchy") != "false"]
    assert loose == []


@pytest.mark.parametrize("tex, opening, closing", [
    (r"\left( \frac{a}{b} \right)", "(", ")"),
    (r"\left. \frac{a}{b} \right|_{x=0}", None, "|"),
])
def test_left_right_delimiters_stretch(tex, opening, closing):
    math = tree(tex, True)
    fences = [mo for mo in math.iter("mo") if mo.get("fence") == "true"]
    assert [mo.get("stretchy") for mo in fences] == ["true", "true"]
    assert [mo.get("form") for mo in fences] == ["prefix", "postfix"]
    assert fences[0].text == opening and fences[1].text == closing


# --- big operators and limits --------------------------------------------------

def test_product_takes_limits_under_and_over_in_display_and_inline():
    for display in (True, False):
        math = tree(r"\prod_{j=k+1}^{t} \frac{\partial h_j}{\partial h_{j-1}}", display)
        op = first(math, "munderover")
        assert op[0].text == "\u220F" and op[0].get("movablelimits") != "false"
        assert math.find(".//msubsup") is None


def test_sum_inside_a_fraction_of_a_display_also_gets_movable_limits():
    op = first(tree(r"\frac{\sum_{i=1}^n x_i}{n}", True), "munderover")
    assert op[0].text == "\u2211"


# --- names, fonts and symbols --------------------------------------------------

def test_operatorname_is_an_upright_name_like_tanh():
    math = tree(r"\operatorname{softmax}(V h_t + b_y) + \tanh(x)")
    names = [mi.text for mi in math.iter("mi") if len(mi.text or "") > 1]
    assert names == ["softmax", "tanh"]
    assert not [mo for mo in math.iter("mo") if mo.text == "softmax"]


def test_ordinary_symbols_are_identifiers():
    math = tree(r"\frac{\partial L}{\partial H} + H^\top")
    partials = [mi for mi in math.iter("mi") if mi.text == "\u2202"]
    assert len(partials) == 2 and all(p.get("mathvariant") == "normal" for p in partials)
    assert first(math, "msup")[1].tag == "mi" and first(math, "msup")[1].text == "\u22A4"
    assert not [mo for mo in math.iter("mo") if mo.text in "\u2202\u22A4"]


def test_a_prime_follows_its_base_unless_there_is_a_subscript_too():
    # STIX Two Math's prime is a text glyph drawn high, with no script form: in a
    # superscript it came out small and floating.
    math = tree(r"\tanh'(a) + f''")
    assert math.find(".//msup") is None
    primed = [row for row in math.iter("mrow") if len(row) == 2 and row[1].tag == "mo"]
    assert [(row[0].text, row[1].text) for row in primed] == [("tanh", "\u2032"), ("f", "\u2033")]
    sub_and_prime = first(tree(r"h'_t"), "msubsup")
    assert [e.text for e in sub_and_prime] == ["h", "t", "\u2032"]


def test_odot_and_text():
    math = tree(r"C_t = f_t \odot C_{t-1} \qquad \text{(along the cell path)}")
    assert mos(math, "\u2299")
    assert first(math, "mtext").text.replace("\u00A0", " ") == "(along the cell path)"


# --- spacing -------------------------------------------------------------------

def spaces(math):
    return [(s.get("width"), s.get("style")) for s in math.iter("mspace")]


def test_negative_and_named_spaces_are_em_and_margins():
    markup = to_mathml(r"a\!b\,c\quad d")
    assert "mathspace" not in markup
    assert spaces(ET.fromstring(markup)) == [(None, "margin-inline-start:-0.1667em"),
                                             ("0.167em", None), ("1em", None)]


def test_function_names_get_tex_thin_spaces():
    assert spaces(tree(r"\log x")) == [("0.1667em", None)]
    assert spaces(tree(r"\log(x)")) == []
    assert spaces(tree(r"2 \tanh x")) == [("0.1667em", None), ("0.1667em", None)]
    # \operatorname{diag}\!\left( : TeX's thin space before the \left group, cancelled by \!
    assert spaces(tree(r"\operatorname{diag}\!\left(\tanh'(a_j)\right) U")) == []
    assert spaces(tree(r"\operatorname{diag}\left(x\right)")) == [("0.1667em", None)]


# --- markup, errors, the hook --------------------------------------------------

def test_text_is_escaped():
    markup = to_mathml(r"\text{a<b} < c")
    assert "a&lt;b" in markup and ET.fromstring(markup).find(".//mtext").text == "a<b"


@pytest.mark.parametrize("tex", [r"\foo x", r"a & b", r"\frac{a}", r"x^", r"\left( x",
                                 r"\mathbf{x}", r"\lim_{x} f", r"\vec{v}", r"\begin{pmatrix} a \end{pmatrix}"])
def test_unknown_macro_or_bad_syntax_fails(tex):
    with pytest.raises(MathError):
        to_mathml(tex)


def test_hook_converts_arithmatex_spans_and_names_the_page_on_error():
    page = ('<p>See <span class="arithmatex">\\(h_t\\)</span>.</p>'
            '<div class="arithmatex">\\[\n\\bar{A}^h_t = 1\n\\]</div>')
    out = convert_page(page, "ch.md")
    assert 'class="arithmatex"' not in out
    assert out.count("<math") == 2 and '<div class="math-block"><math display="block"' in out
    with pytest.raises(MathError, match=r"^ch\.md: .*\\foo"):
        convert_page('<span class="arithmatex">\\(\\foo\\)</span>', "ch.md")


def test_a_label_only_where_a_character_would_be_read_for_its_glyph():
    """MathML readers speak the structure; the label is for the symbols whose character
    names say something else (circled dot operator, down tack, double vertical line)."""
    plain = ET.fromstring(to_mathml(r"\bar{A}^h_t + \sigma(b_f)"))
    assert plain.get("aria-label") is None
    for tex, words in [(r"f_t \odot C_{t-1}", "f sub t element-wise times C sub t minus 1"),
                       (r"W^\top", "W transpose"), (r"\lVert g \rVert", "norm of g")]:
        assert ET.fromstring(to_mathml(tex)).get("aria-label") == words
    markup = to_mathml(r"\tilde{C}_t \odot x")
    assert "\\" not in markup and "alttext" not in markup and "xmlns" not in markup


# --- the accessible name -------------------------------------------------------

@pytest.mark.parametrize("tex, words", [
    (r"h_t = \tanh(W x_t + U h_{t-1} + b_h)",
     "h sub t equals tanh of W x sub t plus U h sub t minus 1 plus b sub h"),
    (r"\bar{\tilde{H}}_t = \bar{H}_t \odot (1 - Z_t)",
     "H tilde bar sub t equals H bar sub t element-wise times open paren 1 minus Z sub t close paren"),
    (r"g \leftarrow \frac{\theta}{\lVert g \rVert}\, g \quad \text{if } \lVert g \rVert > \theta .",
     "g left arrow fraction theta over norm of g end fraction g if norm of g greater than theta."),
    (r"\frac{\partial h_t}{\partial h_k} = \prod_{j=k+1}^{t} \operatorname{diag}\!\left(\tanh'(a_j)\right) U",
     "fraction partial h sub t over partial h sub k end fraction equals product from j equals k plus 1 "
     "to t of diag of tanh prime of a sub j U"),
    (r"\lvert V \rvert \times H", "absolute value of V times H"),
    (r"H_{t-1}^\top \bar{A}^z_t", "H sub t minus 1 transpose A bar sub t sup z"),
    (r"10^{-14}", "10 to the minus 14"),
    (r"\sigma(b_f)^t", "sigma open paren b sub f close paren to the t"),
    (r"\tanh'(a) = 1 - \tanh^2(a) \le 1", "tanh prime of a equals 1 minus tanh squared of a is at most 1"),
    (r"(-1/\sqrt{H}, 1/\sqrt{H})", "open paren minus 1 over square root of H, 1 over square root of H close paren"),
    (r"\hat{Y}_t = H_t W_{hq} + b_q", "Y hat sub t equals H sub t W sub h q plus b sub q"),
    (r"\sum_{k=1}^{t} x_k", "sum from k equals 1 to t of x sub k"),
    (r"\tanh(W (a) + b)", "tanh of W open paren a close paren plus b"),
])
def test_label_reads_the_formula_in_words(tex, words):
    assert mathml.label(tex) == words


# --- every formula of the pages --------------------------------------------------

def page_formulas():
    """(page, LaTeX, display) for every formula on the hand-written pages."""
    md = markdown_converter()
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        out = md.reset().convert(path.read_text("utf-8"))
        for match in mathml.ARITHMATEX.finditer(out):
            found.append((path.relative_to(DOCS).as_posix(), html.unescape(match.group(3)),
                          match.group(2) == "\\["))
    return found


PAGE_FORMULAS = page_formulas()


def test_the_pages_have_formulas_of_every_kind():
    texts = " ".join(tex for _, tex, _ in PAGE_FORMULAS)
    assert len(PAGE_FORMULAS) > 150 and any(display for *_, display in PAGE_FORMULAS)
    for construct in (r"\bar", r"\tilde", r"\hat", r"\lVert", r"\lvert", r"\left", r"\prod",
                      r"\operatorname", r"\text", r"\odot", r"\top", r"\partial", r"\!", r"\qquad"):
        assert construct in texts, construct


@pytest.mark.parametrize("page, tex, display", PAGE_FORMULAS,
                         ids=[f"{p}:{i}" for i, (p, *_) in enumerate(PAGE_FORMULAS)])
def test_every_formula_on_the_pages_converts_with_a_word_label_where_it_needs_one(page, tex, display):
    math = ET.fromstring(to_mathml(tex, display))
    words = math.get("aria-label")
    needs = any(s in "".join(math.itertext()) for s in "\u2299\u22A4\u2016")
    assert bool(words) == needs
    if words:
        assert "\\" not in words and not re.search(r"[_^{}]", words), words
    assert math.find("mrow") is not None or len(math)
    # nothing of latex2mathml's that Chromium would misdraw
    assert not [mo for mo in math.iter("mo")
                if mathml.stretches_vertically(mo.text or "") and mo.get("stretchy") is None]
    assert not [m for m in math.iter("mover") if m.get("accent") != "true" and m[0].tag != "mo"]
    assert "mathspace" not in ET.tostring(math, encoding="unicode")
    assert not [m for m in math.iter() if m.tag in ("msub", "msubsup") and (m[0].text or "x") in "\u2211\u220F"]


# --- in Chromium --------------------------------------------------------------------

@pytest.fixture(scope="module")
def rendered(browser):
    page = open_fixture(browser, fixture_html(), FONT.read_bytes())
    data = page.evaluate(BOXES_JS)
    tree_ = page.context.new_cdp_session(page).send("Accessibility.getFullAXTree")
    page.close()
    assert data["faces"] == ["STIX Two Math:loaded"], data["faces"]
    return data["boxes"], tree_


@pytest.mark.browser
def test_formula_boxes_are_not_empty(rendered):
    boxes, _ = rendered
    assert set(boxes) == set(TRICKY)
    for key, b in boxes.items():
        assert b["math"]["w"] > 10 and b["math"]["h"] > 5, key


@pytest.mark.browser
@pytest.mark.parametrize("key", ["bar", "bartilde", "hat", "gru"])
def test_accent_sits_above_its_base_not_beside_it(rendered, key):
    boxes, _ = rendered
    movers = boxes[key]["movers"]
    assert movers
    for m in movers:
        base, mark = m["base"], m["mark"]
        # An accent, drawn at its base's size and resting on it; latex2mathml's plain
        # <mover> drew a limit: a dash at script size, floating 0.17em above.
        assert m["sizes"][1] == m["sizes"][0], (key, m)
        assert abs(mark["bottom"] - base["top"]) <= 1, (key, m)
        centre = (mark["left"] + mark["right"]) / 2
        assert base["left"] <= centre <= base["right"], (key, m)  # over the letter, not beside it
        assert 1 < mark["w"] < base["w"] + 4, (key, m)


@pytest.mark.browser
@pytest.mark.parametrize("key", ["norm_inline", "norm_display", "abs"])
def test_bars_are_one_line_high(rendered, key):
    boxes, _ = rendered
    size = boxes[key]["fontSize"]
    bars = boxes[key]["bars"]
    assert len(bars) == (2 if key == "abs" else 4)
    for bar in bars:
        assert bar["h"] < 1.6 * size, (key, bar, size)  # the text line; they were ~3 lines


@pytest.mark.browser
def test_left_right_brackets_stretch_around_a_fraction(rendered):
    boxes, _ = rendered
    size = boxes["left_right"]["fontSize"]
    fences = boxes["left_right"]["fences"]
    assert len(fences) == 2 and all(f["h"] > 2 * size for f in fences)


@pytest.mark.browser
def test_operatorname_diag_meets_its_bracket(rendered):
    boxes, _ = rendered
    (name,) = boxes["prod"]["names"]
    bracket = [f for f in boxes["prod"]["fences"] if f["left"] >= name["right"] - 5][0]
    gap = bracket["left"] - name["right"]
    assert -1 <= gap <= 0.15 * boxes["prod"]["fontSize"], gap  # TeX: no space, no overlap


@pytest.mark.browser
def test_math_is_named_by_its_label_in_the_accessibility_tree(rendered):
    _, ax = rendered
    names = [n.get("name", {}).get("value") or None for n in ax["nodes"]
             if n.get("role", {}).get("value") in ("math", "MathMLMath")]
    expected = [ET.fromstring(to_mathml(tex, d)).get("aria-label") for tex, d in TRICKY.values()]
    assert names == expected and any(expected) and not all(expected)


# --- search -------------------------------------------------------------------------

def test_search_reads_formulas_as_text_with_real_scripts():
    interval, gate = to_mathml(r"(-1/\sqrt{H}, 1/\sqrt{H})"), to_mathml(r"\sigma(b_f)")
    page = f"<p>In {interval} and {gate}.</p>"
    assert mathml.search_text(page) == ("<p>In (\u22121/\u221aH, 1/\u221aH) and "
                                        "\u03c3(b<sub>f</sub>).</p>")
    assert mathml.search_text(to_mathml(r"\tilde{C}_t = f_t \odot C_{t-1}")) == (
        "C\u0303<sub>t</sub> = f<sub>t</sub> \u2299 C<sub>t\u22121</sub>")


def test_the_built_search_index_has_readable_formulas_and_the_pages_keep_mathml(site):
    import json

    docs = json.loads((site / "search" / "search_index.json").read_text("utf-8"))["docs"]
    text = " ".join(d["text"] for d in docs)
    assert "(\u22121/\u221aH, 1/\u221aH)" in text and "\u03c3(b<sub>f</sub>)" in text
    assert "(\u22121/H,1/H)" not in text and "\u03c3(bf)" not in text and "<math" not in text
    chapter = (site / "ch13-gated" / "index.html").read_text("utf-8")
    assert chapter.count("<math") > 100 and "\u03c3(b<sub>f</sub>)" not in chapter
