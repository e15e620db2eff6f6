"""generator/diagrams.py: the cell diagrams carry the chapters' real numbers, in markup that
survives Markdown, stays out of the search index and is styled for both themes.

The numbers come from the scripts themselves (loaded by path, as the generator
does); what the diagrams must show is worked out here from the tables' own
format, never pasted."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import markdown
import numpy as np
import pytest

from dataclasses import asdict

from helpers import DOCS, load_script
from generator import diagrams

rnn = load_script("rnn.py")
gated = load_script("gated.py")

NS = {"s": diagrams.SVG_NS}
CSS = (DOCS / "assets" / "diagrams.css").read_text("utf-8")

# The page's MathML shows single-letter identifiers in mathematical italic.
IT = {c: diagrams._italic(c) for c in "CfiohxqzrHRZXWUVyt"}
SIGMA = "\U0001D70E"


def lstm_values():
    return asdict(gated.compute_lstm_step())


def gru_values():
    return {**asdict(gated.compute_gru_step()), "h_prev": gated.h_prev, "x_t": gated.x_t}


def svg_of(figure):
    """The <svg> element of a figure's markup, parsed as XML."""
    start, end = figure.index("<svg"), figure.index("</svg>") + len("</svg>")
    return ET.fromstring(figure[start:end])


def texts(svg):
    """Every <text> element's content, tspans joined."""
    return ["".join(t.itertext()) for t in svg.iter(f"{{{diagrams.SVG_NS}}}text")]


def chips(svg):
    """{data-key: (header, [number strings])} of the value chips."""
    out = {}
    for g in svg.iterfind(".//s:g[@class='dg-chip-g']", NS):
        items = ["".join(t.itertext()) for t in g.iterfind("s:text", NS)]
        out[g.get("data-key")] = (items[0], items[1:])
    return out


def table_numbers(v):
    """A vector as the chapters' tables print its entries, with the typographic minus."""
    return [s.strip().replace("-", "\u2212") for s in gated.vec(v)[1:-1].split(",")]


ALL = {
    "rnn": lambda: diagrams.rnn_unrolled([asdict(step) for step in rnn.compute_unroll()]),
    "lstm": lambda: diagrams.lstm_cell(lstm_values()),
    "lstm-symbolic": lambda: diagrams.lstm_cell(),
    "gru": lambda: diagrams.gru_cell(gru_values()),
    "gru-symbolic": lambda: diagrams.gru_cell(),
    "gru-d2l": lambda: diagrams.gru_cell(notation="d2l"),
    "gru-d2l-values": lambda: diagrams.gru_cell(gru_values(), notation="d2l"),
}


@pytest.fixture(params=sorted(ALL))
def figure(request):
    return ALL[request.param]()


# --- structure and accessibility ----------------------------------------------

def test_svg_parses_and_is_labelled(figure):
    svg = svg_of(figure)
    assert svg.tag == f"{{{diagrams.SVG_NS}}}svg"
    assert svg.get("role") == "img"
    title, desc = svg.find("s:title", NS), svg.find("s:desc", NS)
    assert title is not None and title.text.strip()
    assert desc is not None and desc.text.startswith("Diagram:")
    assert svg.get("aria-labelledby").split() == [title.get("id"), desc.get("id")]
    # the title and the description come first, as screen readers expect
    assert [child.tag.split("}")[1] for child in list(svg)[:2]] == ["title", "desc"]


def test_figure_wrapper_is_excluded_from_search(figure):
    assert figure.startswith('<figure class="diagram" id="')
    first = figure.split("\n", 1)[0]
    assert first.endswith(" data-search-exclude>")
    assert figure.rstrip().endswith("</figcaption>\n</figure>")


def test_markup_is_a_safe_raw_html_block(figure):
    lines = figure.split("\n")
    assert all(line.strip() for line in lines), "a blank line would end the HTML block"
    assert not any(line.startswith((" ", "\t")) for line in lines), "indented line"
    assert "$" not in figure and "<!--" not in figure  # no math or generator markers


