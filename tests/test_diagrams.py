"""generator/diagrams.py: the cell diagrams carry the chapters' real numbers, in markup that
survives Markdown, stays out of the search index, is named and described for a screen
reader in words, and is styled for both themes; in Chromium no value hides a line's
arrowhead or another value.

The numbers come from the scripts themselves (loaded by path, as the generator does);
what the diagrams must show is worked out here from the tables' own format, never
pasted."""

import re
import xml.etree.ElementTree as ET
from dataclasses import asdict
from types import SimpleNamespace

import markdown
import numpy as np
import pytest

from helpers import DOCS, load_script, open_fixture
from generator import diagrams, mathml

rnn = load_script("rnn.py")
gated = load_script("gated.py")

NS = {"s": diagrams.SVG_NS}
CSS = (DOCS / "assets" / "diagrams.css").read_text("utf-8")


def lstm_values():
    return asdict(gated.compute_lstm_step())


def gru_values():
    return {**asdict(gated.compute_gru_step()), "h_prev": gated.h_prev, "x_t": gated.x_t}


def svg_of(figure):
    """The <svg> element of a figure's markup, its formulas typeset as on the page, parsed."""
    figure = mathml.convert_page(figure)
    start, end = figure.index("<svg"), figure.index("</svg>") + len("</svg>")
    return ET.fromstring(figure[start:end])


def text(element):
    return "".join(element.itertext())


def chips(svg):
    """{data-key: (symbol as drawn, [number strings])} of the value chips."""
    out = {}
    for div in svg.iter(f"{{{diagrams.SVG_NS}}}div"):
        if "dg-chip" in div.get("class", "").split():
            maths = [e for e in div if e.tag.endswith("math")]
            vec = [e for e in div if e.get("class") == "dg-vec"]
            numbers = [text(m) for m in vec[0]] if vec else []
            out[div.get("data-key")] = (text(maths[0]), numbers)
    return out


def table_numbers(v):
    """A vector as the chapters' tables print its entries, with the typographic minus."""
    return [s.strip().replace("-", "\u2212") for s in gated.vec(v)[1:-1].split(",")]


ALL = {
    "rnn": lambda: diagrams.rnn_unrolled([asdict(step) for step in rnn.compute_unroll().steps]),
    "lstm": lambda: diagrams.lstm_cell(lstm_values()),
    "lstm-symbolic": lambda: diagrams.lstm_cell(),
    "gru": lambda: diagrams.gru_cell(gru_values(), convention="chung"),
    "gru-symbolic": lambda: diagrams.gru_cell(),
    "gru-upper": lambda: diagrams.gru_cell(letters="upper"),
    "gru-upper-values": lambda: diagrams.gru_cell(gru_values(), letters="upper"),
}


@pytest.fixture(params=sorted(ALL))
def figure(request):
    return ALL[request.param]()


# --- structure and accessibility ----------------------------------------------

def test_named_by_its_title_and_described_in_words(figure):
    svg = svg_of(figure)
    assert svg.tag == f"{{{diagrams.SVG_NS}}}svg" and svg.get("role") == "img"
    title, desc = svg.find("s:title", NS), svg.find("s:desc", NS)
    assert title is not None and 10 < len(title.text) < 80
    assert svg.get("aria-labelledby") == title.get("id")  # the name: the title alone
    assert svg.get("aria-describedby") == desc.get("id")
    assert [child.tag.split("}")[1] for child in list(svg)[:2]] == ["title", "desc"]
    assert desc.text.startswith("Diagram:")
    # read aloud: spoken notation, no TeX or script notation
    assert not re.search(r"[_^{}\\~]|C~|h~|⊙", desc.text), desc.text
    assert re.search(r" sub (t|[0-9])\b", desc.text)


def test_figure_wrapper_is_excluded_from_search(figure):
    assert figure.startswith('<figure class="diagram" id="')
    assert figure.split("\n", 1)[0].endswith(" data-search-exclude>")
    assert figure.rstrip().endswith("</figcaption>\n</figure>")


def test_markup_is_a_safe_raw_html_block(figure):
    lines = figure.split("\n")
    assert all(line.strip() for line in lines), "a blank line would end the HTML block"
    assert not any(line.startswith((" ", "\t")) for line in lines), "indented line"
    assert "$" not in figure and "<!--" not in figure  # no math or generator markers


def test_only_reference_is_the_svg_namespace(figure):
    assert set(re.findall(r"https?://[^\s\"'<>]+", figure)) == {diagrams.SVG_NS}
    assert "<script" not in figure and "href" not in figure and "@import" not in figure
    # markers are referenced within the diagram only
    ids = set(re.findall(r'\sid="([^"]+)"', figure))
    assert set(re.findall(r"url\(#([^)]+)\)", figure)) <= ids


def test_deterministic_bytes():
    for make in ALL.values():
        assert make() == make()
    v = lstm_values()
    as_lists = {k: [float(x) for x in a] for k, a in v.items()}
    as_arrays = {k: np.array(a) for k, a in as_lists.items()}
    assert diagrams.lstm_cell(v) == diagrams.lstm_cell(as_lists) == diagrams.lstm_cell(as_arrays)


def test_ids_unique_with_several_diagrams_on_a_page():
    page = "\n\n".join([
        diagrams.lstm_cell(id_prefix="lstm-a"),
        diagrams.lstm_cell(lstm_values(), id_prefix="lstm-b"),
        diagrams.gru_cell(gru_values(), id_prefix="gru-a"),
        diagrams.gru_cell(letters="upper", id_prefix="gru-b"),
        diagrams.rnn_unrolled([asdict(step) for step in rnn.compute_unroll().steps],
                              id_prefix="rnn-a"),
    ])
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == 5 * 5 and len(set(ids)) == len(ids)  # figure, title, desc, 2 markers
    for refs in re.findall(r'aria-(?:labelledby|describedby)="([^"]+)"', page):
        assert refs in ids
    with pytest.raises(ValueError):
        diagrams.lstm_cell(id_prefix="1 bad")


def test_text_stays_legible_on_a_phone():
    """At a 358-pixel column the smallest text in a diagram stays at 10 CSS pixels or more."""
    sizes = [float(px) for px in re.findall(r"font-size:\s*([\d.]+)px", CSS)]
    for make in ALL.values():
        width = float(svg_of(make()).get("viewBox").split()[2])
        assert width <= 440
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
    row = next(r for r in gated.format_lstm_table(gated.compute_lstm_step()).splitlines()
               if "forget f" in r)
    assert re.search(r"\((\S+), (\S+)\)", row).groups() == ("+0.8038", "+0.6964")
    assert shown["f"][1] == ["+0.8038", "+0.6964"]


def test_symbols_are_drawn_as_the_equations_write_them():
    shown = chips(svg_of(diagrams.lstm_cell(lstm_values())))
    assert shown["C_prev"][0] == "Ct\u22121" and shown["f"][0] == "ft"
    assert shown["C_tilde"][0] == "C\u02DCt"  # C with its tilde accent, sub t
    assert shown["kept"][0] == "ft\u2299Ct\u22121" and shown["added"][0] == "it\u2299C\u02DCt"
    upper = chips(svg_of(diagrams.gru_cell(letters="upper")))
    assert upper["h_prev"][0] == "Ht\u22121" and upper["h_tilde"][0] == "H\u02DCt"
    assert upper["z"] == ("Zt", [])


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
    assert f"C tilde sub t = {gated.vec(step['C_tilde'])}" in desc
    assert "cell state runs along the top" in desc


def test_gru_shows_every_value_of_the_step():
    v = gru_values()
    for letters in ("lower", "upper"):
        shown = chips(svg_of(diagrams.gru_cell(v, letters=letters)))
        assert set(shown) == {"z", "r", "h_tilde", "h_t", "h_prev", "x_t"}
        for key in shown:
            assert shown[key][1] == table_numbers(v[key]), (letters, key)