def test_only_reference_is_the_svg_namespace(figure):
    assert set(re.findall(r"https?://[^\s\"'<>]+", figure)) == {diagrams.SVG_NS}
    assert "<script" not in figure and "href" not in figure and "@import" not in figure


def test_deterministic_bytes():
    for make in ALL.values():
        assert make() == make()
    # numpy arrays, lists and tuples of the same numbers give the same bytes
    v = lstm_values()
    as_lists = {k: [float(x) for x in a] for k, a in v.items()}
    as_tuples = {k: tuple(a) for k, a in as_lists.items()}
    assert diagrams.lstm_cell(v) == diagrams.lstm_cell(as_lists) == diagrams.lstm_cell(as_tuples)


def test_ids_unique_with_several_diagrams_on_a_page():
    page = "\n\n".join([
        diagrams.lstm_cell(id_prefix="lstm-a"),
        diagrams.lstm_cell(lstm_values(), id_prefix="lstm-b"),
        diagrams.gru_cell(gru_values(), id_prefix="gru-a"),
        diagrams.gru_cell(notation="d2l", id_prefix="gru-b"),
        diagrams.rnn_unrolled([asdict(step) for step in rnn.compute_unroll()], id_prefix="rnn-a"),
    ])
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == 15 and len(set(ids)) == len(ids)
    for refs in re.findall(r'aria-labelledby="([^"]+)"', page):
        assert all(ref in ids for ref in refs.split())
    with pytest.raises(ValueError):
        diagrams.lstm_cell(id_prefix="1 bad")


def test_fits_a_phone():
    """At a 358-pixel column the smallest text must stay at 10 CSS pixels or more."""
    for make in ALL.values():
        svg = svg_of(make())
        width = float(svg.get("viewBox").split()[2])
        assert width <= 440
        sizes = [float(e.get("font-size")) for e in svg.iter() if e.get("font-size")]
        assert min(sizes) * 358 / width >= 10.0


# --- the numbers ----------------------------------------------------------------

def test_lstm_shows_every_value_of_the_step():
    step = lstm_values()
    shown = chips(svg_of(diagrams.lstm_cell(step)))
    expected = {"f": step["f"], "i": step["i"], "C_tilde": step["C_tilde"], "o": step["o"],
                "kept": step["kept"], "added": step["added"], "C_t": step["C_t"],
                "h_t": step["h_t"], "h_prev": gated.h_prev, "x_t": gated.x_t,
                "C_prev": gated.C_prev}
    assert set(shown) == set(expected)
    for key, v in expected.items():
        assert shown[key][1] == table_numbers(v), key
    # the forget gate's numbers exactly as the table prints them
    row = next(r for r in gated.format_lstm_table(gated.compute_lstm_step()).splitlines() if "forget f" in r)
    assert re.search(r"\((\S+), (\S+)\)", row).groups() == ("+0.8038", "+0.6964")
    assert shown["f"][1] == ["+0.8038", "+0.6964"]


def test_lstm_headers_name_what_they_carry():
    shown = chips(svg_of(diagrams.lstm_cell(lstm_values())))
    C, f, i, o, h, t = (IT[c] for c in "Cfioht")
    assert shown["f"][0] == f + t and shown["o"][0] == o + t
    assert shown["C_tilde"][0] == C + t  # the tilde is drawn, not typed
    assert shown["C_prev"][0] == f"{C}{t}\u22121"
    assert shown["kept"][0] == f"{f}{t}⊙{C}{t}\u22121"
    assert shown["added"][0] == f"{i}{t}⊙{C}{t}"
    assert shown["h_prev"][0] == f"{h}{t}\u22121"


def test_lstm_inputs_from_q_or_given():
    """h_{t-1} and x_t are read off q when not given, C_{t-1} from kept / f."""
    step = lstm_values()
    given = {**step, "h_prev": gated.h_prev, "x_t": gated.x_t, "C_prev": gated.C_prev}
    assert diagrams.lstm_cell(step) == diagrams.lstm_cell(given)