def test_gru_without_inputs_shows_their_symbols():
    shown = chips(svg_of(diagrams.gru_cell(asdict(gated.compute_gru_step()))))
    assert shown["h_prev"][1] == [] and shown["x_t"][1] == []
    with pytest.raises(KeyError, match="h_tilde"):
        diagrams.gru_cell({"z": [1], "r": [1], "h_t": [1]})


def test_gru_conventions_say_which_gate_keeps_the_state():
    d2l = svg_of(diagrams.gru_cell(letters="upper")).find("s:desc", NS).text
    chung = svg_of(diagrams.gru_cell(convention="chung")).find("s:desc", NS).text
    assert ("H sub t equals Z sub t, element-wise times H sub t minus 1, plus 1 minus Z sub t, "
            "element-wise times H tilde sub t") in d2l
    assert ("h sub t equals 1 minus z sub t, element-wise times h sub t minus 1, plus z sub t, "
            "element-wise times h tilde sub t") in chung
    assert "near 1 keeps the state" in diagrams.gru_cell()
    with pytest.raises(ValueError):
        diagrams.gru_cell(convention="pytorch")


def test_chapter_13_draws_the_gru_in_the_convention_of_its_numbers():
    """gated.py's GRU step satisfies one convention; chapter 13's diagram states that one
    (when the script moves to d2l's, the producer must follow)."""
    from generator.chapters import ch13_gated

    g = gated.compute_gru_step()
    z, h_prev, h_tilde, h_t = (np.array(a) for a in (g.z, gated.h_prev, g.h_tilde, g.h_t))
    keeps_z = np.allclose(h_t, z * h_prev + (1 - z) * h_tilde)
    keeps_1_minus_z = np.allclose(h_t, (1 - z) * h_prev + z * h_tilde)
    assert keeps_z != keeps_1_minus_z
    record = SimpleNamespace(h_prev=gated.h_prev, x_t=gated.x_t, C_prev=gated.C_prev,
                             gru=SimpleNamespace(plain=lambda: asdict(g)))
    figure = ch13_gated.gru_step(SimpleNamespace(record=lambda flag: record))
    assert ("z sub t near 1 keeps" in figure.replace("<em>", "").replace("</em>", "")
            .replace("<sub>", " sub ").replace("</sub>", "")) == keeps_z


def test_rnn_shows_every_state_and_embedding():
    steps = [asdict(step) for step in rnn.compute_unroll().steps]
    figure = diagrams.rnn_unrolled(steps)
    shown = chips(svg_of(figure))
    assert shown["h0"][1] == ["+0.0000", "+0.0000"]
    for s in steps:
        t = s["t"]
        assert shown[f"h{t}"] == (f"h{t}", table_numbers(s["h"]))
        assert shown[f"x{t}"] == (f"x{t}", table_numbers(s["x"]))
    row = rnn.format_unroll_table(rnn.compute_unroll()).splitlines()[2]
    assert row.split("|")[5].strip() == "(+0.3885, -0.0500)"
    assert shown["h1"][1] == ["+0.3885", "\u22120.0500"]
    words = re.findall(r'<code class="dg-word">([^<]*)</code>', figure)
    assert words == [w for s in steps for w in (s["next"], s["word"])]
    assert mathml.convert_page(figure).count("<mi>W</mi><mo>,</mo><mi>U</mi>") == 3  # one W, U


def test_numbers_format():
    assert diagrams.fmt(0.41) == "+0.4100" and diagrams.fmt(-0.05) == "\u22120.0500"
    assert diagrams.fmt_vec(np.array([0.41, -0.05])) == "(+0.4100, -0.0500)"
    assert diagrams.fmt_vec([0.41, -0.05]) == gated.vec([0.41, -0.05])


# --- in a page ------------------------------------------------------------------------

def render_page(block):
    text_ = f"# Page\n\nBefore the figure.\n\n{block}\n\nAfter the figure.\n"
    return markdown.markdown(text_, extensions=["md_in_html", "attr_list", "tables", "toc"])