def test_lstm_description_repeats_the_numbers_in_table_form():
    step = lstm_values()
    desc = svg_of(diagrams.lstm_cell(step)).find("s:desc", NS).text
    for key in ("f", "i", "C_tilde", "o", "kept", "added", "C_t", "h_t"):
        assert gated.vec(step[key]) in desc
    assert "cell state runs along the top" in desc


def test_gru_shows_every_value_of_the_step():
    v = gru_values()
    for notation in ("ch13", "d2l"):
        shown = chips(svg_of(diagrams.gru_cell(v, notation=notation)))
        assert set(shown) == {"z", "r", "h_tilde", "h_t", "h_prev", "x_t"}
        for key in shown:
            assert shown[key][1] == table_numbers(v[key]), (notation, key)
    row = next(r for r in gated.format_gru_table(gated.compute_gru_step()).splitlines() if "update z" in r)
    assert shown["z"][1] == table_numbers(v["z"]) and "+0.6011" in row


def test_gru_without_inputs_shows_their_symbols():
    shown = chips(svg_of(diagrams.gru_cell(asdict(gated.compute_gru_step()))))
    assert shown["h_prev"][1] == [] and shown["x_t"][1] == []
    assert shown["z"][1] == table_numbers(asdict(gated.compute_gru_step())["z"])


def test_rnn_shows_every_state_and_embedding():
    steps = [asdict(step) for step in rnn.compute_unroll()]
    svg = svg_of(diagrams.rnn_unrolled(steps))
    shown = chips(svg)
    assert shown["h_0"][1] == ["+0.0000", "+0.0000"]
    for s in steps:
        t = s["t"]
        assert shown[f"h_{t}"][1] == table_numbers(s["h"])
        assert shown[f"x_{t}"][1] == table_numbers(s["x"])
        assert shown[f"h_{t}"][0] == IT["h"] + str(t)
    # the unroll table's h_1 is the diagram's h_1
    row = rnn.format_unroll_table(rnn.compute_unroll()).splitlines()[2]
    assert row.split("|")[5].strip() == "(+0.3885, -0.0500)"
    assert shown["h_1"][1] == ["+0.3885", "\u22120.0500"]
    words = texts(svg)
    for s in steps:
        assert words.count(s["word"]) >= 1 and s["next"] in words
    # one set of weights: the same label in every cell
    assert words.count(f"{IT['W']},{IT['U']}") == 3  # the space is a gap, not a character and words.count(IT["V"]) == 3


# --- the symbols --------------------------------------------------------------------

def test_lstm_symbols_are_those_of_the_equations():
    for values in (None, lstm_values()):
        figure = diagrams.lstm_cell(values)
        svg = svg_of(figure)
        text = "".join(texts(svg))
        for sym in ("C", "f", "i", "o", "h", "x", "q", "t"):
            assert IT[sym] in text, sym
        assert SIGMA in text and "tanh" in text and "⊙" in text
        # one drawn tilde per C~: on the candidate's chip and on i_t ⊙ C~_t
        assert len(svg.findall(".//s:path[@class='dg-tilde']", NS)) == 2
        # subscripts are smaller tspans set below the baseline
        subs = [ts for ts in svg.iter(f"{{{diagrams.SVG_NS}}}tspan") if ts.get("font-size")]
        assert subs and all(float(ts.get("font-size")) < diagrams.MATH_SIZE for ts in subs
                            if ts.text and IT["t"] in ts.text)
        # sigma three times, tanh twice: the four layers and tanh(C_t)
        assert text.count(SIGMA) == 3 and text.count("tanh") == 2


def test_tilde_sits_over_its_letter():
    svg = svg_of(diagrams.lstm_cell(lstm_values()))
    g = next(g for g in svg.iterfind(".//s:g[@class='dg-chip-g']", NS)
             if g.get("data-key") == "C_tilde")
    span = g.find("s:text/s:tspan", NS)
    assert span.text == IT["C"]
    x0 = float(span.get("x"))
    x1 = x0 + diagrams._advance(IT["C"], diagrams.MATH_SIZE)
    d = g.find("s:path[@class='dg-tilde']", NS).get("d")
    xs = [float(n) for n in re.findall(r"-?[\d.]+", d)[0::2]]
    assert x0 <= min(xs) and max(xs) <= x1 + 2
    ys = [float(n) for n in re.findall(r"-?[\d.]+", d)[1::2]]
    assert max(ys) < float(span.get("y")) - 0.6 * diagrams.MATH_SIZE  # above the cap height