def test_survives_python_markdown(figure):
    html = render_page(figure)
    start = html.index("<figure")
    end = html.index("</figure>") + len("</figure>")
    assert html[start:end] == figure  # passed through untouched
    assert html.count("<svg") == 1 and "<pre>" not in html


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
    used -= {"diagram", "arithmatex"}  # the math hook replaces the latter with MathML
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


# --- in Chromium -------------------------------------------------------------------

LAYOUT_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const out = {};
  for (const fig of document.querySelectorAll('figure.diagram')) {
    const svg = fig.querySelector('svg');
    const m = svg.getScreenCTM();
    const tips = [...svg.querySelectorAll('path[marker-end]')].map((p) => {
      const pt = p.getPointAtLength(p.getTotalLength());
      return {x: m.a * pt.x + m.c * pt.y + m.e, y: m.b * pt.x + m.d * pt.y + m.f,
              d: p.getAttribute('d')}; });
    out[fig.id] = {svg: box(svg), tips,
      chips: [...svg.querySelectorAll('.dg-chip')].map((e) => ({key: e.dataset.key, ...box(e)})),
      gates: [...svg.querySelectorAll('.dg-gate')].map(box),
      labels: [...svg.querySelectorAll('.dg-gate span, text')].map(box)};
  }
  return out;
}"""


@pytest.fixture(scope="module")
def laid_out(browser):
    from helpers import FONT

    body = "\n".join(mathml.convert_page(make()) for make in (
        lambda: diagrams.rnn_unrolled([asdict(s) for s in rnn.compute_unroll().steps]),
        lambda: diagrams.lstm_cell(id_prefix="lstm-symbols"),
        lambda: diagrams.lstm_cell(lstm_values(), id_prefix="lstm-step"),
        lambda: diagrams.gru_cell(gru_values(), id_prefix="gru-step"),
        lambda: diagrams.gru_cell(gru_values(), convention="chung", id_prefix="gru-chung"),
        lambda: diagrams.gru_cell(letters="upper", id_prefix="gru-upper")))
    html = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>D</title>'
            f'<style>@font-face {{ font-family: "STIX Two Math"; src: url("/font.woff2"); }}'
            f'.md-typeset math {{ font-family: "STIX Two Math", math; }} {CSS}</style></head>'
            f'<body class="md-typeset" style="width:34rem;font:16px sans-serif">{body}</body></html>')
    page = open_fixture(browser, html, FONT.read_bytes())
    data = page.evaluate(LAYOUT_JS)
    page.close()
    return data


def inside(point, rect, margin=1.0):
    return (rect["left"] + margin < point["x"] < rect["right"] - margin
            and rect["top"] + margin < point["y"] < rect["bottom"] - margin)


def overlap(a, b):
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1)


@pytest.mark.browser
def test_no_value_hides_an_arrowhead_or_another_value(laid_out):
    """Issue 17.3: the i_t * C~_t chip jammed under the sum hid its arrow; arrowheads
    under the sigma boxes touched their labels. Every arrow's tip is in the open (not
    under a chip or a label), and no two chips or boxes overlap."""
    assert len(laid_out) == 6
    for fig, d in laid_out.items():
        assert d["tips"] and d["chips"]
        for tip in d["tips"]:
            for rect in d["chips"] + d["labels"]:
                assert not inside(tip, rect), (fig, tip, rect)
        boxes = d["chips"] + d["gates"]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not overlap(a, b), (fig, a, b)
            assert d["svg"]["left"] - 1 <= a["left"] and a["right"] <= d["svg"]["right"] + 1, (fig, a)


@pytest.mark.browser
def test_the_sum_on_the_cell_path_shows_the_arrow_into_it(laid_out):
    d = laid_out["lstm-step"]
    added = next(c for c in d["chips"] if c["key"] == "added")
    tip = next(t for t in d["tips"] if t["d"] == "M250 161V55")  # i * C~ up into the sum
    scale = (d["svg"]["right"] - d["svg"]["left"]) / 440
    assert added["top"] - tip["y"] >= 12 * scale  # a visible stretch of line and its head