def test_gru_notations():
    ch13 = "".join(texts(svg_of(diagrams.gru_cell())))
    d2l = "".join(texts(svg_of(diagrams.gru_cell(notation="d2l"))))
    for sym in ("z", "r", "h", "x"):
        assert IT[sym] in ch13 and IT[sym] not in d2l.replace("tanh", ""), sym
    for sym in ("Z", "R", "H", "X"):
        assert IT[sym] in d2l and IT[sym] not in ch13, sym
    for text in (ch13, d2l):
        assert SIGMA in text and "tanh" in text and "1\u2212" in text.replace(" ", "")
    # where the "1 -" sits: on the kept path in chapter 13, on the candidate's in d2l
    desc13 = svg_of(diagrams.gru_cell()).find("s:desc", NS).text
    descd2l = svg_of(diagrams.gru_cell(notation="d2l")).find("s:desc", NS).text
    assert "h_t = (1 - z_t) ⊙ h_{t-1} + z_t ⊙ h~_t" in desc13
    assert "H_t = Z_t ⊙ H_{t-1} + (1 - Z_t) ⊙ H~_t" in descd2l
    with pytest.raises(ValueError):
        diagrams.gru_cell(notation="pytorch")


def test_numbers_format():
    assert diagrams.fmt(0.41) == "+0.4100" and diagrams.fmt(-0.05) == "\u22120.0500"
    assert diagrams.fmt_vec(np.array([0.41, -0.05])) == "(+0.4100, -0.0500)"
    assert diagrams.fmt_vec([0.41, -0.05]) == gated.vec([0.41, -0.05])


# --- in a page ------------------------------------------------------------------------

def render_page(block):
    text = f"# Page\n\nBefore the figure.\n\n{block}\n\nAfter the figure.\n"
    return markdown.markdown(text, extensions=["md_in_html", "attr_list", "tables", "toc"])


def test_survives_python_markdown(figure):
    html = render_page(figure)
    start = html.index("<figure")
    end = html.index("</figure>") + len("</figure>")
    assert html[start:end] == figure  # passed through untouched
    assert html.count("<svg") == 1 and "<pre>" not in html and "<code>" not in html


def test_search_index_skips_the_figure():
    from material.plugins.search.plugin import Parser

    parser = Parser()
    parser.feed(render_page(diagrams.lstm_cell(lstm_values())))
    parser.close()
    indexed = " ".join("".join(s.text) for s in parser.data if not s.is_excluded())
    assert "Before the figure." in indexed and "After the figure." in indexed
    assert "Diagram" not in indexed and "0.8038" not in indexed and "⊙" not in indexed


def test_every_class_is_styled_for_both_themes_and_print():
    used = set()
    for make in ALL.values():
        for cls in re.findall(r'class="([^"]+)"', make()):
            used.update(cls.split())
    used -= {"diagram", "dg-chip-g"}  # the chip's group only marks it for these tests
    missing = [c for c in sorted(used) if not re.search(rf"\.{re.escape(c)}\b", CSS)]
    assert not missing, f"diagrams.css has no rule for {missing}"
    assert '[data-md-color-scheme="slate"] .dg' in CSS
    assert "prefers-color-scheme" not in CSS  # the toggle decides, not the OS
    print_rules = CSS[CSS.index("@media print"):]
    assert "--dg-fg: #000" in print_rules and "--dg-bg: #fff" in print_rules
    for var in ("--md-default-fg-color", "--md-default-bg-color", "--md-code-bg-color"):
        assert f"var({var}" in CSS


def test_css_has_no_external_reference():
    assert "url(" not in CSS and "http" not in CSS and "@import" not in CSS


def test_preview_tool_is_not_collected():
    assert not Path(__file__).with_name("diagram_preview.py").name.startswith("test_")
